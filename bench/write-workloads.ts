/**
 * The write workloads of issue 20: deterministic, seeded sequences of
 * batches that the store and SQLite both write (writes.bench.ts), and for
 * each the final record set in time order (the "in-order" store its reads
 * are compared against).
 *
 * - in-order: time-major ticks (100 symbols every 10 s) in batches of 1,000;
 * - late: the same, but about 5 % of each batch are records held back
 *   1 min – 6 h, always into an hour that ended more than 10 minutes before
 *   the batch's newest record (a sealed hour);
 * - backfill: an outage (a past span, a week at most: 40 % of the run's
 *   time) missing from the live stream, written once it is over, one
 *   backfill batch (in time order) after each live batch;
 * - corrections: 1 % of each batch rewrites a record of the last day (same
 *   symbol, timestamp and id; new value, signature and source);
 * - adversarial: adversarial-history.ts (its own size: about 110k records).
 *
 * Late and backfill write exactly the in-order records, in another order;
 * corrections writes them plus the rewrites. The records are generate.ts's.
 */
import { adversarialHistory, recordKey } from './adversarial-history.js'
import type { AdversarialOptions } from './adversarial-history.js'
import { BENCH_PROVIDER, DAY_MS, HOUR_MS, Random, START_TIMESTAMP, STEP_MS, SYMBOLS, generateBatches, newRecordScratch, nextRecord } from './generate.js'
import type { DataShape, GeneratedRecord, SymbolState } from './generate.js'

export type WorkloadName = 'in-order' | 'late' | 'backfill' | 'corrections' | 'adversarial'
export const WORKLOADS: readonly WorkloadName[] = ['in-order', 'late', 'backfill', 'corrections', 'adversarial']

export interface WorkloadSpec {
  readonly name: WorkloadName
  /** Records of the in-order stream (rounded down to whole ticks of 100); the adversarial mix has its own size. */
  readonly records: number
  readonly seed: number
  /** Batches of the adversarial mix (default 400: about 110k records). */
  readonly batches?: number
}

export const BATCH = 1_000
const SYMBOL_COUNT = 100
const LATE_SHARE = 0.05
/** Held back per record of the stream, a little under LATE_SHARE so the held records do not pile up. */
const HOLD_SHARE = 0.048
const SEALED_AFTER_MS = 10 * 60_000
const MIN_LATE_MS = 60_000
const MAX_LATE_MS = 6 * HOUR_MS
const CORRECTION_SHARE = 0.01
const OUTAGE_SHARE = 0.4
const OUTAGE_MAX_MS = 7 * DAY_MS
/** The outage starts at this share of the run's time. */
const OUTAGE_START_SHARE = 0.2

/** The in-order stream's shape for a record count. */
export function streamShape(records: number): DataShape {
  const ticks = Math.max(1, Math.floor(records / SYMBOL_COUNT))
  return Object.freeze({
    days: (ticks * STEP_MS) / DAY_MS,
    symbols: SYMBOLS.slice(0, SYMBOL_COUNT),
    ticks,
    records: ticks * SYMBOL_COUNT,
    from: START_TIMESTAMP,
    to: START_TIMESTAMP + (ticks - 1) * STEP_MS,
  })
}

/** The in-order stream, one record at a time. */
function* stream(shape: DataShape, seed: number): Generator<GeneratedRecord> {
  for (const batch of generateBatches(shape, 10_000, seed)) yield* batch
}

/** Derived seeds, so a workload's own draws do not shift the records' generator. */
function subSeed(seed: number, salt: number): number {
  return (Math.imul(seed ^ salt, 0x9e3779b1) ^ 0x85ebca6b) >>> 0
}

/** The outage of the backfill workload: [from, to), on the tick grid. */
export function outageOf(shape: DataShape): { from: number; to: number } {
  const span = shape.to - shape.from + STEP_MS
  const length = Math.min(OUTAGE_MAX_MS, Math.floor((span * OUTAGE_SHARE) / STEP_MS) * STEP_MS)
  const from = shape.from + Math.floor((span * OUTAGE_START_SHARE) / STEP_MS) * STEP_MS
  return { from, to: from + length }
}

