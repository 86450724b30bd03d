/**
 * A quality request, checked: the typed options of `store.quality()` and
 * the parameters of `GET /prices/quality` (and the CLI's flags, which give
 * the same strings) become one frozen {@link QualityQuery}, with the coded
 * errors of the query forms (`PRICE_INVALID_RANGE` for the window,
 * `PRICE_INVALID_INTERVAL` for the grid, `PRICE_INVALID_SYMBOL`,
 * `PRICE_INVALID_QUERY` for the rest).
 */
import { PriceStoreError, describeValue, type PriceStoreErrorCode } from '../../errors.js'
import { fail } from '../../rules/query-errors.js'
import { parseTimeText, readClockOnce, timeTextProblem } from '../../rules/time-text.js'
import type { Limits, QueryParams } from '../../types.js'
import { bucketCount, toGrid } from '../grid.js'
import { checkOrder, checkSymbol, valuesOf } from '../parse-query.js'
import { optionsObject, symbolList, type QueryOptions } from '../typed-queries.js'
import type { QualityQuery } from './quality-types.js'

/** Options of `store.quality()`. */
export interface QualityOptions extends QueryOptions {
  /** Only these symbols (at most `maxSymbols`); every stored symbol when left out. */
  readonly symbols?: readonly string[]
  /** First millisecond of the window (inclusive). */
  readonly from: number
  /** Last millisecond of the window (inclusive). */
  readonly to: number
  /** Adds per-bucket counts on a grid of this width (ms); `symbols × buckets` may be at most `maxRangePoints`. */
  readonly interval?: number
  /** Shift of the bucket grid (ms), as for the range form; only with `interval`. */
  readonly origin?: number
  /** Gaps longer than this (ms) are listed; default: 3 × each symbol's median gap. */
  readonly gapThreshold?: number
  /** The time ages are measured from (ms since the epoch); default `Date.now()`. */
  readonly now?: number
  /** Also read each record's `source` (decodes every record's body: slower); default `false`. */
  readonly sources?: boolean
  /**
   * Read each record's value for the largest moves (default `true`): `false` leaves them out (`moves` is then
   * `null`). The values come from the chunks' key columns either way, so `false` saves little: the delta parts of
   * hours that have them (their keys come from the heads entry instead). `sources: true` needs the values.
   */
  readonly moves?: boolean
}

/**
 * Checks the options of `store.quality()` into a query. `clock` gives `now` when the options do not.
 * @throws PriceStoreError `PRICE_INVALID_RANGE`, `PRICE_INVALID_INTERVAL`, `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`,
 *   `PRICE_RANGE_TOO_LARGE` (buckets of the named symbols over `maxRangePoints`)
 */
export function toQualityQuery(rawOptions: unknown, limits: Limits, clock: () => number = Date.now): QualityQuery {
  const options = optionsObject<Partial<QualityOptions>>(rawOptions)
  const symbols = options.symbols === undefined ? 'all' : symbolList(options.symbols, limits)
  const from = integer('from', options.from, 'PRICE_INVALID_RANGE', 0)
  const to = integer('to', options.to, 'PRICE_INVALID_RANGE', 0)
  if (from === undefined || to === undefined) {
    const name = from === undefined ? 'from' : 'to'
    throw fail('PRICE_INVALID_RANGE', name, `a quality report needs both from and to (${name} is missing)`)
  }
  checkOrder(from, to)
  const interval = integer('interval', options.interval, 'PRICE_INVALID_INTERVAL', 1)
  const origin = options.origin
  if (origin !== undefined && (typeof origin !== 'number' || !Number.isSafeInteger(origin))) {
    throw fail('PRICE_INVALID_INTERVAL', 'origin', `origin must be a safe integer, negative allowed (got ${describeValue(origin)})`)
  }
  if (origin !== undefined && interval === undefined) {
    throw fail('PRICE_INVALID_INTERVAL', 'origin', `origin shifts the buckets: give it with interval (got origin=${origin} without interval)`)
  }
  const gapThreshold = integer('gapThreshold', options.gapThreshold, 'PRICE_INVALID_QUERY', 1)
  const now = integer('now', options.now, 'PRICE_INVALID_QUERY', 0) ?? clock()
  const sources = options.sources ?? false
  if (typeof sources !== 'boolean') throw fail('PRICE_INVALID_QUERY', 'sources', `sources must be true or false (got ${describeValue(sources)})`)
  const moves = options.moves ?? true
  if (typeof moves !== 'boolean') throw fail('PRICE_INVALID_QUERY', 'moves', `moves must be true or false (got ${describeValue(moves)})`)
  if (sources && !moves) throw fail('PRICE_INVALID_QUERY', 'moves', 'sources: true reads every record whole: leave moves on with it')
  const query: QualityQuery = {
    symbols, from, to, now, sources, moves,
    ...(interval === undefined ? {} : { grid: toGrid(from, to, interval, origin) }),
    ...(gapThreshold === undefined ? {} : { gapThreshold }),
  }
  if (symbols !== 'all') checkBuckets(query, symbols.length, limits)
  return Object.freeze(query)
}

/**
 * Refuses a report whose buckets, over `symbolCount` symbols, would pass `maxRangePoints`.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` with `details.count` and `details.cap`
 */
