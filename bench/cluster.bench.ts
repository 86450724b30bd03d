/**
 * The cluster benchmark of issue 21:
 * `cd bench && node --import tsx cluster.bench.ts [--quick] [--json FILE] [--out FILE]`.
 *
 * 1. Writes: putMany in-process, POST /prices on a plain serve process, and
 *    through NATS JetStream: R1 on one server and R3 on three, with nodes in
 *    this process (ClusterNode) and as `serve --nats` processes; batches of
 *    1,000 and 10,000 records; p50/p99 time to applied on every node
 *    (cluster-writes.ts).
 * 2. Catch-up of a new node against putMany and `price-store import` of the
 *    same records (cluster-catchup.ts).
 * 3. Reads on 1, 2 and 3 caught-up `serve --nats` nodes (cluster-reads.ts).
 *
 * Prints the tables on stdout (progress on stderr) and writes them to
 * results/issue21-cluster.md (or --out; a --quick run writes only to --out),
 * and the raw results to --json FILE. `--only writes,catch-up,reads` runs a part. Every NATS server and node
 * process it starts is stopped by PID, and its temporary folder removed.
 * Measure on a quiet machine: the run notes the load average it started with.
 */
import { rmSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { runCatchUp, type CatchUpResult } from './cluster-catchup.js'
import { deleteStream, natsServerPath, startNatsCluster, type NatsCluster } from './cluster-nats.js'
import type { ServeNode } from './cluster-procs.js'
import { READ_CONNECTIONS, forkLoadClient, readQueries, runReads, type ReadCaseResult } from './cluster-reads.js'
import { renderClusterMarkdown, type ClusterBenchResults } from './cluster-report.js'
import { caseName, runWriteCase, type BatchSet, type WriteCaseResult, type WriteCaseSpec, type WriteTarget } from './cluster-writes.js'
import { DEFAULT_SEED, generateBatches, type GeneratedRecord } from './generate.js'
import { BENCH_DIR } from './load.js'
import { streamShape } from './write-workloads.js'
import { sourceRevision } from './source-revision.js'
import { natsVersion, otherBusyProcesses } from './machine-state.js'

const BATCH_SIZES = [1_000, 10_000] as const

interface Sizes {
  readonly writeRecords: number
  readonly catchUpRecords: number
  readonly catchUpBatch: number
  readonly readSeconds: number
  readonly readRounds: number
}
const FULL: Sizes = { writeRecords: 200_000, catchUpRecords: 200_000, catchUpBatch: 1_000, readSeconds: 3, readRounds: 3 }
const QUICK: Sizes = { writeRecords: 20_000, catchUpRecords: 20_000, catchUpBatch: 1_000, readSeconds: 0.5, readRounds: 2 }

const log = (text: string): void => void process.stderr.write(`${text}\n`)

/** The records of `records` (time-major, 100 symbols), cut into batches of each size; the same records for every size. */
function batchSets(records: number, sizes: readonly number[]): BatchSet[] {
  const all: GeneratedRecord[] = []
  for (const batch of generateBatches(streamShape(records), 10_000, DEFAULT_SEED)) all.push(...batch)
  return sizes.map((batchSize) => {
    const batches: GeneratedRecord[][] = []
    for (let i = 0; i < all.length; i += batchSize) batches.push(all.slice(i, i + batchSize))
    return { batchSize, batches, records: all.length }
  })
}


async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      out: { type: 'string' },
      only: { type: 'string' },
    },
  })
  const quick = values.quick === true
  const sizes = quick ? QUICK : FULL
  const only = new Set((values.only ?? 'writes,catch-up,reads').split(',').map((s) => s.trim()))
  const binary = natsServerPath()
  if (binary === undefined) throw new Error('nats-server not found on PATH nor at /usr/sbin/nats-server (install Debian\'s nats-server)')
  const started = Date.now()
  const [load1, load5] = loadavg()
  const busyProcesses = otherBusyProcesses('cluster.bench.ts')
  const quiet = (load1 ?? Infinity) < 0.5 && busyProcesses === 'none seen'
  const cpu = cpus()

  const scratch = await mkdtemp(join(tmpdir(), 'price-store-cluster-bench-'))
  const writes: WriteCaseResult[] = []
  const reads: ReadCaseResult[] = []
  let catchUp: CatchUpResult | undefined
  // Ctrl-C: the exit hooks (cluster-procs.ts, the NATS harness's watchdog) stop what runs; the folder goes too.
  const onSignal = (): void => process.exit(130)
  const removeScratch = (): void => rmSync(scratch, { recursive: true, force: true })
  process.once('exit', removeScratch)
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  let caseNumber = 0
  try {
    let sets: BatchSet[] = []
    if (only.has('writes')) {
      log(`generating ${sizes.writeRecords.toLocaleString('en-US')} records ...`)
      sets = batchSets(sizes.writeRecords, BATCH_SIZES)
    }
    const run = async (target: WriteTarget, set: BatchSet, nats?: WriteCaseSpec['nats']): Promise<void> => {
      const dir = join(scratch, `case${++caseNumber}`)
      log(`${caseName({ target, ...(nats === undefined ? {} : { nats }) })}, batches of ${set.batchSize.toLocaleString('en-US')} ...`)
      try {
        writes.push(await runWriteCase({ target, set, scratch: dir, ...(nats === undefined ? {} : { nats }) }))
      } finally {
        if (nats !== undefined) await deleteStream(nats.urls, nats.stream).catch(() => {})
        await rm(dir, { recursive: true, force: true })
      }
    }
    for (const set of sets) {
      await run('putMany', set)
      await run('post-plain', set)
    }
    if (sets.length > 0) {
      log('starting 1 NATS server (R1) ...')
      const r1 = await startNatsCluster({ size: 1, name: 'bench-r1' })
      try {
        for (const set of sets) {
          await run('node-lib', set, { urls: r1.urls, stream: `W${set.batchSize}_R1_LIB`, replicas: 1, nodes: 1 })
          await run('node-http', set, { urls: r1.urls, stream: `W${set.batchSize}_R1_HTTP`, replicas: 1, nodes: 1 })
        }
      } finally {
        await r1.close()
      }
    }
    if (sets.length > 0 || only.has('catch-up') || only.has('reads')) {
      log('starting 3 clustered NATS servers (R3) ...')
      const r3: NatsCluster = await startNatsCluster({ size: 3, name: 'bench-r3' })
      let nodes: ServeNode[] = []
      try {
        for (const set of sets) {
          await run('node-lib', set, { urls: r3.urls, stream: `W${set.batchSize}_R3_LIB`, replicas: 3, nodes: 3 })
          await run('node-http', set, { urls: r3.urls, stream: `W${set.batchSize}_R3_HTTP`, replicas: 3, nodes: 3 })
        }
        if (only.has('catch-up') || only.has('reads')) {
          // The writes' records when they are the same ones, else generated (the writes' are dropped first).
          const reuse = sets.find((s) => s.records === sizes.catchUpRecords && s.batchSize === sizes.catchUpBatch)
          sets = []
          if (reuse === undefined) log(`generating ${sizes.catchUpRecords.toLocaleString('en-US')} records for the catch-up ...`)
          const set = reuse ?? batchSets(sizes.catchUpRecords, [sizes.catchUpBatch])[0]
          log(`catch-up of ${sizes.catchUpRecords.toLocaleString('en-US')} records, batches of ${sizes.catchUpBatch.toLocaleString('en-US')} (R3) ...`)
          const done = await runCatchUp({ set: set!, urls: r3.urls, replicas: 3, stream: 'CATCHUP', scratch: join(scratch, 'catch-up'), serveNodes: 3 }, log)
          catchUp = done.result
          nodes = done.nodes
          if (only.has('reads')) {
            log(`reads on 1, 2 and 3 nodes (${READ_CONNECTIONS} connections in all) ...`)
            const client = forkLoadClient()
            try {
              const queries = readQueries(Math.floor(set!.records / 100), DEFAULT_SEED)
              reads.push(...(await runReads(client, nodes.map((n) => n.port), queries, sizes.readSeconds, sizes.readRounds, log)))
            } finally {
              client.close()
            }
          }
        }
      } finally {
        await Promise.allSettled(nodes.map((node) => node.stop()))
        await r3.close()
      }
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    process.off('exit', removeScratch)
    await rm(scratch, { recursive: true, force: true })
  }

  const argv = process.argv.slice(2)
  const results: ClusterBenchResults = {
    info: {
      date: `${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC`,
      mode: quick ? 'quick smoke run (small sizes, short loops: not for conclusions)' : `full run: ${sizes.writeRecords.toLocaleString('en-US')} records per write case, ${sizes.catchUpRecords.toLocaleString('en-US')} to catch up, ${sizes.readRounds} read rounds of ${sizes.readSeconds} s`,
      command: `node --import tsx cluster.bench.ts${argv.length > 0 ? ` ${argv.join(' ')}` : ''}`,
      machine: `${cpu.length} × ${cpu[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${type()} ${release()}`,
      node: process.version,
      natsServer: natsVersion(binary),
      source: sourceRevision(),
      load: `load average ${load1?.toFixed(2)} (1 min), ${load5?.toFixed(2)} (5 min); other processes running then: ${busyProcesses}`,
      quiet,
      seconds: (Date.now() - started) / 1000,
    },
    writes,
    catchUp,
    reads,
  }
  const markdown = renderClusterMarkdown(results)
  // A quick run is a smoke test: it writes a file only when asked (--out), so it never replaces a real run's results.
  const out = values.out ?? (quick ? undefined : join(BENCH_DIR, 'results', 'issue21-cluster.md'))
  if (out !== undefined) await writeFile(out, `${markdown}\n`)
  if (values.json !== undefined) await writeFile(values.json, `${JSON.stringify(results, null, 2)}\n`)
  process.stdout.write(`${markdown}\n`)
  const written = [out, values.json].filter((file) => file !== undefined)
  if (written.length > 0) log(`written to ${written.join(' and ')}`)
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exit(1)
})
