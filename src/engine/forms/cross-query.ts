import type { CrossCandle, CrossQuery, CrossRate, CrossSample, CrossTwap } from '../../types.js'
import { checkCrossPair } from '../../rules/cross-symbol.js'
import { fail } from '../../rules/query-errors.js'
import { toGrid } from '../grid.js'

/**
 * The parameters of a cross-rate query once each is read on its own (HTTP
 * strings parsed, typed options checked): the rules between them are
 * {@link toCrossQuery}'s, the same for `GET /prices` and `store.cross()`.
 */
export interface CrossParts {
  readonly quote: unknown
  readonly base: unknown
  readonly maxAge?: unknown | undefined
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly interval?: number | undefined
  readonly origin?: number | undefined
  readonly aggregate?: 'candles' | 'twap' | undefined
  readonly offset?: number | undefined
  readonly limit?: number | undefined
}

/** How the window's ends are named where a rule is broken: HTTP says `fromTimestamp`, the typed method `from`. */
export interface CrossNames {
  readonly from: string
  readonly to: string
}

/**
 * Builds the frozen cross-rate query the parts ask for: at one time (no
 * `interval`, no `aggregate`), a range (`interval`), candles
 * (`aggregate: 'candles'` with `interval`) or a TWAP (`aggregate: 'twap'`).
 * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_INVALID_INTERVAL`, naming the parameter
 */
export function toCrossQuery(parts: CrossParts, names: CrossNames): CrossQuery {
  if (parts.quote === undefined || parts.base === undefined) {
    const missing = parts.quote === undefined ? 'quote' : 'base'
    throw fail('PRICE_INVALID_QUERY', missing, `a cross rate needs both quote and base (got no ${missing})`)
  }
  const pair = checkCrossPair(parts.quote, parts.base, parts.maxAge)
  if (pair instanceof Error) throw pair
  const { from, to, interval, origin, aggregate, offset, limit } = parts
  const common = { quote: pair.quote, base: pair.base, ...(pair.maxAge === undefined ? {} : { maxAge: pair.maxAge }) }
  if (aggregate === 'twap' && interval !== undefined) {
    throw fail('PRICE_INVALID_INTERVAL', 'interval', `aggregate=twap averages the whole window: leave out interval (got interval=${interval})`)
  }
  if (aggregate === 'candles' && interval === undefined) {
    throw fail('PRICE_INVALID_INTERVAL', 'interval', 'aggregate=candles needs interval, the width of each candle in ms')
  }
  if ((aggregate !== undefined || interval !== undefined) && (from === undefined || to === undefined)) {
    const missing = from === undefined ? names.from : names.to
    throw fail('PRICE_INVALID_RANGE', missing, `a cross-rate series needs both ${names.from} and ${names.to} (${missing} is missing)`)
  }
  if (interval === undefined && origin !== undefined) {
    throw fail('PRICE_INVALID_INTERVAL', 'origin', `origin shifts the buckets of a series: give it with interval (got origin=${origin} without interval)`)
  }
  if (interval === undefined && (offset !== undefined || limit !== undefined)) {
    const given = offset === undefined ? 'limit' : 'offset'
    throw fail('PRICE_INVALID_QUERY', given, `${given} pages the buckets of a cross-rate range or candles: give it with interval`)
  }
  if (aggregate === undefined && interval === undefined && from !== undefined) {
    throw fail('PRICE_INVALID_QUERY', names.from, `a cross rate at one time takes ${names.to} (as of it), not ${names.from} (got ${names.from}=${from}); give interval for a series or aggregate=twap for an average`)
  }
  if (from !== undefined && to !== undefined && from > to) {
    throw fail('PRICE_INVALID_RANGE', names.from, `${names.from} must not be after ${names.to} (got ${from} > ${to})`)
  }
  if (aggregate === 'twap') return Object.freeze({ kind: 'crossTwap', ...common, from: from as number, to: to as number })
  if (interval !== undefined) {
    return Object.freeze({
      kind: aggregate === 'candles' ? 'crossCandles' : 'crossRange',
      ...common,
      ...toGrid(from as number, to as number, interval, origin),
      offset: offset ?? 0,
      ...(limit === undefined ? {} : { limit }),
    })
  }
  return Object.freeze({ kind: 'cross', ...common, ...(to === undefined ? {} : { to }) })
}

/** Options of `store.cross()`: a rate at one time, or a series over `from..to` (docs/semantics.md, "Cross rates"). */
export interface CrossOptions {
  /** As of this time (ms); with `from`, the window's last millisecond. Absent at one time: the latest. */
  readonly to?: number
  /** The window's first millisecond, for a range, candles or a TWAP. */
  readonly from?: number
  /** Bucket width in ms: one rate per bucket (or a candle with `aggregate: 'candles'`). */
  readonly interval?: number
  /** Shift of the bucket grid in ms (default: the Unix epoch). */
  readonly origin?: number
  /** `'candles'`: OHLC of the derived series per bucket; `'twap'`: its time-weighted average over `from..to`. */
  readonly aggregate?: 'candles' | 'twap'
  /** The most ms between the legs' timestamps; a rate with legs farther apart is refused (marked, not left out). */
  readonly maxAge?: number
  /** Buckets to skip first (default 0). */
  readonly offset?: number
  /** Most buckets to return, after `offset`. */
  readonly limit?: number
  /** Cancels the query (`PRICE_ABORTED`). */
  readonly signal?: AbortSignal
}

/** What `store.cross()` answers for its options: candles, a TWAP, a range (with `interval`), or the rate at one time. */
export type CrossAnswerOf<O> = O extends { readonly aggregate: 'candles' } ? CrossCandle[]
  : O extends { readonly aggregate: 'twap' } ? CrossTwap
  : O extends { readonly interval: number } ? CrossSample[]
  : CrossRate
