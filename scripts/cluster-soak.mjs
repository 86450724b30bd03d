#!/usr/bin/env node
/**
 * The cluster's fault scenarios run many times:
 * `node scripts/cluster-soak.mjs [--runs 10] [--files a,b] [--out FILE]`.
 *
 * Each run is one `vitest run` of the scenario files (every file of FILES, or those `--files` names: paths or
 * file names), in a fresh process, with `SOAK_LEDGER` naming a file the scenarios append what their checker
 * found to (test/cluster/support/soak-ledger.ts). Prints a table per scenario: runs, the acknowledged
 * batches, the acknowledged records lost and the phantom records (at worst over the runs), the nodes
 * diverged and left stopped (at worst), and the recovery time (median and worst); and writes it to --out
 * (default bench/results/cluster-soak.md), keeping the rows of the scenarios this soak did not run from the
 * table already there, each row naming the soak it comes from (scripts/cluster-soak-table.mjs). Every
 * process a scenario starts is its own (NATS servers on loopback, stopped by PID): nothing else is touched.
 * Not part of `npm test`: a soak is long on purpose.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { basename, join } from 'node:path'
import { parseArgs } from 'node:util'
import { mergeSoak, renderSoakTable, rowsOfLedger } from './cluster-soak-table.mjs'

/** The scenario files; each run of a file runs every scenario in it once. */
const FILES = [
  'test/cluster/nats-tail-loss.test.ts',
  'test/cluster/faults-nats.test.ts',
  'test/cluster/faults-nats-kill.test.ts',
  'test/cluster/faults-nodes.test.ts',
  'test/cluster/faults-partition.test.ts',
  'test/cluster/serve-rebuild.test.ts',
  'test/cluster/snapshots.test.ts',
  'test/cluster/nats-security.test.ts',
]

const { values } = parseArgs({ options: { runs: { type: 'string' }, files: { type: 'string' }, out: { type: 'string' } } })
const runs = Number(values.runs ?? 10)
if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`--runs takes a whole number of runs (got ${values.runs})`)
const files = values.files === undefined ? FILES : values.files.split(',').map((given) => {
  const found = FILES.find((file) => file === given || basename(file) === given || basename(file, '.test.ts') === given)
  if (found === undefined) throw new Error(`--files: ${given} is not a scenario file (${FILES.join(', ')})`)
  return found
})
const out = values.out ?? 'bench/results/cluster-soak.md'
const dir = mkdtempSync(join(tmpdir(), 'price-store-soak-'))
const ledger = join(dir, 'ledger.ndjson')
const started = { load: loadavg()[0].toFixed(2), at: new Date().toISOString() }
const failures = []
/** Where failed runs' output stays after the soak (the ledger's folder is removed). */
const keep = join(tmpdir(), `price-store-soak-failures-${process.pid}`)
mkdirSync(keep, { recursive: true })

try {
  for (let run = 1; run <= runs; run++) {
    // One file at a time: a run measures its scenarios, not the load of the files beside it.
    const result = spawnSync('npx', ['vitest', 'run', '--maxWorkers=1', ...files], { env: { ...process.env, SOAK_LEDGER: ledger }, encoding: 'utf8' })
    const passed = result.status === 0
    if (!passed) {
      const output = `${result.stdout}\n${result.stderr}`
      // The whole output of a failed run is kept: the lines before the failure (a node retrying, a resend) explain it.
      const log = join(keep, `run-${run}.log`)
      writeFileSync(log, output)
      failures.push({ run, output: output.split('\n').filter((line) => /FAIL|Error|expected/.test(line)).slice(0, 10).join('\n') })
      process.stderr.write(`run ${run}/${runs}: FAILED (whole output in ${log})\n`)
    } else {
      process.stderr.write(`run ${run}/${runs}: passed\n`)
    }
  }
  const lines = existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line)) : []
  const soak = {
    id: started.at,
    description: `\`node scripts/cluster-soak.mjs --runs ${runs}${values.files === undefined ? '' : ` --files ${values.files}`}\`: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, load average ${started.load} at the start, Node ${process.version}, ${natsVersion()}. Runs of ${files.join(', ')}: ${runs}, of which ${runs - failures.length} passed.`,
    failures,
  }
  const rows = rowsOfLedger(lines, soak.id)
  process.stdout.write(renderSoakTable([soak], rows))
  writeFileSync(out, mergeSoak(existsSync(out) ? readFileSync(out, 'utf8') : '', soak, rows))
  process.stderr.write(`written to ${out}\n`)
  if (failures.length > 0) process.exitCode = 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}

function natsVersion() {
  const found = spawnSync('/usr/sbin/nats-server', ['--version'], { encoding: 'utf8' })
  return found.status === 0 ? found.stdout.trim() : 'nats-server not found'
}
