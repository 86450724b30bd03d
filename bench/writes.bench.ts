/**
 * Write workloads (issue 20): each workload of write-workloads.ts written
 * into a fresh store (`putMany` per batch) and into SQLite rowid (one
 * `INSERT OR REPLACE` transaction per batch) with the same batches, each in
 * a process of its own; then the same reads on the messy store and on an
 * in-order store holding the same final records, alternated call by call.
 *
 *   node --import tsx writes.bench.ts [--workload in-order,late,backfill,corrections,adversarial]
 *        [--records N] [--quick] [--store-only] [--json FILE] [--keep]
 *
 * Prints a markdown table on stdout (progress on stderr). `run.ts --only
 * writes` runs it as a family of `npm run bench`. Rates count time inside
 * the write calls; a tenth is a tenth of the batches.
 */
import { fork } from 'node:child_process'
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import { PriceStore } from '../src/index.js'
import { ADVERSARIAL_DEFAULT_SEED } from './adversarial-history.js'
import { BENCH_PROVIDER, DAY_MS, DEFAULT_SEED, HOUR_MS, Random } from './generate.js'
import type { GeneratedRecord } from './generate.js'
import { anonPeakMB, resetRssPeak, sampleRss } from './measure.js'
import { SqliteBaseline } from './sqlite-baseline.js'
import { WORKLOADS, outageOf, referenceBatches, streamShape, workloadBatches } from './write-workloads.js'
import type { WorkloadName, WorkloadSpec } from './write-workloads.js'

const SELF = fileURLToPath(import.meta.url)
const BENCH_DIR = dirname(SELF)
/** Records of the in-order-shaped workloads: a full run, and a smoke run. */
export const FULL_RECORDS = 1_000_000
export const QUICK_RECORDS = 50_000
/** Batches of the adversarial mix in a smoke run (a full run writes all 400). */
const QUICK_ADVERSARIAL_BATCHES = 60
/** Records generated ahead of the writes, so write calls run back to back. */
const AHEAD_RECORDS = 100_000

export type WriteTarget = 'store' | 'sqlite'

/** One workload written into one target, measured. */
export interface WriteRun {
  readonly workload: WorkloadName
  readonly target: WriteTarget
  readonly records: number
  readonly batches: number
  /** Time inside the write calls, s. */
  readonly writeSeconds: number
  readonly recordsPerSecond: number
  readonly maxBatchMs: number
  /** The size of the longest batch. */
  readonly maxBatchRecords: number
  readonly firstTenthRate: number
  readonly lastTenthRate: number
  /** lastTenthRate / firstTenthRate. */
  readonly lastToFirst: number
  /** Store close (waits for running background work) or SQLite ANALYZE + checkpoint + close, s. */
  readonly finishSeconds: number
  readonly bytesOnDisk: number
  readonly peakRssMB: number
  readonly peakAnonMB: number
}

/** One read form on the messy store against the in-order store (median µs of the same calls, alternated). */
export interface ReadAfterRow {
  readonly name: string
  readonly calls: number
  readonly messyMedianUs: number
  readonly inOrderMedianUs: number
  /** messy / in-order. */
  readonly ratio: number
}

export interface WorkloadResult {
  readonly workload: WorkloadName
  readonly description: string
  readonly runs: readonly WriteRun[]
  readonly reads: readonly ReadAfterRow[]
  /** Answers of the store and of SQLite compared after the writes (as-of and latest), when SQLite ran. */
  readonly sqliteChecked?: number
}

export interface WritesResults {
  readonly records: number
  readonly quick: boolean
  readonly workloads: readonly WorkloadResult[]
}

export interface WritesOptions {
  readonly workloads: readonly WorkloadName[]
  readonly records: number
  readonly quick: boolean
  readonly storeOnly: boolean
  readonly seed: number
  /** Where the stores and SQLite files go (removed afterwards unless `keep`). */
  readonly scratchDir: string
  readonly keep?: boolean
  readonly log?: (text: string) => void
}

// ------------------------------------------------------------ child tasks

