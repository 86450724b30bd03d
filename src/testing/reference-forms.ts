/**
 * The reference model's forms, each computed by its definition over plain
 * arrays (filter, sort, visit every bucket): the range form and gap fill,
 * candles, as-of lookups with a direction, and TWAP. Part of the model in
 * reference-model.ts, so it shares no code with src/engine either.
 */
import type { PriceRecord, SampledRecord } from '../types.js'
import { NearNumber } from './near-number.js'

/** More buckets than the model enumerates one by one (a query that wide is checked by the unit tests). */
export class ModelTooBig extends Error {}
const MODEL_BUCKETS = 200_000

/** A bucket grid: buckets start at `origin + k·interval`; only `[from, to]` counts. */
export interface Grid {
  readonly from: number
  readonly to: number
  readonly interval: number
  readonly origin: number
}

/** Every bucket index of the grid's range, oldest first. */
function bucketsOf(grid: Grid): number[] {
  const first = Math.floor((grid.from - grid.origin) / grid.interval)
  const last = Math.floor((grid.to - grid.origin) / grid.interval)
  if (last - first + 1 > MODEL_BUCKETS) throw new ModelTooBig()
  return Array.from({ length: last - first + 1 }, (_, i) => first + i)
}

const startOf = (grid: Grid, k: number) => grid.origin + k * grid.interval
const endOf = (grid: Grid, k: number) => Math.min(grid.to, grid.origin + (k + 1) * grid.interval - 1)
const inBucket = (grid: Grid, k: number) => (r: PriceRecord) => Math.floor((r.timestamp - grid.origin) / grid.interval) === k
/** The latest record of `sorted` at or before `t`. */
const latestAtOrBefore = (sorted: readonly PriceRecord[], t: number) => sorted.filter((r) => r.timestamp <= t).at(-1)
const withMinutes = (r: PriceRecord): SampledRecord => ({ ...r, minutes: Math.floor(r.timestamp / 60_000) % 60 })

/**
 * The range form over a grid: each bucket's latest record; with fill, every
 * bucket, an empty one carrying the latest record at or before its end,
 * unless older than maxAge there (then the bucket is left out).
 */
export function referenceRange(inRange: readonly PriceRecord[], everything: readonly PriceRecord[], grid: Grid, fill: boolean, maxAge: number | undefined): unknown[] {
  if (!fill) {
    const latestPerBucket = new Map<number, PriceRecord>()
    // Ascending order, so the last record seen in a bucket is its latest.
    for (const r of inRange) latestPerBucket.set(Math.floor((r.timestamp - grid.origin) / grid.interval), r)
    return [...latestPerBucket.keys()].sort((a, b) => a - b).map((k) => withMinutes(latestPerBucket.get(k)!))
  }
  const out: unknown[] = []
  for (const k of bucketsOf(grid)) {
    const own = inRange.filter(inBucket(grid, k)).at(-1)
    const record = own ?? latestAtOrBefore(everything, endOf(grid, k))
    if (record === undefined) continue
    const age = endOf(grid, k) - record.timestamp
    if (own === undefined && maxAge !== undefined && age > maxAge) continue
    out.push({ bucket: startOf(grid, k), carried: own === undefined, age, record: withMinutes(record) })
  }
  return out
}

/** Candles: open/high/low/close (ties of value to the later record) and count; flat carried candles with fill. */
export function referenceCandles(inRange: readonly PriceRecord[], everything: readonly PriceRecord[], grid: Grid, fill: boolean, maxAge: number | undefined): unknown[] {
  const ref = (r: PriceRecord) => ({ id: r.id, timestamp: r.timestamp, value: r.value })
  const candleOf = (k: number, own: readonly PriceRecord[]) => {
    let high = own[0]!
    let low = own[0]!
    for (const r of own) {
      if (r.value >= high.value) high = r
      if (r.value <= low.value) low = r
    }
    return { bucket: startOf(grid, k), open: ref(own[0]!), high: ref(high), low: ref(low), close: ref(own.at(-1)!), count: own.length }
  }
  if (!fill) {
    const keys = [...new Set(inRange.map((r) => Math.floor((r.timestamp - grid.origin) / grid.interval)))].sort((a, b) => a - b)
    return keys.map((k) => candleOf(k, inRange.filter(inBucket(grid, k))))
  }
  const out: unknown[] = []
  for (const k of bucketsOf(grid)) {
    const own = inRange.filter(inBucket(grid, k))
    if (own.length > 0) {
      out.push(candleOf(k, own))
      continue
    }
    const carried = latestAtOrBefore(everything, endOf(grid, k))
    if (carried === undefined) continue
    const age = endOf(grid, k) - carried.timestamp
    if (maxAge !== undefined && age > maxAge) continue
    const r = ref(carried)
    out.push({ bucket: startOf(grid, k), open: r, high: r, low: r, close: r, count: 0, carried: true, age })
  }
  return out
}

