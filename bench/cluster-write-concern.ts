/**
 * What the write concern costs a writer:
 * `cd bench && node --import tsx cluster-write-concern.ts [--quick] [--out FILE]` (about 5 minutes; --quick under 1).
 *
 * Three nats-server processes on loopback form a JetStream cluster; each case
 * gets its own new R3 stream and three new in-process nodes (a PriceStore on
 * classic-level in a temp folder, a ClusterNode with its own nodeId). One
 * writer sends the same pre-generated RedStone-shaped batches, one at a time,
 * to the first node with `putBatch(batch, { writeConcern: W })`:
 * W = 0 (answer once JetStream acknowledged), 1 (and this node applied it),
 * 2, 3 (that many nodes reported on `price-store.<stream>.applied` that they
 * applied it). Batches of 1,000 for W = 0..3, and of 10,000 for W = 0 and 3.
 *
 * Per case: p50 / p99 / max time of one `putBatch` call, records/s from the
 * first call to the last answer, each against W = 0, and how long after the
 * last answer all three nodes had applied everything (W = 0 answers before
 * the nodes apply, so its backlog is paid there). A discarded warm-up case
 * runs first. If the 1-minute load average is above 2 at the start, a full run
 * waits up to 5 minutes for it to fall, and says so.
 *
 * Prints a markdown table on stdout (progress on stderr) and writes it to
 * results/cluster-write-concern.md (a --quick run only to --out). Every NATS
 * server is stopped by PID and every temporary folder removed at the end, on
 * failure and on Ctrl-C too.
 */
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { ClusterNode } from '../src/cluster.js'
import { PriceStore } from '../src/index.js'
import { deleteStream, natsServerPath, withNatsScratch, type NatsCluster } from './cluster-nats.js'
import { quantiles, type Quantiles } from './cluster-writes.js'
import { BENCH_PROVIDER, DEFAULT_SEED, generateBatches, type GeneratedRecord } from './generate.js'
import { loadAtStart, otherBusyProcesses, runFactLines, runMain, writeReport } from './machine-state.js'
import { sourceRevision } from './source-revision.js'
import { streamShape } from './write-workloads.js'

const log = (text: string): void => void process.stderr.write(`${text}\n`)

/** Batches per case: 1,000-record batches for the p99, and the same records again as 10,000-record batches. */
const FULL = { small: 200, large: 20 }
const QUICK = { small: 30, large: 3 }
const WARM_UP_BATCHES = 10
/** A write that waits longer than this fails (PRICE_WRITE_CONCERN_TIMEOUT); the default 5 s would end a run on one stall. */
const APPLY_WAIT_MS = 60_000
const LOAD_LIMIT = 2
const LOAD_WAIT_MS = 5 * 60_000

interface CaseResult {
  readonly writeConcern: number
  readonly batchSize: number
  readonly batches: number
  readonly putBatchMs: Quantiles
  /** Records over the time from the first call to the last answer. */
  readonly recordsPerSecond: number
  /** From the last answer until all three nodes had applied the last batch, ms. */
  readonly drainMs: number
  /** Records over the time from the first call to all three nodes having applied the last batch. */
  readonly appliedRecordsPerSecond: number
}

async function runCase(nats: NatsCluster, scratch: string, stream: string, writeConcern: number, batches: readonly GeneratedRecord[][]): Promise<CaseResult> {
  const dir = join(scratch, stream)
  await mkdir(dir, { recursive: true })
  const stores: PriceStore[] = []
  const nodes: ClusterNode[] = []
  try {
    for (let i = 0; i < 3; i++) {
      const store = await PriceStore.open(join(dir, `node${i}`), { provider: BENCH_PROVIDER })
      stores.push(store)
      // One after another: the first creates the stream, the others find it.
      nodes.push(await ClusterNode.start(store, { servers: nats.urls, stream, replicas: 3, nodeId: `${stream}-n${i}`, applyWaitMs: APPLY_WAIT_MS, name: `bench node ${i}` }))
    }
    const writer = nodes[0]!
    const times: number[] = []
    let last = 0
    const started = performance.now()
    for (const batch of batches) {
      const t0 = performance.now()
      const { position } = await writer.putBatch(batch, { writeConcern })
      times.push(performance.now() - t0)
      last = Math.max(last, position)
    }
    const answered = performance.now()
    const reached = await Promise.all(nodes.map((node) => node.waitForPosition(last, 120_000)))
    const drainMs = performance.now() - answered
    if (reached.includes(false)) throw new Error(`${stream}: a node did not apply position ${last} within 120 s`)
    const positions = stores.map((store) => store.position)
    if (positions.some((p) => p !== last)) throw new Error(`${stream}: the nodes hold positions ${positions.join(', ')}, not all ${last}`)
    const records = batches.reduce((sum, batch) => sum + batch.length, 0)
    return {
      writeConcern,
      batchSize: batches[0]!.length,
      batches: batches.length,
      putBatchMs: quantiles(times),
      recordsPerSecond: records / ((answered - started) / 1000),
      drainMs,
      appliedRecordsPerSecond: records / ((answered + drainMs - started) / 1000),
    }
  } finally {
    await Promise.allSettled(nodes.map((node) => node.stop()))
    await Promise.allSettled(stores.map((store) => store.close()))
    await deleteStream(nats.urls, stream).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  }
}

