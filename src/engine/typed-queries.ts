import type { PriceStoreErrorCode } from '../errors.js'
import { describeValue } from '../errors.js'
import { DEFAULT_LIMITS } from '../types.js'
import type { AsOfDirection, CandlesQuery, CrossQuery, LatestQuery, Limits, RangeQuery, SeveralQuery, TwapQuery } from '../types.js'
import { checkSignal } from '../rules/abort.js'
import { DIRECTIONS, checkChoice, toAsOf, toFill } from './form-rules.js'
import { toGrid } from './grid.js'
import { checkLimit, checkOrder, checkSymbol, validUntilRefusal } from './parse-query.js'
import { fail } from '../rules/query-errors.js'
import { toCrossQuery, type CrossOptions } from './forms/cross-query.js'
import type { QueryOptions } from './query-options.js'
import { checkScope } from './read-scope.js'

const NAMES = { from: 'from', to: 'to' } as const

export type { QueryOptions } from './query-options.js'

/** A directed or bounded as-of lookup (with `to`, without `from`, `limit` and `offset`). */
export interface AsOfOptions {
  /**
   * Which side of `to` the record may come from: `before` (at or before,
   * the default), `after` (at or after: the first in (timestamp, id) order)
   * or `nearest` (the closer; an equal distance goes to `before`).
   */
  readonly direction?: AsOfDirection
  /** The most ms the record may lie from `to`; none within it gives no record. */
  readonly tolerance?: number
}

/** The option of the record-answering forms: validity windows (docs/semantics.md, "Validity windows"). */
export interface ValidUntilOption {
  /**
   * `true`: every record in the answer carries `validUntil`, the timestamp
   * of the next record of its symbol in the store ((timestamp, id) order), or
   * `null` for the symbol's newest. Default `false`: the answer as without it.
   */
  readonly validUntil?: boolean
}