interface WriteTask {
  readonly task: 'write'
  readonly spec: WorkloadSpec
  readonly target: WriteTarget
  readonly path: string
}

interface ReadsTask {
  readonly task: 'reads'
  readonly spec: WorkloadSpec
  readonly messyDir: string
  /** The in-order store; built here from the workload's final records when it does not exist. */
  readonly referenceDir: string
  readonly sqliteFile?: string
  readonly calls: number
}

interface ReadsOutput {
  readonly reads: ReadAfterRow[]
  readonly sqliteChecked?: number
}

async function directoryBytes(path: string): Promise<number> {
  const info = await stat(path).catch(() => undefined)
  if (info === undefined) return 0
  if (!info.isDirectory()) return info.size
  let total = 0
  for (const name of await readdir(path)) total += await directoryBytes(join(path, name))
  return total
}

/** Rate of a run of batches, records/s of time inside the write calls. */
function rateOf(ms: readonly number[], sizes: readonly number[], from: number, to: number): number {
  let time = 0
  let records = 0
  for (let i = from; i < to; i++) {
    time += ms[i] as number
    records += sizes[i] as number
  }
  return records / (time / 1000)
}

async function runWrite(task: WriteTask): Promise<WriteRun> {
  let write: (batch: GeneratedRecord[]) => unknown
  let finish: () => Promise<void> | void
  await mkdir(dirname(task.path), { recursive: true })
  if (task.target === 'store') {
    const store = await PriceStore.open(task.path, { provider: BENCH_PROVIDER })
    write = (batch) => store.putMany(batch)
    finish = () => store.close()
  } else {
    const sqlite = SqliteBaseline.open(task.path, 'rowid', BENCH_PROVIDER)
    write = (batch) => sqlite.insertMany(batch)
    finish = () => {
      sqlite.finishLoad()
      sqlite.close()
    }
  }
  resetRssPeak()
  const ms: number[] = []
  const sizes: number[] = []
  const source = workloadBatches(task.spec)[Symbol.iterator]()
  const ahead: GeneratedRecord[][] = []
  let exhausted = false
  let lastLog = Date.now()
  let written = 0
  for (;;) {
    if (ahead.length === 0 && !exhausted) {
      let records = 0
      while (records < AHEAD_RECORDS) {
        const next = source.next()
        if (next.done === true) {
          exhausted = true
          break
        }
        ahead.push(next.value)
        records += next.value.length
      }
    }
    const batch = ahead.shift()
    if (batch === undefined) break
    const start = process.hrtime.bigint()
    await write(batch)
    ms.push(Number(process.hrtime.bigint() - start) / 1e6)
    sizes.push(batch.length)
    written += batch.length
    if (ms.length % 32 === 0) sampleRss()
    if (Date.now() - lastLog > 15_000) {
      lastLog = Date.now()
      process.stderr.write(`  ${task.spec.name} → ${task.target}: ${written.toLocaleString('en-US')} records\n`)
    }
  }
  sampleRss()
  const finishStart = process.hrtime.bigint()
  await finish()
  const finishSeconds = Number(process.hrtime.bigint() - finishStart) / 1e9
  const n = ms.length
  const tenth = Math.max(1, Math.ceil(n / 10))
  const first = rateOf(ms, sizes, 0, tenth)
  const last = rateOf(ms, sizes, n - tenth, n)
  const writeMs = ms.reduce((a, b) => a + b, 0)
  let longest = 0
  for (let i = 1; i < n; i++) if ((ms[i] as number) > (ms[longest] as number)) longest = i
  const bytesOnDisk = task.target === 'store' ? await directoryBytes(task.path) : (await directoryBytes(task.path)) + (await directoryBytes(`${task.path}-wal`))
  return {
    workload: task.spec.name,
    target: task.target,
    records: written,
    batches: n,
    writeSeconds: writeMs / 1000,
    recordsPerSecond: written / (writeMs / 1000),
    maxBatchMs: ms[longest] ?? 0,
    maxBatchRecords: sizes[longest] ?? 0,
    firstTenthRate: first,
    lastTenthRate: last,
    lastToFirst: last / first,
    finishSeconds,
    bytesOnDisk,
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    peakAnonMB: Math.round(anonPeakMB()),
  }
}

