/**
 * Builds the on-disk data sets once and reuses them: the same generated
 * records loaded into the project's store (`PriceStore.open(dir)`, `putMany`
 * in time-major batches) and into SQLite (both layouts). Each target loads
 * in a process of its own, so its peak RSS is its own, and its load is the
 * sustained-ingest measurement.
 *
 * Data sets live under bench/.data/ (git-ignored), one folder per target,
 * keyed by the data size and a format key: the generator version plus, for
 * the store, a hash of the source that decides its bytes and write path
 * (src/keys, src/records, src/store), and for SQLite the baseline version.
 * A folder is complete once its meta.json exists.
 */
import { createHash } from 'node:crypto'
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER, DAY_MS, DEFAULT_SEED, GENERATOR_VERSION, dataShape, generateBatches } from './generate.js'
import type { DataShape, GeneratedRecord } from './generate.js'
import { sampleRss } from './measure.js'
import { BASELINE_VERSION, SqliteBaseline } from './sqlite-baseline.js'
import type { SqliteLayout } from './sqlite-baseline.js'

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url))
export const ROOT_DIR = join(BENCH_DIR, '..')
export const DATA_DIR = join(BENCH_DIR, '.data')

/**
 * Records generated ahead of the writes, so write calls run back to back (≈ 150 MB of heap with RedStone-sized
 * records, 1.4 kB of JSON each: a larger live heap makes GC pauses look like write stalls).
 */
const PREGENERATE_RECORDS = 100_000
/** Sustained rate is reported per this many equal chunks of the load. */
const CHUNKS = 20

export type LoadTarget = { kind: 'store'; dir: string } | { kind: 'sqlite'; layout: SqliteLayout; file: string }

export interface LoadSpec {
  readonly target: LoadTarget
  readonly days: number
  readonly batchSize: number
  readonly seed: number
}

/** One target's load, measured. Rates are records per second of time spent inside the write calls. */
export interface IngestResult {
  readonly label: string
  readonly batchSize: number
  readonly days: number
  readonly records: number
  readonly batches: number
  /** Time inside the write calls (putMany / one SQLite transaction), s. */
  readonly writeSeconds: number
  readonly recordsPerSecond: number
  /** Rate of each of {@link CHUNKS} consecutive chunks of the load. */
  readonly chunkRates: readonly number[]
  /**
   * Rate over the records of the data's first 24 h, and of its last 24 h
   * (the same records when the data spans a day or less): whether writes
   * slow down as the store grows (issue 9: last ≥ 0.8× first). Absent in
   * data sets built before they were measured.
   */
  readonly firstDayRecordsPerSecond?: number
  readonly lastDayRecordsPerSecond?: number
  /** lastDayRecordsPerSecond / firstDayRecordsPerSecond, unrounded. */
  readonly lastToFirstDay?: number
  readonly medianBatchMs: number
  readonly p99BatchMs: number
  /** The longest single write call: the write stall. */
  readonly maxBatchMs: number
  /** After the last write: store close (waits for LevelDB's running compaction) or SQLite ANALYZE + checkpoint + close, s. */
  readonly finishSeconds: number
  /** Pauses to generate the next records ahead (the writer was idle; background compaction was not). */
  readonly generationPauses: number
  readonly bytesOnDisk: number
  readonly bytesPerRecord: number
  readonly peakRssMB: number
  readonly builtAt: string
}

async function directoryBytes(path: string): Promise<number> {
  const info = await stat(path)
  if (!info.isDirectory()) return info.size
  let total = 0
  for (const name of await readdir(path)) total += await directoryBytes(join(path, name))
  return total
}

async function fileBytes(paths: readonly string[]): Promise<number> {
  let total = 0
  for (const path of paths) total += await stat(path).then((s) => s.size, () => 0)
  return total
}

/** The write time and records of one day of the data, for its ingest rate. */
interface DayMeter {
  /** Whether a record's timestamp is in the day. */
  readonly holds: (timestamp: number) => boolean
  records: number
  ms: number
}

/** Meters of the data's first and last 24 h (time-major, so they are the load's first and last records). */
function dayMeters(shape: DataShape): { first: DayMeter; last: DayMeter } {
  return {
    first: { holds: (timestamp) => timestamp < shape.from + DAY_MS, records: 0, ms: 0 },
    last: { holds: (timestamp) => timestamp > shape.to - DAY_MS, records: 0, ms: 0 },
  }
}

/**
 * Counts a written batch towards a day: a batch that straddles the day's
 * edge gives it the share of its write time that its records in the day are
 * of the batch (a batch of 10,000 is 100 ticks, so about 1 % of a day).
 */