/** Options of the latest-N and history forms. */
export interface LatestOptions extends AsOfOptions, QueryOptions, ValidUntilOption {
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
export interface SeveralOptions extends AsOfOptions, QueryOptions, ValidUntilOption {
  readonly from?: number
  readonly to?: number
}

/** Options of the range form. */
export interface RangeOptions extends QueryOptions, ValidUntilOption {
  /** First millisecond of the range (inclusive). */
  readonly from: number
  /** Last millisecond of the range (inclusive). */
  readonly to: number
  /** Bucket width in ms; buckets start at `origin` (default: the Unix epoch). */
  readonly interval: number
  /**
   * Shift of the bucket grid in ms, any integer (e.g. `-7_200_000` makes day
   * buckets start at midnight UTC+2). Not the pagination `offset`.
   */
  readonly origin?: number
  /** Most buckets to return, after `offset` (no default). */
  readonly limit?: number
  /** Buckets to skip first (default 0). */
  readonly offset?: number
}

/** Gap filling of a bucketed form. */
export interface FillOptions {
  /**
   * `'prev'`: every bucket appears, an empty one carrying the latest record before it.
   * `'none'`: every bucket appears, an empty one as `count: 0` with no record.
   */
  readonly fill?: 'prev' | 'none'
  /** With `fill`: the oldest (in ms, at the bucket's end) a carried record may be; older ones are not carried. */
  readonly maxAge?: number
}

/** Options of the candles form. */
export interface CandleOptions extends RangeOptions, FillOptions {}

/**
 * The `fill` an options type may hold (`never` when it has none), so a typed method can say what it answers:
 * a `'none'` that may be there brings empty candles into the answer's type.
 */
export type FillOf<O> = 'fill' extends keyof O ? O['fill' & keyof O] : never

/** Options of the TWAP form. */
export interface TwapOptions extends QueryOptions {
  /** First millisecond of the window (inclusive). */
  readonly from: number
  /** Last millisecond of the window (inclusive). */
  readonly to: number
}

/** Validates the typed latest-N options into a query, with the same rules as `parseQuery`. */
export function toLatestQuery(symbol: unknown, rawOptions: unknown, limits: Limits): LatestQuery {
  checkSymbol('symbol', symbol)
  const options = optionsObject<LatestOptions>(rawOptions)
  const limit = optionalInteger('limit', options.limit, 'PRICE_INVALID_QUERY') ?? 1
  checkLimit(limit, limits.maxLimit)
  const offset = optionalInteger('offset', options.offset, 'PRICE_INVALID_QUERY') ?? 0
  const window = toWindow(options)
  const asOf = typedAsOf(options, window, optionalInteger('limit', options.limit, 'PRICE_INVALID_QUERY'), offset)
  return Object.freeze({ kind: 'latest', symbol, limit, offset, ...window, ...(asOf === undefined ? {} : { asOf }), ...validityOf(options) })
}

/** Validates the typed several-tokens arguments into a query; `undefined` symbols means every symbol. */
export function toSeveralQuery(symbols: unknown, rawOptions: unknown, limits: Limits): SeveralQuery {
  const options = optionsObject<SeveralOptions>(rawOptions)
  const list = symbols === undefined ? 'all' : symbolList(symbols, limits)
  const window = toWindow(options)
  const asOf = typedAsOf(options, window, undefined, 0)
  return Object.freeze({ kind: 'several', symbols: list, ...window, ...(asOf === undefined ? {} : { asOf }), ...validityOf(options) })
}

/** Validates the typed range options (with gap filling) into a query; `limit` may be left out. */
export function toRangeQuery(symbol: unknown, rawOptions: unknown, limits: Limits): RangeQuery {
  return toBucketedQuery('range', symbol, rawOptions, limits)
}

/** Validates the typed candles options into a query. */
export function toCandlesQuery(symbol: unknown, rawOptions: unknown, limits: Limits): CandlesQuery {
  const query: CandlesQuery = toBucketedQuery('candles', symbol, rawOptions, limits)
  if ((query as { readonly validUntil?: true }).validUntil === true) throw validUntilRefusal('candles are derived from records, not records')
  return query
}

/** Validates the typed TWAP arguments into a query; `undefined` symbols means every symbol. */
export function toTwapQuery(symbols: unknown, rawOptions: unknown, limits: Limits): TwapQuery {
  const options = optionsObject<Partial<TwapOptions>>(rawOptions)
  const list = symbols === undefined ? 'all' : symbolList(symbols, limits)
  const { from, to } = toWindow(options)
  if (from === undefined || to === undefined) throw missing(from)
  if (validityOf(options as ValidUntilOption).validUntil === true) throw validUntilRefusal('a TWAP is derived from records, not a record')
  return Object.freeze({ kind: 'twap', symbols: list, from, to })
}

/** Options of `store.export()`: which records to read, all of them when left out. */
export interface ExportOptions extends QueryOptions {
  /** Only these symbols (each once, in the store's order); every symbol when left out. An unknown symbol gives nothing. */
  readonly symbols?: readonly string[]
  /** Only records at or after this time (ms since the epoch). */
  readonly from?: number
  /** Only records at or before this time. */
  readonly to?: number
}

/** What an export reads, checked: `symbols` undefined means every symbol. */
export interface ExportSelection {
  readonly symbols?: readonly string[]
  readonly from?: number
  readonly to?: number
}

/**
 * Validates the options of an export. The symbol list has no `maxSymbols`
 * cap: an export is not a query answer, and reads one symbol at a time.
 * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_RANGE`, `PRICE_INVALID_QUERY`
 */
export function toExportSelection(rawOptions: unknown): ExportSelection {
  const options = optionsObject<ExportOptions>(rawOptions)
  const window = toWindow(options)
  if (options.symbols === undefined) return Object.freeze(window)
  return Object.freeze({ symbols: symbolList(options.symbols, { ...DEFAULT_LIMITS, maxSymbols: Number.MAX_SAFE_INTEGER }), ...window })
}

/**
 * The checked `signal` of any method's options (`undefined` for none).
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for options that are not an object or a `signal` that is not an AbortSignal
 */
export function signalOf(rawOptions: unknown): AbortSignal | undefined {
  return checkSignal(optionsObject<QueryOptions>(rawOptions).signal)
}

/**
 * The signal and scope of a plan-based read's options, checked.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for options that are not an object, `PRICE_INVALID_OPTIONS` for a bad signal or scope
 */
export function readOptionsOf(rawOptions: unknown): QueryOptions {
  const signal = signalOf(rawOptions)
  const scope = checkScope((rawOptions as QueryOptions | undefined)?.scope)
  return { ...(signal === undefined ? {} : { signal }), ...(scope === undefined ? {} : { scope }) }
}

function toBucketedQuery<K extends 'range' | 'candles'>(kind: K, symbol: unknown, rawOptions: unknown, limits: Limits): RangeQuery & CandlesQuery & { kind: K } {
  checkSymbol('symbol', symbol)
  const options = optionsObject<Partial<CandleOptions>>(rawOptions)
  const limit = optionalInteger('limit', options.limit, 'PRICE_INVALID_QUERY')
  if (limit !== undefined) checkLimit(limit, limits.maxLimit)
  const offset = optionalInteger('offset', options.offset, 'PRICE_INVALID_QUERY') ?? 0
  const { from, to } = toWindow(options)
  const interval = optionalInteger('interval', options.interval, 'PRICE_INVALID_INTERVAL')
  if (interval === undefined || interval < 1) {
    throw fail('PRICE_INVALID_INTERVAL', 'interval', `interval must be an integer of at least 1 ms (got ${describeValue(options.interval)})`)
  }
  const origin = checkedOrigin(options.origin)
  const fill = options.fill === undefined ? undefined : checkChoice('fill', options.fill, ['prev', 'none'], 'PRICE_INVALID_QUERY')
  const maxAge = optionalInteger('maxAge', options.maxAge, 'PRICE_INVALID_QUERY')
  const fillMode = toFill(fill, maxAge)
  if (from === undefined || to === undefined) throw missing(from)
  const validity = validityOf(options)
  return Object.freeze({
    kind, symbol, ...toGrid(from, to, interval, origin), offset,
    ...(limit === undefined ? {} : { limit }),
    ...(fillMode === undefined ? {} : { fill: fillMode }),
    ...validity,
  }) as RangeQuery & CandlesQuery & { kind: K }
}

/** The query's part for the `validUntil` option: `{ validUntil: true }` when asked, else nothing. @throws PriceStoreError `PRICE_INVALID_QUERY` */
export function validityOf(options: ValidUntilOption): { readonly validUntil?: true } {
  const { validUntil } = options
  if (validUntil !== undefined && typeof validUntil !== 'boolean') {
    throw fail('PRICE_INVALID_QUERY', 'validUntil', `validUntil must be true or false (got ${describeValue(validUntil)})`)
  }
  return validUntil === true ? { validUntil } : {}
}

function missing(from: number | undefined): Error {
  const name = from === undefined ? 'from' : 'to'
  return fail('PRICE_INVALID_RANGE', name, `this form needs both from and to (${name} is missing)`)
}

/** The as-of lookup the typed options ask for, under the rules `parseQuery` applies. */
function typedAsOf(options: AsOfOptions, window: { from?: number; to?: number }, limit: number | undefined, offset: number) {
  const direction = options.direction === undefined ? undefined : checkChoice('direction', options.direction, DIRECTIONS, 'PRICE_INVALID_QUERY')
  const tolerance = optionalInteger('tolerance', options.tolerance, 'PRICE_INVALID_QUERY')
  return toAsOf(direction, tolerance, { from: window.from, to: window.to, limit, offset }, NAMES)
}

/** Checks a typed symbol list: an array of valid symbols, at most `maxSymbols` distinct, kept in order. */
export function symbolList(symbols: unknown, limits: Limits): readonly string[] {
  if (!Array.isArray(symbols)) throw fail('PRICE_INVALID_SYMBOL', 'symbols', `symbols must be an array (got ${describeValue(symbols)})`)
  const distinct = new Set<string>()
  for (const symbol of symbols) {
    checkSymbol('symbols', symbol)
    distinct.add(symbol)
  }
  if (distinct.size > limits.maxSymbols) {
    throw fail('PRICE_INVALID_QUERY', 'symbols', `symbols may name at most ${limits.maxSymbols} distinct symbols (got ${distinct.size})`)
  }
  return Object.freeze([...distinct])
}

/** Options come from JavaScript callers too: `undefined` means none, anything else must be an object. */
export function optionsObject<T>(options: unknown): T {
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

/** A typed grid origin: absent, or a safe integer (negative allowed). @throws PriceStoreError `PRICE_INVALID_INTERVAL` */
export function checkedOrigin(origin: unknown): number | undefined {
  if (origin !== undefined && (typeof origin !== 'number' || !Number.isSafeInteger(origin))) {
    throw fail('PRICE_INVALID_INTERVAL', 'origin', `origin must be a safe integer, negative allowed (got ${describeValue(origin)})`)
  }
  return origin
}

/** A typed count: absent, or a safe integer >= 0. @throws PriceStoreError `code` naming `parameter` */
export function optionalInteger(parameter: string, value: unknown, code: PriceStoreErrorCode): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw fail(code, parameter, `${parameter} must be a safe integer >= 0 (got ${describeValue(value)})`)
  }
  return value
}

