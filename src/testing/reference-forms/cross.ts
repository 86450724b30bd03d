/**
 * The reference model of cross rates, written apart from the engine (no
 * shared code): at time `t` each leg is the newest record of its symbol with
 * `timestamp <= t` (ties broken by the greatest id in UTF-8 byte order); the
 * rate is `quote.value / base.value`, at the newer leg's timestamp, with
 * `age` the distance between the legs. Every answer is found by filtering
 * all records again at every time it needs: slow and plain on purpose.
 */
import type { PriceStoreErrorCode } from '../../errors.js'
import type { PriceRecord } from '../../types.js'
import { referenceTwap } from './twap.js'

interface ReferenceLeg { id: string; timestamp: number; value: number }
interface ReferencePoint { value: number; timestamp: number; age: number; legs: { quote: ReferenceLeg; base: ReferenceLeg } }

/** A reference cross-rate outcome: a point, or why it was refused and the legs there were. */
export type ReferenceCross =
  | { readonly point: ReferencePoint }
  | { readonly refused: string; readonly legs: { quote?: ReferenceLeg; base?: ReferenceLeg } }

/** The cross rate of `quote` in `base` at time `t` over all records (any symbols, any order). */
export function referenceCross(records: readonly PriceRecord[], quote: string, base: string, t: number, maxAge: number | undefined): ReferenceCross {
  const q = newestAtOrBefore(records.filter((r) => r.symbol === quote), t)
  const b = newestAtOrBefore(records.filter((r) => r.symbol === base), t)
  if (!q) return { refused: 'no-quote', legs: b ? { base: leg(b) } : {} }
  if (!b) return { refused: 'no-base', legs: { quote: leg(q) } }
  const legs = { quote: leg(q), base: leg(b) }
  const age = q.timestamp > b.timestamp ? q.timestamp - b.timestamp : b.timestamp - q.timestamp
  if (maxAge !== undefined && age > maxAge) return { refused: 'legs-too-far-apart', legs }
  if (b.value === 0) return { refused: 'base-zero', legs }
  const value = q.value / b.value
  if (Number.isNaN(value) || value === Infinity || value === -Infinity) return { refused: 'not-finite', legs }
  return { point: { value, timestamp: q.timestamp > b.timestamp ? q.timestamp : b.timestamp, age, legs } }
}

/** The latest cross rate: each leg is its symbol's newest record. */
export function referenceLatestCross(records: readonly PriceRecord[], quote: string, base: string, maxAge: number | undefined): ReferenceCross {
  return referenceCross(records, quote, base, Number.MAX_SAFE_INTEGER, maxAge)
}

/** A cross-rate query as the reference reads it (each parameter already parsed on its own). */
export interface ReferenceCrossQuery {
  quote?: string
  base?: string
  maxAge?: number
  from?: number
  to?: number
  interval?: number
  origin?: number
  aggregate?: string
  offset?: number
  limit?: number
  /** Every parameter given, by name. */
  given: readonly string[]
}

/** The reference's answer to a cross-rate query, or the error (and the parameter it names). */
export type ReferenceCrossResult =
  | { readonly answer: unknown }
  | { readonly error: PriceStoreErrorCode; readonly parameter: string; readonly details?: { count: number; cap: number }; readonly whileAnswering?: true }

/** Answers `GET /prices?quote=…&base=…` from all records, by the rules of docs/semantics.md ("Cross rates"). */
export function referenceCrossQuery(records: readonly PriceRecord[], q: ReferenceCrossQuery, maxRangePoints: number): ReferenceCrossResult {
  const error = (code: PriceStoreErrorCode, parameter: string) => ({ error: code, parameter })
  for (const name of ['symbol', 'symbols', 'fill', 'direction', 'tolerance', 'fields']) if (q.given.includes(name)) return error('PRICE_INVALID_QUERY', name)
  if (q.quote === undefined) return error('PRICE_INVALID_QUERY', 'quote')
  if (q.base === undefined) return error('PRICE_INVALID_QUERY', 'base')
  if (q.quote === q.base) return error('PRICE_INVALID_QUERY', 'base')
  const series = q.interval !== undefined || q.aggregate !== undefined
  if (q.aggregate === 'twap' && q.interval !== undefined) return error('PRICE_INVALID_INTERVAL', 'interval')
  if (q.aggregate === 'candles' && q.interval === undefined) return error('PRICE_INVALID_INTERVAL', 'interval')
  if (series && q.from === undefined) return error('PRICE_INVALID_RANGE', 'fromTimestamp')
  if (series && q.to === undefined) return error('PRICE_INVALID_RANGE', 'toTimestamp')
  if (q.interval === undefined && q.given.includes('origin')) return error('PRICE_INVALID_INTERVAL', 'origin')
  if (q.interval === undefined && q.given.includes('offset')) return error('PRICE_INVALID_QUERY', 'offset')
  if (q.interval === undefined && q.given.includes('limit')) return error('PRICE_INVALID_QUERY', 'limit')
  if (!series && q.from !== undefined) return error('PRICE_INVALID_QUERY', 'fromTimestamp')
  if (q.from !== undefined && q.to !== undefined && q.from > q.to) return error('PRICE_INVALID_RANGE', 'fromTimestamp')
  const { quote, base, maxAge } = q
  const unknown = (): ReferenceCrossResult | undefined => {
    // Found while answering (the engine asks the store's symbols only then), after the cap.
    if (!records.some((r) => r.symbol === quote)) return { ...error('PRICE_INVALID_SYMBOL', 'quote'), whileAnswering: true }
    if (!records.some((r) => r.symbol === base)) return { ...error('PRICE_INVALID_SYMBOL', 'base'), whileAnswering: true }
    return undefined
  }
  if (!series) {
    const at = q.to ?? Number.MAX_SAFE_INTEGER
    return unknown() ?? { answer: { quote, base, ...(q.to === undefined ? {} : { at: q.to }), ...referenceCross(records, quote, base, at, maxAge) } }
  }
  const from = q.from as number
  const to = q.to as number
  if (q.aggregate === 'twap') return unknown() ?? { answer: { quote, base, from, to, ...(referenceCrossTwap(records, quote, base, from, to, maxAge) as object) } }
  const interval = q.interval as number
  // BigInt: the remainder of a signed origin must not round near 2^53.
  const origin = Number(((BigInt(q.origin ?? 0) % BigInt(interval)) + BigInt(interval)) % BigInt(interval))
  // Every bucket of the grid meeting the window, then offset and limit; counted before any is listed (a grid may be huge).
  const firstIndex = Math.floor((from - origin) / interval)
  const total = Math.floor((to - origin) / interval) - firstIndex + 1
  const offset = q.offset ?? 0
  const size = Math.max(0, Math.min(total - offset, q.limit ?? Infinity))
  if (size > maxRangePoints) return { error: 'PRICE_RANGE_TOO_LARGE', parameter: 'interval', details: { count: size, cap: maxRangePoints } }
  const page = Array.from({ length: size }, (_, i) => origin + (firstIndex + offset + i) * interval)
  const missing = unknown()
  if (missing !== undefined) return missing
  const end = (bucket: number) => Math.min(bucket + interval - 1, to)
  if (q.aggregate === 'candles') {
    return { answer: page.map((bucket) => referenceCrossCandle(records, quote, base, bucket, Math.max(bucket, from), end(bucket), maxAge)) }
  }
  return { answer: page.map((bucket) => ({ bucket, at: end(bucket), ...referenceCross(records, quote, base, end(bucket), maxAge) })) }
}