/** The as-of lookup with a direction and tolerance over one symbol's records, sorted. */
export function referenceAsOf(sorted: readonly PriceRecord[], t: number, direction: string, tolerance: number | undefined): PriceRecord | undefined {
  const near = (r: PriceRecord) => tolerance === undefined || Math.abs(r.timestamp - t) <= tolerance
  const before = sorted.filter((r) => r.timestamp <= t && near(r)).at(-1)
  const after = sorted.find((r) => r.timestamp >= t && near(r))
  if (direction === 'before') return before
  if (direction === 'after') return after
  if (before === undefined || after === undefined) return before ?? after
  return t - before.timestamp <= after.timestamp - t ? before : after
}

/**
 * TWAP by its definition: each record is in force from its timestamp until
 * the next record's (the last until `to`); its weight is the part of that
 * inside `[from, to)`. The average is computed exactly (BigInt) and compared
 * within a few units in the last place of the largest value (and, for
 * subnormal values, a smallest double per record).
 */
export function referenceTwap(sorted: readonly PriceRecord[], from: number, to: number): unknown {
  const upTo = sorted.filter((r) => r.timestamp <= to)
  if (upTo.length === 0) return undefined
  const ref = (r: PriceRecord) => ({ id: r.id, timestamp: r.timestamp, value: r.value })
  const start = Math.max(from, upTo[0]!.timestamp)
  const weights = upTo.map((r, i) => {
    const until = i + 1 < upTo.length ? upTo[i + 1]!.timestamp : to
    return Math.max(0, Math.min(until, to) - Math.max(r.timestamp, from))
  })
  const last = upTo.at(-1)!
  const first = latestAtOrBefore(upTo, start)!
  const base = (count: number) => ({ from, to, start, count, first: ref(first), last: ref(last) })
  if (to === start) return { twap: last.value, ...base(1) }
  const used = upTo.filter((_, i) => weights[i]! > 0)
  const exact = exactWeightedMean(used.map((r) => r.value), weights.filter((w) => w > 0), to - start)
  const scale = Math.max(...used.map((r) => Math.abs(r.value)))
  // Units in the last place of the largest value; and with subnormal values, whose products round to a
  // multiple of the smallest double (an error absolute, not relative), about one of those per term.
  return { twap: new NearNumber(exact, scale * 1e-12 + (used.length + 1) * Number.MIN_VALUE), ...base(used.length) }
}

/** Σ values·weights / total, rounded once: values as exact binary fractions, summed as BigInt. */
function exactWeightedMean(values: readonly number[], weights: readonly number[], total: number): number {
  const parts = values.map((v) => {
    const view = new DataView(new ArrayBuffer(8))
    view.setFloat64(0, v)
    const bits = view.getBigUint64(0)
    const sign = bits >> 63n === 1n ? -1n : 1n
    const exponent = Number((bits >> 52n) & 0x7ffn)
    const fraction = bits & ((1n << 52n) - 1n)
    const mantissa = exponent === 0 ? fraction : fraction | (1n << 52n)
    return { mantissa: sign * mantissa, power: (exponent === 0 ? 1 : exponent) - 1075 }
  })
  const low = Math.min(...parts.map((p) => p.power))
  let sum = 0n
  parts.forEach((p, i) => {
    sum += p.mantissa * (1n << BigInt(p.power - low)) * BigInt(weights[i]!)
  })
  // 64 significant bits of the quotient, then its binary exponent applied in two halves (no overflow on the way).
  let quotient = (sum << 128n) / BigInt(total)
  let exponent = low - 128
  const bits = (quotient < 0n ? -quotient : quotient).toString(2).length
  if (bits > 64) {
    quotient >>= BigInt(bits - 64)
    exponent += bits - 64
  }
  const half = Math.trunc(exponent / 2)
  return Number(quotient) * 2 ** half * 2 ** (exponent - half)
}
