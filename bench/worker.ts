/**
 * The child-process entry of the bench: `worker.ts <task> <json input>`.
 * Tasks: `load` (build one target of a data set and measure its ingest),
 * `family` (run one family of query cases; the store alone with
 * `storeOnly`), `http-client` (serve load jobs over IPC until disconnected),
 * `ingest-http` (POST /prices against in-process ingest, ingest-http.bench.ts),
 * `stream-latency` (a writer and a server; the reader is `stream-client`).
 * The result goes back over IPC.
 */
import { join } from 'node:path'
import { PriceStore } from '../src/index.js'
import type { FamilyContext } from './context.js'
import type { LevelFloor } from './floor.js'
import { runCandles, runFill } from './candles-fill.bench.js'
import { BENCH_PROVIDER, Random, dataShape } from './generate.js'
import { runHttp } from './http.bench.js'
import type { HttpCaseResult, LoadClient } from './http.bench.js'
import { runLoad } from './http-client.js'
import type { LoadJob, LoadResult } from './http-client.js'
import { runLatest } from './latest.bench.js'
import { DATA_DIR, loadTarget } from './load.js'
import type { LoadSpec } from './load.js'
import { FULL_BUDGET, QUICK_BUDGET, anonPeakMB, resetRssPeak, sampleRss } from './measure.js'
import type { CaseResult } from './measure.js'
import { runRange } from './range.bench.js'
import { runSeveral } from './several.bench.js'
import { SqliteBaseline } from './sqlite-baseline.js'
import type { SqliteLayout } from './sqlite-baseline.js'
import { runStoreFamily } from './store-only.js'
import type { StoreCaseResult } from './store-only.js'
import { runStream } from './stream.bench.js'
import { runIngestHttp, type IngestHttpSpec } from './ingest-http.bench.js'
import { runStreamClient, runStreamLatency } from './stream-latency.bench.js'
import type { StreamLatencyInput } from './stream-latency.bench.js'
import { forkWorker } from './spawn.js'

export type QueryFamily = 'memory' | 'latest' | 'several' | 'range' | 'candles' | 'fill' | 'stream' | 'http'

export interface FamilyInput {
  readonly family: QueryFamily
  readonly days: number
  readonly storeDir: string
  /** Absent with `storeOnly`. */
  readonly sqliteFiles?: Readonly<Record<SqliteLayout, string>>
  /** The store alone: no SQLite, no floor (issue 9's scale runs). */
  readonly storeOnly: boolean
  readonly quick: boolean
  readonly seed: number
}

export interface FamilyOutput {
  readonly family: QueryFamily
  readonly cases: CaseResult[]
  /** The cases of a store-only run (then `cases` is empty). */
  readonly storeCases: StoreCaseResult[]
  readonly http: HttpCaseResult[]
  readonly notes: string[]
  readonly peakRssMB: number
}

function familySeed(seed: number, family: string): number {
  let h = seed >>> 0
  for (const char of family) h = Math.imul(h ^ char.charCodeAt(0), 0x01000193) >>> 0
  return h
}

/** A family's random source: candles and fill draw the range family's windows (candles-fill.bench.ts), so they are seeded as it is. */
function familyRandom(seed: number, family: QueryFamily): Random {
  return new Random(familySeed(seed, family === 'candles' || family === 'fill' ? 'range' : family))
}

/**
 * Waits (up to 2 minutes) until this process is idle: opening a LevelDB
 * replays its log and may start compactions on background threads, which
 * would otherwise steal a core from the first cases. Returns the seconds waited.
 */
async function settle(): Promise<number> {
  const started = Date.now()
  let quiet = 0
  while (quiet < 2 && Date.now() - started < 120_000) {
    const before = process.cpuUsage()
    const at = process.hrtime.bigint()
    await new Promise((resolve) => setTimeout(resolve, 500))
    const used = process.cpuUsage(before)
    const share = (used.user + used.system) / (Number(process.hrtime.bigint() - at) / 1000)
    quiet = share < 0.05 ? quiet + 1 : 0
  }
  return (Date.now() - started) / 1000
}

/**
 * The store's own memory: a process with only the store open, after every
 * symbol was read through each query form (so any cache is warm).
 */
async function runMemory(input: FamilyInput): Promise<FamilyOutput> {
  const shape = dataShape(input.days)
  const megabytes = (bytes: number): string => `${Math.round(bytes / 1048576).toLocaleString('en-US')} MB`
  const before = process.memoryUsage()
  const store = await PriceStore.open(input.storeDir, { provider: BENCH_PROVIDER })
  await settle()
  resetRssPeak()
  sampleRss()
  const opened = process.memoryUsage()
  try {
    await store.several()
    for (const symbol of shape.symbols) {
      await store.latest(symbol, { limit: 100 })
      await store.range(symbol, { from: Math.max(shape.from, shape.to - 86_400_000), to: shape.to, interval: 600_000 })
      sampleRss()
    }
  } finally {
    await store.close()
  }
  const after = process.memoryUsage()
  const note =
    `store alone (process with no SQLite and no floor): RSS ${megabytes(before.rss)} before opening, ${megabytes(opened.rss)} once open, ` +
    `peak ${megabytes(sampleRss() * 1048576)} (anonymous ${megabytes(anonPeakMB() * 1048576)}, not counting mapped table files) after reading every symbol ` +
    `through latest-100, a 24 h/10 min range and all-symbols; JS heap ${megabytes(after.heapUsed)}`
  return { family: 'memory', cases: [], storeCases: [], http: [], notes: [note], peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024) }
}