/** The derived series over `start..end`: the rate at `start`, then at each millisecond holding a record of either leg. */
function referenceSeries(records: readonly PriceRecord[], quote: string, base: string, start: number, end: number, maxAge: number | undefined): { at: number; outcome: ReferenceCross }[] {
  const times = new Set([start])
  for (const r of records) if ((r.symbol === quote || r.symbol === base) && r.timestamp > start && r.timestamp <= end) times.add(r.timestamp)
  return [...times].sort((a, b) => a - b).map((at) => ({ at, outcome: referenceCross(records, quote, base, at, maxAge) }))
}

function referenceCrossCandle(records: readonly PriceRecord[], quote: string, base: string, bucket: number, start: number, end: number, maxAge: number | undefined): unknown {
  const series = referenceSeries(records, quote, base, start, end, maxAge)
  const points = series.flatMap(({ outcome }) => ('point' in outcome ? [outcome.point] : []))
  const refused = series.length - points.length
  if (points.length === 0) {
    const last = series[series.length - 1]!.outcome as { refused: string }
    return { bucket, points: 0, refused, reason: last.refused }
  }
  // High and low: the greatest and least value; a tie goes to the later point.
  let high = points[0]!
  let low = points[0]!
  for (const p of points) {
    if (!(p.value < high.value)) high = p
    if (!(p.value > low.value)) low = p
  }
  return { bucket, open: points[0], high, low, close: points[points.length - 1], points: points.length, refused }
}

/**
 * The TWAP of the derived series: it starts when both legs are in force;
 * any refused rate from then until `to` refuses the whole average (the first
 * one, with its time). With no rate in force by `to` at all, the refusal is
 * the one at `to` (`no-quote` / `no-base` and the legs there). The average
 * itself is the single-symbol reference TWAP of the derived rates, as
 * records in force from their times.
 */
function referenceCrossTwap(records: readonly PriceRecord[], quote: string, base: string, from: number, to: number, maxAge: number | undefined): unknown {
  const series = referenceSeries(records, quote, base, from, to, maxAge)
  const missing = (o: ReferenceCross) => 'refused' in o && (o.refused === 'no-quote' || o.refused === 'no-base')
  const live = series.filter(({ outcome }) => !missing(outcome))
  // No rate in force by `to` at all: refused as the rate at `to` itself, asked afresh rather than read off the series.
  if (live.length === 0) return { ...(referenceCross(records, quote, base, to, maxAge) as object), at: to }
  const bad = live.find(({ outcome }) => 'refused' in outcome)
  if (bad !== undefined) return { ...(bad.outcome as object), at: bad.at }
  const rates = live.map(({ at, outcome }) => ({ id: '', symbol: '', timestamp: at, value: (outcome as { point: ReferencePoint }).point.value }) as unknown as PriceRecord)
  const twap = referenceTwap(rates, from, to) as { twap: unknown; start: number; count: number; first: ReferenceLeg; last: ReferenceLeg }
  const pointAt = (t: number) => (live.find(({ at }) => at === t)!.outcome as { point: ReferencePoint }).point
  return { twap: twap.twap, start: twap.start, count: twap.count, first: pointAt(twap.first.timestamp), last: pointAt(twap.last.timestamp) }
}

function leg(r: PriceRecord): ReferenceLeg {
  return { id: r.id, timestamp: r.timestamp, value: r.value }
}

function newestAtOrBefore(records: readonly PriceRecord[], t: number): PriceRecord | undefined {
  let best: PriceRecord | undefined
  for (const r of records) {
    if (r.timestamp > t) continue
    if (best === undefined || r.timestamp > best.timestamp
      || (r.timestamp === best.timestamp && Buffer.compare(Buffer.from(r.id, 'utf8'), Buffer.from(best.id, 'utf8')) > 0)) best = r
  }
  return best
}
