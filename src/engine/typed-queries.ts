import type { PriceStoreErrorCode } from '../errors.js'
import { describeValue } from '../errors.js'
import type { LatestQuery, Limits, RangeQuery, SeveralQuery } from '../types.js'
import { checkLimit, checkOrder, checkSymbol, fail } from './parse-query.js'

/** Options of the latest-N and history forms. */
export interface LatestOptions {
  /** How many records, newest first (default 1, at most `maxLimit`). */
  readonly limit?: number
  /** How many of the newest records to skip first (default 0). */
  readonly offset?: number
  /** Only records at or after this time (ms since the epoch). */
  readonly from?: number
  /** Only records at or before this time: the answer "as of" `to`. */
  readonly to?: number
}

/** Options of the several-tokens form. */
export interface SeveralOptions {
  readonly from?: number
  readonly to?: number
}

/** Options of the range form. */
export interface RangeOptions {
  /** First millisecond of the range (inclusive). */
  readonly from: number
  /** Last millisecond of the range (inclusive). */
  readonly to: number
  /** Bucket width in ms; buckets are aligned to the Unix epoch. */
  readonly interval: number
  /** Most records to return, after `offset` (no default). */
  readonly limit?: number
  /** Sampled records to skip first (default 0). */
  readonly offset?: number
}

/** Validates the typed latest-N options into a query, with the same rules as `parseQuery`. */
export function toLatestQuery(symbol: unknown, rawOptions: unknown, limits: Limits): LatestQuery {
  checkSymbol('symbol', symbol)
  const options = optionsObject<LatestOptions>(rawOptions)
  const limit = optionalInteger('limit', options.limit, 'PRICE_INVALID_QUERY') ?? 1
  checkLimit(limit, limits.maxLimit)
  const offset = optionalInteger('offset', options.offset, 'PRICE_INVALID_QUERY') ?? 0
  return Object.freeze({ kind: 'latest', symbol, limit, offset, ...toWindow(options) })
}

/** Validates the typed several-tokens arguments into a query; `undefined` symbols means every symbol. */
export function toSeveralQuery(symbols: unknown, rawOptions: unknown, limits: Limits): SeveralQuery {
  const options = optionsObject<SeveralOptions>(rawOptions)
  let list: readonly string[] | 'all' = 'all'
  if (symbols !== undefined) {
    if (!Array.isArray(symbols)) throw fail('PRICE_INVALID_SYMBOL', 'symbols', `symbols must be an array (got ${describeValue(symbols)})`)
    const distinct = new Set<string>()
    for (const symbol of symbols) {
      checkSymbol('symbols', symbol)
      distinct.add(symbol)
    }
    if (distinct.size > limits.maxSymbols) {
      throw fail('PRICE_INVALID_QUERY', 'symbols', `symbols may name at most ${limits.maxSymbols} distinct symbols (got ${distinct.size})`)
    }
    list = Object.freeze([...distinct])
  }
  return Object.freeze({ kind: 'several', symbols: list, ...toWindow(options) })
}

/** Validates the typed range options into a query; `limit` may be left out. */
export function toRangeQuery(symbol: unknown, rawOptions: unknown, limits: Limits): RangeQuery {
  checkSymbol('symbol', symbol)
  const options = optionsObject<Partial<RangeOptions>>(rawOptions)
  const limit = optionalInteger('limit', options.limit, 'PRICE_INVALID_QUERY')
  if (limit !== undefined) checkLimit(limit, limits.maxLimit)
  const offset = optionalInteger('offset', options.offset, 'PRICE_INVALID_QUERY') ?? 0
  const { from, to } = toWindow(options)
  const interval = optionalInteger('interval', options.interval, 'PRICE_INVALID_INTERVAL')
  if (interval === undefined || interval < 1) {
    throw fail('PRICE_INVALID_INTERVAL', 'interval', `interval must be an integer of at least 1 ms (got ${describeValue(options.interval)})`)
  }
  if (from === undefined || to === undefined) {
    const missing = from === undefined ? 'from' : 'to'
    throw fail('PRICE_INVALID_RANGE', missing, `the range form needs both from and to (${missing} is missing)`)
  }
  return Object.freeze({ kind: 'range', symbol, from, to, interval, offset, ...(limit === undefined ? {} : { limit }) })
}

/** Options come from JavaScript callers too: `undefined` means none, anything else must be an object. */
function optionsObject<T>(options: unknown): T {
  if (options === undefined) return {} as T
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw fail('PRICE_INVALID_QUERY', 'options', `options must be an object (got ${describeValue(options)})`)
  }
  return options as T
}

function toWindow(options: { readonly from?: number; readonly to?: number }): { from?: number; to?: number } {
  const from = optionalInteger('from', options.from, 'PRICE_INVALID_RANGE')
  const to = optionalInteger('to', options.to, 'PRICE_INVALID_RANGE')
  checkOrder(from, to)
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }
}

function optionalInteger(parameter: string, value: unknown, code: PriceStoreErrorCode): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw fail(code, parameter, `${parameter} must be a safe integer >= 0 (got ${describeValue(value)})`)
  }
  return value
}