function meterBatch(meter: DayMeter, batch: readonly GeneratedRecord[], ms: number): void {
  let inside = 0
  for (const record of batch) if (meter.holds(record.timestamp)) inside++
  if (inside === 0) return
  meter.records += inside
  meter.ms += (ms * inside) / batch.length
}

const perSecond = (meter: DayMeter): number => meter.records / (meter.ms / 1000)

/** Loads one target (runs in a child process). The target must not exist yet. */
export async function loadTarget(spec: LoadSpec): Promise<IngestResult> {
  const shape = dataShape(spec.days)
  const { target } = spec
  let write: (batch: GeneratedRecord[]) => Promise<unknown> | unknown
  let finish: () => Promise<void> | void
  let label: string
  if (target.kind === 'store') {
    await mkdir(dirname(target.dir), { recursive: true })
    const store = await PriceStore.open(target.dir, { provider: BENCH_PROVIDER })
    write = (batch) => store.putMany(batch)
    finish = () => store.close()
    label = 'store'
  } else {
    await mkdir(dirname(target.file), { recursive: true })
    const sqlite = SqliteBaseline.open(target.file, target.layout, BENCH_PROVIDER)
    write = (batch) => sqlite.insertMany(batch)
    finish = () => {
      sqlite.finishLoad()
      sqlite.close()
    }
    label = `SQLite ${target.layout}`
  }

  const batchMs: number[] = []
  const batchSizes: number[] = []
  const days = dayMeters(shape)
  let pauses = 0
  const ahead: GeneratedRecord[][] = []
  let aheadRecords = 0
  const batches = generateBatches(shape, spec.batchSize, spec.seed)
  let exhausted = false
  const refill = (): void => {
    pauses++
    while (aheadRecords < PREGENERATE_RECORDS) {
      const next = batches.next()
      if (next.done === true) {
        exhausted = true
        return
      }
      ahead.push(next.value)
      aheadRecords += next.value.length
    }
  }
  let written = 0
  let lastLog = Date.now()
  for (;;) {
    if (ahead.length === 0) {
      if (exhausted) break
      refill()
      if (ahead.length === 0) break
    }
    const batch = ahead.shift() as GeneratedRecord[]
    aheadRecords -= batch.length
    const start = process.hrtime.bigint()
    await write(batch)
    const ms = Number(process.hrtime.bigint() - start) / 1e6
    batchMs.push(ms)
    batchSizes.push(batch.length)
    meterBatch(days.first, batch, ms)
    meterBatch(days.last, batch, ms)
    written += batch.length
    if (batchMs.length % 64 === 0) sampleRss()
    if (Date.now() - lastLog > 15_000) {
      lastLog = Date.now()
      const recent = batchMs.slice(-64)
      const rate = (recent.length * spec.batchSize) / (recent.reduce((a, b) => a + b, 0) / 1000)
      process.stderr.write(`  ${label}: ${written.toLocaleString('en-US')} / ${shape.records.toLocaleString('en-US')} records, ~${Math.round(rate).toLocaleString('en-US')} rec/s lately\n`)
    }
  }
  const finishStart = process.hrtime.bigint()
  await finish()
  const finishSeconds = Number(process.hrtime.bigint() - finishStart) / 1e9

  const bytesOnDisk = target.kind === 'store' ? await directoryBytes(target.dir) : await fileBytes([target.file, `${target.file}-wal`])
  const writeSeconds = batchMs.reduce((a, b) => a + b, 0) / 1000
  const chunkRates: number[] = []
  const perChunk = Math.max(1, Math.ceil(batchMs.length / CHUNKS))
  for (let i = 0; i < batchMs.length; i += perChunk) {
    const ms = batchMs.slice(i, i + perChunk).reduce((a, b) => a + b, 0)
    const records = batchSizes.slice(i, i + perChunk).reduce((a, b) => a + b, 0)
    chunkRates.push(Math.round(records / (ms / 1000)))
  }
  const sorted = [...batchMs].sort((a, b) => a - b)
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
  return {
    label,
    batchSize: spec.batchSize,
    days: spec.days,
    records: written,
    batches: batchMs.length,
    writeSeconds,
    recordsPerSecond: Math.round(written / writeSeconds),
    chunkRates,
    firstDayRecordsPerSecond: Math.round(perSecond(days.first)),
    lastDayRecordsPerSecond: Math.round(perSecond(days.last)),
    lastToFirstDay: perSecond(days.last) / perSecond(days.first),
    medianBatchMs: at(0.5),
    p99BatchMs: at(0.99),
    maxBatchMs: at(1),
    finishSeconds,
    generationPauses: pauses,
    bytesOnDisk,
    bytesPerRecord: bytesOnDisk / written,
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    builtAt: new Date().toISOString(),
  }
}