/** Waits (up to 30 s) until this process's background threads (LevelDB compaction) are idle. */
async function settle(): Promise<void> {
  const started = Date.now()
  let quiet = 0
  while (quiet < 2 && Date.now() - started < 30_000) {
    const before = process.cpuUsage()
    const at = process.hrtime.bigint()
    await new Promise((resolve) => setTimeout(resolve, 300))
    const used = process.cpuUsage(before)
    quiet = (used.user + used.system) / (Number(process.hrtime.bigint() - at) / 1000) < 0.05 ? quiet + 1 : 0
  }
}

/** A read's parameters: a symbol and a moment in its data. */
interface ReadParam {
  readonly symbol: string
  readonly at: number
}

/** Parameters drawn from the final records: a moment of the stream, or (adversarial) near a record's timestamp. */
function readParams(spec: WorkloadSpec, finalRecords: () => Iterable<GeneratedRecord[]>, count: number): ReadParam[] {
  const random = new Random(spec.seed ^ 0x5ead)
  if (spec.name !== 'adversarial') {
    const shape = streamShape(spec.records)
    const lo = Math.min(shape.to, shape.from + DAY_MS)
    return Array.from({ length: count }, () => ({
      symbol: shape.symbols[random.int(shape.symbols.length)] as string,
      at: lo + random.int(shape.to - lo + 1),
    }))
  }
  const all: ReadParam[] = []
  for (const batch of finalRecords()) for (const r of batch) all.push({ symbol: r.symbol, at: r.timestamp })
  return Array.from({ length: count }, () => {
    const picked = all[random.int(all.length)] as ReadParam
    return { symbol: picked.symbol, at: Math.min(Number.MAX_SAFE_INTEGER, picked.at + random.int(600_000)) }
  })
}

type ReadForm = [name: string, call: (store: PriceStore, p: ReadParam) => Promise<unknown>]
const READ_FORMS: readonly ReadForm[] = [
  ['history as-of (toTimestamp, limit 1)', (store, p) => store.latest(p.symbol, { to: p.at, limit: 1 })],
  ['latest-1', (store, p) => store.latest(p.symbol)],
  ['range 24 h at 1 h', (store, p) => store.range(p.symbol, { from: Math.max(0, p.at - DAY_MS + 1), to: p.at, interval: HOUR_MS })],
  ['candles 24 h at 1 h', (store, p) => store.candles(p.symbol, { from: Math.max(0, p.at - DAY_MS + 1), to: p.at, interval: HOUR_MS })],
]

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown

