/** The soak table keeps the rows of the scenarios a soak did not run, with the soak each row comes from. */
import { describe, expect, it } from 'vitest'
import { mergeSoak, readSoakTable, rowsOfLedger, type LedgerLine } from '../../scripts/cluster-soak-table.mjs'

const run = (scenario: string, recoveryMs: number, stopped = 0): LedgerLine => ({ scenario, acknowledged: 10, lost: 0, phantom: 0, diverged: 0, stopped, recoveryMs })

/** The table as the script wrote it before rows named their soak. */
const LEGACY = `# Cluster soak

\`node scripts/cluster-soak.mjs --runs 10\`, 2026-01-01T00:00:00.000Z: 2 cores (AMD EPYC), 24 GiB, load average 0.02 at the start, Node v20.20.2, nats-server: v2.9.10.
Runs of test/cluster/nats-tail-loss.test.ts: 10, of which 10 passed.

| scenario | runs | acknowledged batches | lost records (worst) | phantom records (worst) | nodes diverged (worst) | nodes left stopped (worst) | recovery ms (median / worst) |
|---|--:|--:|--:|--:|--:|--:|--:|
| tail lost | 10 | 70 | 0 | 0 | 0 | 0 | 1645 / 1764 |
| tail taken | 10 | 40 | 0 | 0 | 0 | 2 | 20 / 40 |
`

describe('the cluster soak table', () => {
  it('sums a scenario\'s runs: worst counts, median and worst recovery of the runs that took a write again', () => {
    const rows = rowsOfLedger([run('kill', 300, 1), run('kill', 100), run('kill', -1), run('cut', 50)], 'S')
    expect(rows).toEqual([
      { scenario: 'kill', cells: ['3', '30', '0', '0', '0', '1', '100 / 300 (1 runs: none)'], soak: 'S' },
      { scenario: 'cut', cells: ['1', '10', '0', '0', '0', '0', '50 / 50'], soak: 'S' },
    ])
  })

  it('replaces the rows of the scenarios run, keeps the others with their soak, and lists only the soaks rows come from', () => {
    const first = mergeSoak(LEGACY, { id: 'A', description: 'soak A', failures: [{ run: 2, output: 'FAIL one\nexpected two' }] }, rowsOfLedger([run('tail lost', 5), run('kill', 7)], 'A'))
    const read = readSoakTable(first)
    expect(read.rows.map((row) => [row.scenario, row.soak])).toEqual([['tail lost', 'A'], ['kill', 'A'], ['tail taken', '2026-01-01T00:00:00.000Z']])
    expect(read.rows[2]!.cells).toEqual(['10', '40', '0', '0', '0', '2', '20 / 40'])
    expect([...read.soaks.keys()]).toEqual(['A', '2026-01-01T00:00:00.000Z'])
    expect(read.soaks.get('2026-01-01T00:00:00.000Z')!.description).toMatch(/--runs 10.*Runs of test\/cluster\/nats-tail-loss\.test\.ts: 10, of which 10 passed\.$/)
    expect(read.soaks.get('A')!.failures).toEqual([{ run: 2, output: 'FAIL one\nexpected two' }])

    const second = readSoakTable(mergeSoak(first, { id: 'B', description: 'soak B', failures: [] }, rowsOfLedger([run('tail taken', 9)], 'B')))
    expect(second.rows.map((row) => [row.scenario, row.soak])).toEqual([['tail taken', 'B'], ['tail lost', 'A'], ['kill', 'A']])
    expect([...second.soaks.keys()]).toEqual(['B', 'A'])
    expect(second.soaks.get('A')!.failures).toHaveLength(1)
  })
})