/** Hash of the files that decide the store's on-disk bytes and its write path. */
async function storeSourceKey(): Promise<string> {
  const hash = createHash('sha256')
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) await walk(path)
      else if (entry.name.endsWith('.ts')) hash.update(relative(ROOT_DIR, path)).update(await readFile(path))
    }
  }
  for (const dir of ['keys', 'records', 'store']) await walk(join(ROOT_DIR, 'src', dir)).catch(() => {})
  return hash.digest('hex').slice(0, 10)
}

export interface Dataset {
  readonly days: number
  readonly records: number
  readonly storeDir: string
  /** Absent for a store-only data set. */
  readonly sqliteFiles?: Readonly<Record<SqliteLayout, string>>
  /** Sustained ingest of each target (batches of 10,000), measured when it was built. */
  readonly ingest: readonly (IngestResult & { reused: boolean })[]
}

/** A child-process runner, injected by the orchestrator. */
export type RunChild = <T>(task: string, input: unknown) => Promise<T>

/** The data size in file and folder names: `7d`, `0_1d`. */
export function daysTag(days: number): string {
  return `${String(days).replace('.', '_')}d`
}

/**
 * Makes sure the store and both SQLite data sets of `days` days exist
 * (only the store's with `storeOnly`), building (and measuring) the missing
 * ones; stale folders of the same target and size are removed.
 */
export async function ensureDataset(
  days: number,
  options: { rebuild: boolean; runChild: RunChild; batchSize?: number; storeOnly?: boolean },
): Promise<Dataset> {
  const batchSize = options.batchSize ?? 10_000
  const shape = dataShape(days)
  await mkdir(DATA_DIR, { recursive: true })
  const storeKey = `store-${daysTag(days)}-g${GENERATOR_VERSION}-${await storeSourceKey()}`
  const targets: { prefix: string; key: string; make: (folder: string) => LoadTarget; path: (folder: string) => string }[] = [
    {
      prefix: `store-${daysTag(days)}-`,
      key: storeKey,
      make: (folder) => ({ kind: 'store', dir: join(folder, 'db') }),
      path: (folder) => join(folder, 'db'),
    },
    // A store-only run at a size SQLite was never built for should not build it (at 28 days each SQLite layout is about 15 GB).
    ...(options.storeOnly === true ? [] : (['clustered', 'rowid'] as const)).map((layout) => ({
      prefix: `sqlite-${layout}-${daysTag(days)}-`,
      key: `sqlite-${layout}-${daysTag(days)}-g${GENERATOR_VERSION}-b${BASELINE_VERSION}`,
      make: (folder: string): LoadTarget => ({ kind: 'sqlite', layout, file: join(folder, 'prices.db') }),
      path: (folder: string) => join(folder, 'prices.db'),
    })),
  ]
  const ingest: (IngestResult & { reused: boolean })[] = []
  const paths: string[] = []
  for (const target of targets) {
    const folder = join(DATA_DIR, target.key)
    const metaFile = join(folder, 'meta.json')
    // Old builds of this target and size (another source key) only take disk space.
    for (const name of await readdir(DATA_DIR)) {
      if (name.startsWith(target.prefix) && name !== target.key) await rm(join(DATA_DIR, name), { recursive: true, force: true })
    }
    let meta: IngestResult | undefined
    if (!options.rebuild) meta = await readFile(metaFile, 'utf8').then((text) => JSON.parse(text) as IngestResult, () => undefined)
    if (meta !== undefined && meta.records === shape.records) {
      ingest.push({ ...meta, reused: true })
    } else {
      await rm(folder, { recursive: true, force: true })
      process.stderr.write(`building ${target.key}: ${shape.records.toLocaleString('en-US')} records in batches of ${batchSize}\n`)
      const spec: LoadSpec = { target: target.make(folder), days, batchSize, seed: DEFAULT_SEED }
      const result = await options.runChild<IngestResult>('load', spec)
      await writeFile(metaFile, JSON.stringify(result, null, 2))
      ingest.push({ ...result, reused: false })
    }
    paths.push(target.path(folder))
  }
  return {
    days,
    records: shape.records,
    storeDir: paths[0] as string,
    ...(options.storeOnly === true ? {} : { sqliteFiles: { clustered: paths[1] as string, rowid: paths[2] as string } }),
    ingest,
  }
}