export function checkBuckets(query: QualityQuery, symbolCount: number, limits: Limits): void {
  if (query.grid === undefined) return
  const buckets = bucketCount(query.grid)
  const count = buckets * symbolCount
  if (count <= limits.maxRangePoints) return
  throw new PriceStoreError(
    'PRICE_RANGE_TOO_LARGE',
    `the report would hold ${count} buckets (${symbolCount} symbols × ${buckets}), over maxRangePoints ${limits.maxRangePoints}: widen interval, shorten the window or name fewer symbols`,
    { details: { parameter: 'interval', count, cap: limits.maxRangePoints } },
  )
}

/** The parameters of `GET /prices/quality`, in the order their errors take precedence. */
export const QUALITY_PARAMETERS = ['symbol', 'symbols', 'fromTimestamp', 'toTimestamp', 'interval', 'origin', 'gapThreshold', 'now', 'sources', 'moves'] as const

const PLAIN_INTEGER = /^[0-9]+$/
const SIGNED_INTEGER = /^-?[0-9]+$/

/**
 * `GET /prices/quality` parameters as the options of `store.quality()` (then checked by {@link toQualityQuery}):
 * `symbols` (comma-separated) or `symbol`, `fromTimestamp`, `toTimestamp` and `now` (times in the one time syntax
 * of `parseTimeText`: ms, ISO 8601, `now`, `now-1d`; relative ones from one reading of `clock`), `interval`, `origin`,
 * `gapThreshold` (integers in ms), `sources` and `moves` (`true` or `false`). Unknown parameters are ignored.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for a repeated parameter, or as {@link toQualityQuery} for a malformed one
 */
export function qualityOptionsOf(params: QueryParams, clock: () => number = Date.now): QualityOptions {
  const raw = new Map<string, string>()
  for (const name of QUALITY_PARAMETERS) {
    const values = valuesOf(params, name)
    if (values.length > 1) throw fail('PRICE_INVALID_QUERY', name, `parameter ${name} must be given at most once (got ${values.map(describeValue).join(', ')})`)
    if (values.length === 1) raw.set(name, values[0] as string)
  }
  const symbol = raw.get('symbol')
  if (symbol !== undefined) checkSymbol('symbol', symbol)
  const list = raw.get('symbols')
  if (symbol !== undefined && list !== undefined) throw fail('PRICE_INVALID_QUERY', 'symbols', 'give either symbol or symbols, not both')
  const flag = (name: 'sources' | 'moves'): boolean | undefined => {
    const text = raw.get(name)
    if (text === undefined) return undefined
    if (text !== 'true' && text !== 'false') throw fail('PRICE_INVALID_QUERY', name, `${name} must be "true" or "false" (got ${describeValue(text)})`)
    return text === 'true'
  }
  const sources = flag('sources')
  const moves = flag('moves')
  const number = (name: string, code: PriceStoreErrorCode, pattern = PLAIN_INTEGER): number | undefined => {
    const text = raw.get(name)
    if (text === undefined) return undefined
    if (!pattern.test(text) || !Number.isSafeInteger(Number(text))) throw fail(code, name, `${name} must be an integer in ms (got ${describeValue(text)})`)
    return Number(text)
  }
  const readNow = readClockOnce(clock)
  const time = (name: string, code: PriceStoreErrorCode): number | undefined => {
    const text = raw.get(name)
    if (text === undefined) return undefined
    const value = parseTimeText(text, readNow)
    if (value === undefined) throw fail(code, name, timeTextProblem(name, text))
    return value
  }
  const from = time('fromTimestamp', 'PRICE_INVALID_RANGE')
  const to = time('toTimestamp', 'PRICE_INVALID_RANGE')
  if (from === undefined || to === undefined) {
    const name = from === undefined ? 'fromTimestamp' : 'toTimestamp'
    throw fail('PRICE_INVALID_RANGE', name, `a quality report needs both fromTimestamp and toTimestamp (${name} is missing)`)
  }
  checkOrder(from, to)
  const interval = number('interval', 'PRICE_INVALID_INTERVAL')
  if (interval === 0) throw fail('PRICE_INVALID_INTERVAL', 'interval', 'interval must be at least 1 ms (got 0)')
  const origin = number('origin', 'PRICE_INVALID_INTERVAL', SIGNED_INTEGER)
  const gapThreshold = number('gapThreshold', 'PRICE_INVALID_QUERY')
  if (gapThreshold === 0) throw fail('PRICE_INVALID_QUERY', 'gapThreshold', 'gapThreshold must be at least 1 ms (got 0)')
  const now = time('now', 'PRICE_INVALID_QUERY')
  return {
    from, to,
    ...(symbol !== undefined ? { symbols: [symbol] } : list !== undefined ? { symbols: list.split(',') } : {}),
    ...(interval === undefined ? {} : { interval }),
    ...(origin === undefined ? {} : { origin }),
    ...(gapThreshold === undefined ? {} : { gapThreshold }),
    ...(now === undefined ? {} : { now }),
    ...(sources === undefined ? {} : { sources }),
    ...(moves === undefined ? {} : { moves }),
  }
}

/** An optional safe integer of at least `min`. */
function integer(parameter: string, value: unknown, code: PriceStoreErrorCode, min: number): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw fail(code, parameter, `${parameter} must be a safe integer >= ${min} (got ${describeValue(value)})`)
  }
  return value
}