/** The same records, cut into batches of `size`. */
function cut(records: readonly GeneratedRecord[], size: number, count: number): GeneratedRecord[][] {
  const batches: GeneratedRecord[][] = []
  for (let i = 0; i < count; i++) batches.push(records.slice(i * size, (i + 1) * size))
  return batches
}

const int = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—')
const ms = (x: number): string => (!Number.isFinite(x) ? '—' : x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'))
const times = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : '—')

function table(results: readonly CaseResult[]): string[] {
  const out = [
    '| write concern | batch | batches | putBatch p50 / p99 / max ms | records/s | vs W=0 (same batch): p50 · p99 · max · records/s | all 3 applied: after the last answer · records/s |',
    '|---|--:|--:|--:|--:|--:|--:|',
  ]
  for (const r of results) {
    const base = results.find((b) => b.writeConcern === 0 && b.batchSize === r.batchSize)
    const vs = base === undefined ? '—' : [times(r.putBatchMs.p50, base.putBatchMs.p50), times(r.putBatchMs.p99, base.putBatchMs.p99), times(r.putBatchMs.max, base.putBatchMs.max), times(r.recordsPerSecond, base.recordsPerSecond)].join(' · ')
    out.push(`| W=${r.writeConcern} | ${int(r.batchSize)} | ${r.batches} | ${ms(r.putBatchMs.p50)} / ${ms(r.putBatchMs.p99)} / ${ms(r.putBatchMs.max)} | ${int(r.recordsPerSecond)} | ${vs} | ${ms(r.drainMs)} ms · ${int(r.appliedRecordsPerSecond)} |`)
  }
  return out
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, out: { type: 'string' } } })
  const quick = values.quick === true
  // Now, as the modules were just loaded: others commit to this tree while a run goes on.
  const source = sourceRevision()
  const sizes = quick ? QUICK : FULL
  const binary = natsServerPath()
  if (binary === undefined) throw new Error('nats-server not found on PATH nor at /usr/sbin/nats-server')
  const load = await loadAtStart(quick, LOAD_LIMIT, LOAD_WAIT_MS)
  const busy = otherBusyProcesses('cluster-write-concern.ts')
  const startedAt = Date.now()

  const total = sizes.small * 1_000
  log(`generating ${int(total)} records ...`)
  const records: GeneratedRecord[] = []
  for (const batch of generateBatches(streamShape(total), 10_000, DEFAULT_SEED)) records.push(...batch)
  const small = cut(records, 1_000, sizes.small)
  const large = cut(records, 10_000, Math.min(sizes.large, Math.floor(records.length / 10_000)))
  log('starting 3 clustered NATS servers ...')
  const results = await withNatsScratch('price-store-write-concern-', { size: 3, name: 'bench-wc' }, async (nats, scratch) => {
    log(`warm-up: ${WARM_UP_BATCHES} batches of 1,000, W=1 (not reported) ...`)
    await runCase(nats, scratch, 'WC_WARMUP', 1, small.slice(0, WARM_UP_BATCHES))
    const cases: [number, GeneratedRecord[][]][] = [[0, small], [1, small], [2, small], [3, small], [0, large], [3, large]]
    const done: CaseResult[] = []
    for (const [w, batches] of cases) {
      const stream = `WC_W${w}_B${batches[0]!.length}`
      log(`W=${w}: ${batches.length} batches of ${int(batches[0]!.length)} (stream ${stream}) ...`)
      const result = await runCase(nats, scratch, stream, w, batches)
      log(`  p50 ${ms(result.putBatchMs.p50)} ms, p99 ${ms(result.putBatchMs.p99)} ms, ${int(result.recordsPerSecond)} records/s`)
      done.push(result)
    }
    return done
  })

  const markdown = [
    '# Cluster: write concern',
    '',
    ...runFactLines({ script: 'cluster-write-concern.ts', quick, startedAt, binary, source, load, busy }),
    '',
    'Three NATS servers (one JetStream cluster, an R3 stream per case) and three in-process `ClusterNode`s, each on its own classic-level store, ' +
      'all on this machine. One writer sends RedStone-shaped batches (generate.ts), one at a time, to the first node with ' +
      '`putBatch(batch, { writeConcern: W })`; each case has its own new stream and stores and the same batches, in the order of the table, ' +
      `after a discarded warm-up of ${WARM_UP_BATCHES} batches. W=0 answers once JetStream acknowledged; W=1 once the node that took the write applied it; ` +
      'W=2 and W=3 once that many nodes reported having applied it. records/s: from the first call to the last answer. ' +
      `"All 3 applied": how long after the last answer every node had applied the last batch, and records/s from the first call until then. \`applyWaitMs\` is ${APPLY_WAIT_MS / 1000} s so that a stall is measured rather than fails. ` +
      'p99 of the 10,000-record rows comes from few batches: it is close to their max.',
    '',
    ...table(results),
    '',
    'What it cannot show: every process shares the same cores, so W=3 pays three applies on the CPUs the NATS servers and the writer also use, ' +
      'where separate hosts would apply in parallel; and the three nodes share the writer\'s event loop, so with W=0 the nodes\' applying, ' +
      'still running behind the writer, slows the writer\'s own calls. Nor does it show network latency between hosts: everything is loopback.',
  ].join('\n')
  await writeReport(markdown, { out: values.out, quick, name: 'cluster-write-concern.md' })
}

runMain(main)