function* inOrder(shape: DataShape, seed: number): Generator<GeneratedRecord[]> {
  yield* generateBatches(shape, BATCH, seed)
}

/** A record held back: when it may arrive. */
interface Held {
  readonly record: GeneratedRecord
  readonly arrival: number
}

function* late(shape: DataShape, seed: number): Generator<GeneratedRecord[]> {
  const random = new Random(subSeed(seed, 1))
  const held: Held[] = [] // kept in arrival order (insertion sort: it stays short)
  const lateInBatch = Math.round(BATCH * LATE_SHARE)
  let batch: GeneratedRecord[] = []
  let newest = -Infinity
  const flush = (): GeneratedRecord[] => {
    // The late ones: held records whose hour has been sealed by the batch's newest record.
    let taken = 0
    while (taken < lateInBatch && held.length > 0 && (held[0] as Held).arrival <= newest) {
      batch.push((held.shift() as Held).record)
      taken++
    }
    const out = batch
    batch = []
    return out
  }
  let onTime = 0
  for (const record of stream(shape, seed)) {
    if (random.next() < HOLD_SHARE) {
      const hourEnd = Math.floor(record.timestamp / HOUR_MS) * HOUR_MS + HOUR_MS
      const least = Math.max(MIN_LATE_MS, hourEnd - record.timestamp + SEALED_AFTER_MS)
      const arrival = record.timestamp + least + random.int(Math.max(1, MAX_LATE_MS - least))
      let at = held.length
      while (at > 0 && (held[at - 1] as Held).arrival > arrival) at--
      held.splice(at, 0, { record, arrival })
      continue
    }
    batch.push(record)
    newest = record.timestamp
    // Room is left for the late ones; when fewer are due, the batch is smaller.
    if (++onTime === BATCH - lateInBatch) {
      onTime = 0
      yield flush()
    }
  }
  if (batch.length > 0) yield flush()
  // What is still held arrives after the last live batch: the feed has no newer record to seal its hour
  // with, but its clock has moved on (a few hundred records at 1 M, in the last batches).
  while (held.length > 0) yield held.splice(0, BATCH).map((h) => h.record)
}

function* backfill(shape: DataShape, seed: number): Generator<GeneratedRecord[]> {
  const outage = outageOf(shape)
  const archive = stream(shape, seed) // the outage's records, read from an archive in time order
  const nextFromArchive = (): GeneratedRecord[] => {
    const out: GeneratedRecord[] = []
    while (out.length < BATCH) {
      const next = archive.next()
      if (next.done === true) break
      if (next.value.timestamp < outage.from) continue
      if (next.value.timestamp >= outage.to) break
      out.push(next.value)
    }
    return out
  }
  let backfilling = false
  let archiveDone = false
  let batch: GeneratedRecord[] = []
  for (const record of stream(shape, seed)) {
    if (record.timestamp >= outage.from && record.timestamp < outage.to) continue
    batch.push(record)
    if (batch.length < BATCH) continue
    yield batch
    batch = []
    // The backfill starts an hour after the outage ended, and runs one batch per live batch.
    if (!backfilling && record.timestamp >= outage.to + HOUR_MS) backfilling = true
    if (backfilling && !archiveDone) {
      const old = nextFromArchive()
      if (old.length > 0) yield old
      if (old.length < BATCH) archiveDone = true
    }
  }
  if (batch.length > 0) yield batch
  while (!archiveDone) {
    const old = nextFromArchive()
    if (old.length > 0) yield old
    if (old.length < BATCH) archiveDone = true
  }
}

/** A stored record's key, and where its symbol's state is. */
interface Written {
  readonly symbol: number
  readonly timestamp: number
  readonly id: string
}

/**
 * Corrections: each batch is 990 stream records and 10 rewrites of records
 * written earlier with a timestamp in the last day before the batch's
 * newest. `onCorrection` sees each rewrite (the reference keeps the last).
 */
