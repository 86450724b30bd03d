#!/usr/bin/env node
/**
 * The cluster's fault scenarios run many times:
 * `node scripts/cluster-soak.mjs [--runs 10] [--out FILE]`.
 *
 * Each run is one `vitest run` of the scenario files below, in a fresh process, with
 * `SOAK_LEDGER` naming a file the scenarios append what their checker found to
 * (test/cluster/support/soak-ledger.ts). Prints a table per scenario: runs, passed, the
 * acknowledged batches, the acknowledged records lost and the phantom records (at worst over
 * the runs), the nodes diverged and left stopped (at worst), and the recovery time (median and
 * worst); and writes it to --out (default bench/results/cluster-soak.md). Every process a
 * scenario starts is its own (NATS servers on loopback, stopped by PID): nothing else is touched.
 * Not part of `npm test`: a soak is long on purpose.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

/** The scenario files; each run of a file runs every scenario in it once. */
const FILES = ['test/cluster/nats-tail-loss.test.ts']

const { values } = parseArgs({ options: { runs: { type: 'string' }, out: { type: 'string' } } })
const runs = Number(values.runs ?? 10)
if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`--runs takes a whole number of runs (got ${values.runs})`)
const out = values.out ?? 'bench/results/cluster-soak.md'
const dir = mkdtempSync(join(tmpdir(), 'price-store-soak-'))
const ledger = join(dir, 'ledger.ndjson')
const started = { load: loadavg()[0].toFixed(2), at: new Date().toISOString() }
const failures = []

try {
  for (let run = 1; run <= runs; run++) {
    const result = spawnSync('npx', ['vitest', 'run', ...FILES], { env: { ...process.env, SOAK_LEDGER: ledger }, encoding: 'utf8' })
    const passed = result.status === 0
    if (!passed) failures.push({ run, output: `${result.stdout}\n${result.stderr}`.split('\n').filter((line) => /FAIL|Error|expected/.test(line)).slice(0, 10).join('\n') })
    process.stderr.write(`run ${run}/${runs}: ${passed ? 'passed' : 'FAILED'}\n`)
  }
  const lines = existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line)) : []
  const table = render(lines)
  process.stdout.write(`${table}\n`)
  writeFileSync(out, table + '\n')
  process.stderr.write(`written to ${out}\n`)
  if (failures.length > 0) process.exitCode = 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}

function render(rows) {
  const byScenario = new Map()
  for (const row of rows) {
    const list = byScenario.get(row.scenario) ?? []
    list.push(row)
    byScenario.set(row.scenario, list)
  }
  const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor((numbers.length - 1) / 2)]
  const out = [
    '# Cluster soak',
    '',
    `\`node scripts/cluster-soak.mjs --runs ${runs}\`, ${started.at}: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, load average ${started.load} at the start, Node ${process.version}, ${natsVersion()}.`,
    `Runs of ${FILES.join(', ')}: ${runs}, of which ${runs - failures.length} passed.`,
    '',
    '| scenario | runs | acknowledged batches | lost records (worst) | phantom records (worst) | nodes diverged (worst) | nodes left stopped (worst) | recovery ms (median / worst) |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ]
  for (const [scenario, list] of byScenario) {
    const worst = (key) => Math.max(...list.map((row) => row[key]))
    const recovery = list.map((row) => row.recoveryMs)
    out.push(`| ${scenario} | ${list.length} | ${list.reduce((sum, row) => sum + row.acknowledged, 0)} | ${worst('lost')} | ${worst('phantom')} | ${worst('diverged')} | ${worst('stopped')} | ${median(recovery)} / ${Math.max(...recovery)} |`)
  }
  for (const { run, output } of failures) out.push('', `Run ${run} failed:`, '```', output, '```')
  return out.join('\n')
}

function natsVersion() {
  const found = spawnSync('/usr/sbin/nats-server', ['--version'], { encoding: 'utf8' })
  return found.status === 0 ? found.stdout.trim() : 'nats-server not found'
}