/**
 * Validates `store.cross()`'s arguments into a query, under the rules of
 * `GET /prices?quote=…&base=…`.
 * @throws PriceStoreError as {@link toCrossQuery}, and `PRICE_INVALID_QUERY` for options that are not an object
 */
export function toTypedCrossQuery(quote: unknown, base: unknown, rawOptions: unknown, limits: Limits): CrossQuery {
  const options = optionsObject<CrossOptions>(rawOptions)
  const aggregate = options.aggregate
  if (aggregate !== undefined && aggregate !== 'candles' && aggregate !== 'twap') {
    throw fail('PRICE_INVALID_QUERY', 'aggregate', `aggregate must be "candles" or "twap" (got ${describeValue(aggregate)})`)
  }
  const interval = optionalInteger('interval', options.interval, 'PRICE_INVALID_INTERVAL')
  if (interval === 0) throw fail('PRICE_INVALID_INTERVAL', 'interval', 'interval must be at least 1 ms (got 0)')
  const origin = checkedOrigin(options.origin)
  const limit = optionalInteger('limit', options.limit, 'PRICE_INVALID_QUERY')
  if (limit !== undefined) checkLimit(limit, limits.maxLimit)
  if (validityOf(options as ValidUntilOption).validUntil === true) throw validUntilRefusal('a cross rate is derived from records, not one')
  return toCrossQuery({
    quote, base, maxAge: options.maxAge,
    from: optionalInteger('from', options.from, 'PRICE_INVALID_RANGE'), to: optionalInteger('to', options.to, 'PRICE_INVALID_RANGE'),
    interval, origin, aggregate, offset: optionalInteger('offset', options.offset, 'PRICE_INVALID_QUERY'), limit,
  }, { from: 'from', to: 'to' })
}