async function runReads(task: ReadsTask): Promise<ReadsOutput> {
  const finalRecords = (): Iterable<GeneratedRecord[]> => referenceBatches(task.spec)
  if ((await stat(task.referenceDir).catch(() => undefined)) === undefined) {
    const reference = await PriceStore.open(task.referenceDir, { provider: BENCH_PROVIDER })
    for (const batch of finalRecords()) await reference.putMany(batch)
    await reference.close()
  }
  const params = readParams(task.spec, finalRecords, task.calls)
  const messy = await PriceStore.open(task.messyDir, { provider: BENCH_PROVIDER })
  const inOrder = await PriceStore.open(task.referenceDir, { provider: BENCH_PROVIDER })
  let sqliteChecked: number | undefined
  try {
    await settle()
    const reads: ReadAfterRow[] = []
    for (const [name, call] of READ_FORMS) {
      for (const p of params.slice(0, 20)) {
        await call(messy, p)
        await call(inOrder, p)
      }
      const a: number[] = []
      const b: number[] = []
      for (let i = 0; i < params.length; i++) {
        const p = params[i] as ReadParam
        // Alternate which store goes first, so neither always finds the caches the other warmed.
        const order: [PriceStore, number[]][] = i % 2 === 0 ? [[messy, a], [inOrder, b]] : [[inOrder, b], [messy, a]]
        const answers: unknown[] = []
        for (const [store, samples] of order) {
          const start = process.hrtime.bigint()
          answers.push(await call(store, p))
          samples.push(Number(process.hrtime.bigint() - start) / 1000)
        }
        if (!isDeepStrictEqual(plain(answers[0]), plain(answers[1]))) {
          throw new Error(`${task.spec.name}: ${name} answered differently on the messy and the in-order store for ${JSON.stringify(p)}`)
        }
      }
      const messyMedianUs = median(a)
      const inOrderMedianUs = median(b)
      reads.push({ name, calls: params.length, messyMedianUs, inOrderMedianUs, ratio: messyMedianUs / inOrderMedianUs })
    }
    if (task.sqliteFile !== undefined) {
      // Untimed: SQLite's rows after the same batches must be the store's (replacement, ties, non-number sources).
      const sqlite = SqliteBaseline.open(task.sqliteFile, 'rowid', BENCH_PROVIDER)
      try {
        sqliteChecked = 0
        for (const p of params) {
          for (const [store, other] of [
            [() => messy.latest(p.symbol, { to: p.at, limit: 3 }), () => sqlite.latest(p.symbol, { to: p.at, limit: 3 })],
            [() => messy.latest(p.symbol, { limit: 3 }), () => sqlite.latest(p.symbol, { limit: 3 })],
          ] as const) {
            const mine = plain(await store())
            const theirs = plain(other())
            if (!isDeepStrictEqual(mine, theirs)) {
              throw new Error(`${task.spec.name}: SQLite rowid answered differently from the store for ${JSON.stringify(p)}:\n store ${JSON.stringify(mine).slice(0, 300)}\n SQLite ${JSON.stringify(theirs).slice(0, 300)}`)
            }
            sqliteChecked++
          }
        }
      } finally {
        sqlite.close()
      }
    }
    return { reads, ...(sqliteChecked === undefined ? {} : { sqliteChecked }) }
  } finally {
    await messy.close()
    await inOrder.close()
  }
}

/** Runs this file as a child process with one task; resolves with what it sends back. */
function runSelf<T>(task: WriteTask | ReadsTask): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = fork(SELF, ['--child', JSON.stringify(task)], {
      execArgv: [...process.execArgv.filter((arg) => !arg.startsWith('--max-old-space-size')), '--max-old-space-size=8192'],
      stdio: ['ignore', 2, 2, 'ipc'],
    })
    let result: { value: T } | undefined
    child.once('message', (message) => (result = { value: message as T }))
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      if (result !== undefined) resolve(result.value)
      else reject(new Error(`writes bench task ${task.task} (${task.spec.name}) exited with ${signal ?? `code ${code}`} before reporting`))
    })
  })
}

// ------------------------------------------------------------ the run

function describe(spec: WorkloadSpec): string {
  const shape = streamShape(spec.records)
  const hours = (ms: number): string => `${(ms / HOUR_MS).toFixed(ms < 10 * HOUR_MS ? 1 : 0)} h`
  const span = `${shape.records.toLocaleString('en-US')} records, ${shape.symbols.length} symbols every 10 s, ${hours(shape.to - shape.from + 10_000)}`
  switch (spec.name) {
    case 'in-order':
      return `time-major ticks in batches of 1,000 (${span})`
    case 'late':
      return `in order, but about 5 % of each batch 1 min – 6 h late into sealed hours (${span})`
    case 'backfill': {
      const outage = outageOf(shape)
      return `an outage of ${hours(outage.to - outage.from)} missing from the live batches, written after it, one backfill batch per live batch (${span})`
    }
    case 'corrections':
      return `in order, 1 % of each batch rewriting a record of the last day (${span})`
    case 'adversarial':
      return `seeded mix (seed ${spec.seed}), ${spec.batches ?? 400} batches of 1–2,000 records over 30 symbols: ~10 % rewrites, ties, late, backfills, timestamps 0..2^53−1`
  }
}