function* corrections(shape: DataShape, seed: number, onCorrection?: (record: GeneratedRecord) => void): Generator<GeneratedRecord[]> {
  const random = new Random(subSeed(seed, 2))
  const scratch = newRecordScratch()
  const symbolIndex = new Map(shape.symbols.map((s, i) => [s, i]))
  // The correction's own price walk per symbol (the stream's states are inside its generator).
  const states: SymbolState[] = []
  const lastValue = new Map<number, number>()
  const ring: Written[] = []
  let ringStart = 0
  const fixesInBatch = Math.round(BATCH * CORRECTION_SHARE)
  let batch: GeneratedRecord[] = []
  for (const record of stream(shape, seed)) {
    batch.push(record)
    if (batch.length < BATCH - fixesInBatch) continue
    const newest = record.timestamp
    while (ringStart < ring.length && (ring[ringStart] as Written).timestamp <= newest - DAY_MS) ringStart++
    if (ringStart > 100_000) {
      ring.splice(0, ringStart)
      ringStart = 0
    }
    const chosen = new Set<number>()
    for (let i = 0; i < fixesInBatch && ring.length - ringStart > fixesInBatch; i++) {
      let at = ringStart + random.int(ring.length - ringStart)
      while (chosen.has(at)) at = ringStart + random.int(ring.length - ringStart)
      chosen.add(at)
      const target = ring[at] as Written
      const state = states[target.symbol] ?? {
        symbol: shape.symbols[target.symbol] as string,
        price: lastValue.get(target.symbol) ?? 1,
        scale: 1e8,
        sources: [{ name: 'binance', bias: 0, tick: 0 }, { name: 'kraken', bias: 0.0004, tick: 0 }, { name: 'coingecko', bias: 0, tick: 0 }, { name: 'kaiko', bias: -0.0003, tick: 0 }, { name: 'okx', bias: 0, tick: 0 }],
      }
      states[target.symbol] = state
      const fixed = nextRecord(random, state, target.timestamp, scratch, BENCH_PROVIDER.id, target.id)
      onCorrection?.(fixed)
      batch.push(fixed)
    }
    for (const r of batch.slice(0, BATCH - fixesInBatch)) {
      const s = symbolIndex.get(r.symbol) as number
      ring.push({ symbol: s, timestamp: r.timestamp, id: r.id })
      lastValue.set(s, r.value)
    }
    yield batch
    batch = []
  }
  if (batch.length > 0) yield batch
}

function adversarialOptions(spec: WorkloadSpec): AdversarialOptions {
  return spec.batches === undefined ? {} : { batches: spec.batches }
}

/** The batches a workload writes, in order. */
export function workloadBatches(spec: WorkloadSpec): Iterable<GeneratedRecord[]> {
  const shape = streamShape(spec.records)
  switch (spec.name) {
    case 'in-order':
      return inOrder(shape, spec.seed)
    case 'late':
      return late(shape, spec.seed)
    case 'backfill':
      return backfill(shape, spec.seed)
    case 'corrections':
      return corrections(shape, spec.seed)
    case 'adversarial':
      return adversarialHistory(spec.seed, adversarialOptions(spec))
  }
}

/**
 * The workload's final records (the last write of each key) in time order
 * (timestamp, then symbol, then id), in batches of 1,000: what an in-order
 * writer would have written to reach the same data.
 */
export function* referenceBatches(spec: WorkloadSpec): Generator<GeneratedRecord[]> {
  const shape = streamShape(spec.records)
  switch (spec.name) {
    case 'in-order':
    case 'late':
    case 'backfill':
      yield* inOrder(shape, spec.seed)
      return
    case 'corrections': {
      const fixes = new Map<string, GeneratedRecord>()
      for (const batch of corrections(shape, spec.seed, (record) => fixes.set(recordKey(record), record))) void batch
      for (const batch of inOrder(shape, spec.seed)) yield batch.map((record) => fixes.get(recordKey(record)) ?? record)
      return
    }
    case 'adversarial': {
      const last = new Map<string, GeneratedRecord>()
      for (const batch of adversarialHistory(spec.seed, adversarialOptions(spec))) for (const record of batch) last.set(recordKey(record), record)
      const all = [...last.values()].sort(
        (a, b) => a.timestamp - b.timestamp || (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      )
      for (let i = 0; i < all.length; i += BATCH) yield all.slice(i, i + BATCH)
      return
    }
  }
}