/** A family with the store alone open: what the store's own cost is at a size SQLite was not built for. */
async function runStoreOnly(input: FamilyInput): Promise<FamilyOutput> {
  const { family } = input
  // HTTP's cases measure the store against a SQLite-backed server, so they need SQLite.
  if (family === 'memory' || family === 'http') throw new Error(`family ${family} has no store-only form`)
  const store = await PriceStore.open(input.storeDir, { provider: BENCH_PROVIDER })
  const notes: string[] = []
  const settled = await settle()
  if (settled > 2) notes.push(`${family}: waited ${settled.toFixed(0)} s after opening for background work (LevelDB log replay and compaction, cache loading) to finish`)
  let storeCases: StoreCaseResult[]
  try {
    storeCases = await runStoreFamily(family, {
      shape: dataShape(input.days),
      store,
      budget: input.quick ? QUICK_BUDGET : FULL_BUDGET,
      random: familyRandom(input.seed, family),
      quick: input.quick,
      note: (text) => notes.push(text),
    })
  } finally {
    await store.close()
  }
  return { family, cases: [], storeCases, http: [], notes, peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024) }
}

async function runFamily(input: FamilyInput): Promise<FamilyOutput> {
  if (input.family === 'memory') return runMemory(input)
  if (input.storeOnly) return runStoreOnly(input)
  if (input.sqliteFiles === undefined) throw new Error(`family ${input.family}: no SQLite files given (and not store-only)`)
  const shape = dataShape(input.days)
  // Imported here, not at the top: the floor reads the store's key layout, and a store-only run must not depend on it.
  const { LevelFloor: Floor } = await import('./floor.js')
  // The twin first: the store's directory must be closed while its files are linked.
  const floor: LevelFloor = await Floor.open(input.storeDir, join(DATA_DIR, `floor-twin-${process.pid}`))
  const store = await PriceStore.open(input.storeDir, { provider: BENCH_PROVIDER })
  const sqlite = {
    clustered: SqliteBaseline.open(input.sqliteFiles.clustered, 'clustered', BENCH_PROVIDER),
    rowid: SqliteBaseline.open(input.sqliteFiles.rowid, 'rowid', BENCH_PROVIDER),
  }
  const notes: string[] = []
  const settled = await settle()
  if (settled > 2) notes.push(`${input.family}: waited ${settled.toFixed(0)} s after opening for background work (LevelDB log replay and compaction, cache loading) to finish`)
  const ctx: FamilyContext = {
    shape,
    store,
    sqlite,
    floor,
    budget: input.quick ? QUICK_BUDGET : FULL_BUDGET,
    random: familyRandom(input.seed, input.family),
    quick: input.quick,
    note: (text) => notes.push(text),
  }
  let cases: CaseResult[] = []
  let http: HttpCaseResult[] = []
  try {
    switch (input.family) {
      case 'latest':
        cases = await runLatest(ctx)
        break
      case 'several':
        cases = await runSeveral(ctx)
        break
      case 'range':
        cases = await runRange(ctx)
        break
      case 'candles':
        cases = await runCandles(ctx)
        break
      case 'fill':
        cases = await runFill(ctx)
        break
      case 'stream':
        cases = await runStream(ctx)
        break
      case 'http': {
        const child = forkWorker('http-client', {})
        let failed: Error | undefined
        child.on('error', (err) => (failed = err))
        child.on('exit', (code) => (failed ??= new Error(`the HTTP client process exited with code ${code}`)))
        const client: LoadClient = (job) =>
          new Promise<LoadResult>((resolve, reject) => {
            if (failed !== undefined) return reject(failed)
            child.once('message', (result) => resolve(result as LoadResult))
            child.send(job)
          })
        try {
          http = await runHttp(ctx, client)
        } finally {
          child.disconnect()
        }
        break
      }
    }
  } finally {
    await store.close()
    await floor.close()
    sqlite.clustered.close()
    sqlite.rowid.close()
  }
  return { family: input.family, cases, storeCases: [], http, notes, peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024) }
}

async function main(): Promise<void> {
  const [task, json = '{}'] = process.argv.slice(2)
  const input = JSON.parse(json) as unknown
  if (task === 'http-client') {
    process.on('message', (job) => {
      runLoad(job as LoadJob).then(
        (result) => process.send?.(result),
        (err: unknown) => {
          process.stderr.write(`http client failed: ${String(err)}\n`)
          process.exit(1)
        },
      )
    })
    process.on('disconnect', () => process.exit(0))
    return
  }
  let result: unknown
  if (task === 'load') result = await loadTarget(input as LoadSpec)
  else if (task === 'family') result = await runFamily(input as FamilyInput)
  else if (task === 'ingest-http') result = await runIngestHttp(input as IngestHttpSpec)
  else if (task === 'stream-latency') result = await runStreamLatency(input as StreamLatencyInput)
  else if (task === 'stream-client') return runStreamClient(input as { url: string })
  else throw new Error(`unknown task ${String(task)}`)
  process.send?.(result, () => process.disconnect())
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exit(1)
})