/** Runs the chosen workloads: each target in a process of its own, then the reads. */
export async function runWrites(options: WritesOptions): Promise<WritesResults> {
  const log = options.log ?? ((text: string) => void process.stderr.write(`${text}\n`))
  const scratch = options.scratchDir
  await rm(scratch, { recursive: true, force: true })
  await mkdir(scratch, { recursive: true })
  const ordered = WORKLOADS.filter((w) => options.workloads.includes(w))
  const results: WorkloadResult[] = []
  /** The in-order workload's store: the reference of late and backfill (the same final records). */
  let inOrderDir: string | undefined
  try {
    for (const name of ordered) {
      const spec: WorkloadSpec =
        name === 'adversarial'
          ? { name, records: 0, seed: ADVERSARIAL_DEFAULT_SEED, ...(options.quick ? { batches: QUICK_ADVERSARIAL_BATCHES } : {}) }
          : { name, records: options.records, seed: options.seed }
      const runs: WriteRun[] = []
      const storeDir = join(scratch, `${name}-store`)
      const sqliteFile = join(scratch, `${name}-rowid.db`)
      for (const target of options.storeOnly ? (['store'] as const) : (['store', 'sqlite'] as const)) {
        log(`writes: ${name} → ${target === 'store' ? 'store' : 'SQLite rowid'} ...`)
        runs.push(await runSelf<WriteRun>({ task: 'write', spec, target, path: target === 'store' ? storeDir : sqliteFile }))
      }
      let reads: ReadAfterRow[] = []
      let sqliteChecked: number | undefined
      if (name === 'in-order') {
        inOrderDir = storeDir
      }
      const referenceDir = name === 'late' || name === 'backfill' ? (inOrderDir ?? join(scratch, 'in-order-reference')) : join(scratch, `${name}-reference`)
      if (name !== 'in-order') {
        log(`writes: ${name}: reads on the messy store and on an in-order one ...`)
        const output = await runSelf<ReadsOutput>({
          task: 'reads',
          spec,
          messyDir: storeDir,
          referenceDir,
          ...(options.storeOnly ? {} : { sqliteFile }),
          calls: options.quick ? 100 : 400,
        })
        reads = output.reads
        sqliteChecked = output.sqliteChecked
      }
      if (name === 'late' && inOrderDir === undefined) inOrderDir = referenceDir
      results.push({ workload: name, description: describe(spec), runs, reads, ...(sqliteChecked === undefined ? {} : { sqliteChecked }) })
      if (options.keep !== true && name !== 'in-order') {
        await rm(storeDir, { recursive: true, force: true })
        await rm(sqliteFile, { force: true })
        await rm(`${sqliteFile}-wal`, { force: true })
        await rm(`${sqliteFile}-shm`, { force: true })
        if (referenceDir !== inOrderDir) await rm(referenceDir, { recursive: true, force: true })
      }
    }
  } finally {
    if (options.keep !== true) await rm(scratch, { recursive: true, force: true })
  }
  return { records: streamShape(options.records).records, quick: options.quick, workloads: results }
}

// ------------------------------------------------------------ the report

const int = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—')
const us = (x: number): string => (!Number.isFinite(x) ? '—' : x >= 10_000 ? `${(x / 1000).toFixed(1)} ms` : x >= 100 ? `${x.toFixed(0)} µs` : `${x.toFixed(1)} µs`)

/** Issue 20's write targets. */
export const WRITE_TARGETS = {
  /** Late, backfill, corrections: store ≥ this × SQLite rowid's rate on the same batches. */
  vsSqlite: 1.0,
  /** ... and ≥ this × the store's own in-order rate. */
  vsOwnInOrder: 0.5,
  /** Adversarial: the last tenth's rate ≥ this × the first tenth's. */
  lastToFirst: 0.8,
  /** No batch over this, ms. */
  maxBatchMs: 500,
  /** Reads after messy writes within this × the in-order store's time. */
  readRatio: 1.2,
} as const

/** The writes section of a report, in markdown. */
export function writesLines(results: WritesResults | undefined): string[] {
  if (results === undefined || results.workloads.length === 0) return []
  const out: string[] = ['### Write workloads (issue 20)', '']
  out.push(
    'Each workload\'s batches written into a fresh store (`putMany`) and into SQLite rowid (`INSERT OR REPLACE`, one transaction per batch), each in a process of its own. ' +
      'Rates count time inside the write calls; tenths are tenths of the batches.',
    '',
    '| workload | target | records | batches | rec/s | store/SQLite | store/own in-order | first tenth · last tenth · last/first (rec/s) | longest batch (records) | finish | peak RSS (anon) |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  )
  const inOrderStore = results.workloads.find((w) => w.workload === 'in-order')?.runs.find((r) => r.target === 'store')
  for (const w of results.workloads) {
    const sqlite = w.runs.find((r) => r.target === 'sqlite')
    for (const r of w.runs) {
      const isStore = r.target === 'store'
      const vsSqlite = isStore && sqlite !== undefined ? (r.recordsPerSecond / sqlite.recordsPerSecond).toFixed(2) : '—'
      const vsOwn = isStore && inOrderStore !== undefined && w.workload !== 'in-order' ? (r.recordsPerSecond / inOrderStore.recordsPerSecond).toFixed(2) : '—'
      out.push(
        `| ${w.workload} | ${isStore ? 'store' : 'SQLite rowid'} | ${int(r.records)} | ${int(r.batches)} | ${int(r.recordsPerSecond)} | ${vsSqlite} | ${vsOwn} | ` +
          `${int(r.firstTenthRate)} · ${int(r.lastTenthRate)} · ${r.lastToFirst.toFixed(2)} | ${int(r.maxBatchMs)} ms (${int(r.maxBatchRecords)}) | ${r.finishSeconds.toFixed(1)} s | ` +
          `${int(r.peakRssMB)} (${int(r.peakAnonMB)}) MB |`,
      )
    }
  }
  out.push('')
  const withReads = results.workloads.filter((w) => w.reads.length > 0)
  if (withReads.length > 0) {
    out.push(
      'Reads after the writes: the same calls on the messy store and on a store holding the same final records written in time order, alternated call by call (median µs; ratio messy/in-order).',
      '',
      `| workload | ${READ_FORMS.map(([name]) => name).join(' | ')} |`,
      `|---|${READ_FORMS.map(() => '--:').join('|')}|`,
    )
    for (const w of withReads) {
      const cells = READ_FORMS.map(([name]) => {
        const row = w.reads.find((r) => r.name === name)
        return row === undefined ? '—' : `${us(row.messyMedianUs)} / ${us(row.inOrderMedianUs)} = ${row.ratio.toFixed(2)}`
      })
      out.push(`| ${w.workload} | ${cells.join(' | ')} |`)
    }
    out.push('')
  }
  out.push('Workloads:', '')
  for (const w of results.workloads) {
    const checked = w.sqliteChecked === undefined ? '' : `; ${int(w.sqliteChecked)} store answers checked equal to SQLite's after the writes`
    out.push(`- ${w.workload}: ${w.description}${checked}.`)
  }
  out.push('')
  return out
}

/** The issue's write targets as rows (case, target, measured, met), for the report's target table. */
export function writeTargetRows(results: WritesResults | undefined): { item: string; target: string; measured: string; met: boolean }[] {
  if (results === undefined) return []
  const rows: { item: string; target: string; measured: string; met: boolean }[] = []
  const inOrder = results.workloads.find((w) => w.workload === 'in-order')?.runs.find((r) => r.target === 'store')
  for (const w of results.workloads) {
    const store = w.runs.find((r) => r.target === 'store')
    const sqlite = w.runs.find((r) => r.target === 'sqlite')
    if (store === undefined) continue
    const item = `writes: ${w.workload}`
    if (w.workload === 'late' || w.workload === 'backfill' || w.workload === 'corrections') {
      if (sqlite !== undefined) {
        const share = store.recordsPerSecond / sqlite.recordsPerSecond
        rows.push({ item, target: `≥ ${WRITE_TARGETS.vsSqlite.toFixed(1)}× SQLite rowid's rec/s`, measured: `${share.toFixed(2)}× (${int(store.recordsPerSecond)} vs ${int(sqlite.recordsPerSecond)})`, met: share >= WRITE_TARGETS.vsSqlite })
      }
      if (inOrder !== undefined) {
        const share = store.recordsPerSecond / inOrder.recordsPerSecond
        rows.push({ item, target: `≥ ${WRITE_TARGETS.vsOwnInOrder}× the store's in-order rec/s`, measured: `${share.toFixed(2)}×`, met: share >= WRITE_TARGETS.vsOwnInOrder })
      }
    }
    if (w.workload === 'adversarial') {
      rows.push({ item, target: `last tenth ≥ ${WRITE_TARGETS.lastToFirst}× the first tenth's rate`, measured: `${store.lastToFirst.toFixed(2)}× (${int(store.lastTenthRate)} vs ${int(store.firstTenthRate)} rec/s)`, met: store.lastToFirst >= WRITE_TARGETS.lastToFirst })
    }
    rows.push({ item, target: `no batch over ${WRITE_TARGETS.maxBatchMs} ms`, measured: `${int(store.maxBatchMs)} ms`, met: store.maxBatchMs <= WRITE_TARGETS.maxBatchMs })
    for (const read of w.reads) {
      rows.push({ item: `${item}, then ${read.name}`, target: `≤ ${WRITE_TARGETS.readRatio}× the in-order store's time`, measured: read.ratio.toFixed(2), met: read.ratio <= WRITE_TARGETS.readRatio })
    }
  }
  return rows
}

// ------------------------------------------------------------ entry

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: 'string' },
      workload: { type: 'string' },
      records: { type: 'string' },
      quick: { type: 'boolean', default: false },
      'store-only': { type: 'boolean', default: false },
      json: { type: 'string' },
      keep: { type: 'boolean', default: false },
    },
  })
  if (values.child !== undefined) {
    const task = JSON.parse(values.child) as WriteTask | ReadsTask
    const result = task.task === 'write' ? await runWrite(task) : await runReads(task)
    process.send?.(result, () => process.disconnect())
    return
  }
  const workloads = (values.workload?.split(',') ?? [...WORKLOADS]).map((w) => w.trim())
  for (const w of workloads) if (!(WORKLOADS as readonly string[]).includes(w)) throw new Error(`unknown workload ${w}; known: ${WORKLOADS.join(', ')}`)
  const quick = values.quick === true
  const records = values.records === undefined ? (quick ? QUICK_RECORDS : FULL_RECORDS) : Number(values.records)
  if (!Number.isSafeInteger(records) || records < 1_000) throw new Error(`--records must be an integer ≥ 1,000 (got ${values.records})`)
  const results = await runWrites({
    workloads: workloads as WorkloadName[],
    records,
    quick,
    storeOnly: values['store-only'] === true,
    seed: DEFAULT_SEED,
    scratchDir: join(BENCH_DIR, '.data', `writes-${process.pid}`),
    keep: values.keep === true,
  })
  const rows = writeTargetRows(results)
  const markdown = [
    ...writesLines(results),
    ...(rows.length > 0 ? ['| case | target | measured | met |', '|---|---|---|:-:|', ...rows.map((r) => `| ${r.item} | ${r.target} | ${r.measured} | ${r.met ? 'yes' : '**no**'} |`), ''] : []),
  ].join('\n')
  process.stdout.write(`${markdown}\n`)
  if (values.json !== undefined) await writeFile(values.json, `${JSON.stringify(results, null, 2)}\n`)
}

// Run only as an entry (or a child), not when run.ts imports the runner.
if (process.argv[1] !== undefined && fileURLToPath(new URL(import.meta.url)) === process.argv[1]) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
    process.exit(1)
  })
}
