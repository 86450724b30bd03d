import { PriceStoreError, describeValue } from '../errors.js'
import type { PriceStoreErrorCode } from '../errors.js'
import type { Limits, PriceQuery, Provider, QueryParams } from '../types.js'
import { symbolProblem } from './text-rules.js'

/** What `parseQuery` needs to know about the store it parses for. */
export interface QueryConfig {
  readonly provider: Provider
  readonly limits: Limits
}

/** The known parameters, in the order their errors take precedence. */
const KNOWN_PARAMETERS = [
  'symbol', 'symbols', 'provider', 'limit', 'offset', 'fromTimestamp', 'toTimestamp', 'interval',
] as const
type KnownParameter = (typeof KNOWN_PARAMETERS)[number]
/** The known parameters given, each once; a value may be a non-string when it came from a plain object. */
type RawParameters = Partial<Record<KnownParameter, unknown>>

const PLAIN_INTEGER = /^[0-9]+$/

/**
 * Turns raw `GET /prices` parameters into a validated, frozen query (SPEC §2).
 * Unknown parameters are ignored. When several rules fail, the first in this
 * order wins: a repeated parameter; each parameter's own rules, in the order
 * symbol, symbols, provider, limit, offset, fromTimestamp, toTimestamp,
 * interval; then the rules between parameters.
 *
 * @throws PriceStoreError with a `PRICE_INVALID_*` or `PRICE_UNSUPPORTED_PROVIDER` code
 * @example
 * parseQuery(new URLSearchParams('symbol=BTC&limit=10'), { provider, limits: DEFAULT_LIMITS })
 * // => { kind: 'latest', symbol: 'BTC', limit: 10, offset: 0 }
 */
export function parseQuery(params: QueryParams, config: QueryConfig): PriceQuery {
  const raw = readKnownParameters(params)

  if ('symbol' in raw) checkSymbol('symbol', raw.symbol)
  const symbols = 'symbols' in raw ? parseSymbolList(raw.symbols, config.limits.maxSymbols) : undefined
  if ('provider' in raw) checkProvider(raw.provider, config.provider)
  const limit = 'limit' in raw ? parseInteger('limit', raw.limit, 'PRICE_INVALID_QUERY') : undefined
  if (limit !== undefined) checkLimit(limit, config.limits.maxLimit)
  const offset = 'offset' in raw ? parseInteger('offset', raw.offset, 'PRICE_INVALID_QUERY') : 0
  const from = 'fromTimestamp' in raw ? parseInteger('fromTimestamp', raw.fromTimestamp, 'PRICE_INVALID_RANGE') : undefined
  const to = 'toTimestamp' in raw ? parseInteger('toTimestamp', raw.toTimestamp, 'PRICE_INVALID_RANGE') : undefined
  const interval = 'interval' in raw ? parseInteger('interval', raw.interval, 'PRICE_INVALID_INTERVAL') : undefined
  if (interval === 0) {
    throw fail('PRICE_INVALID_INTERVAL', 'interval', `interval must be at least 1 (got ${describeValue(raw.interval)})`)
  }

  if ('symbol' in raw && symbols !== undefined) {
    throw fail('PRICE_INVALID_QUERY', 'symbols', `give either symbol or symbols, not both (got symbol=${describeValue(raw.symbol)} and symbols=${describeValue(raw.symbols)})`)
  }
  if (interval !== undefined && !('symbol' in raw)) {
    throw fail('PRICE_INVALID_INTERVAL', 'interval', `interval needs a symbol: the range form answers one symbol (got interval=${describeValue(raw.interval)} without symbol)`)
  }
  if (interval !== undefined && (from === undefined || to === undefined)) {
    const missing = from === undefined ? 'fromTimestamp' : 'toTimestamp'
    throw fail('PRICE_INVALID_RANGE', missing, `interval needs both fromTimestamp and toTimestamp (got interval=${describeValue(raw.interval)} without ${missing})`)
  }
  checkOrder(from, to)

  const window = { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }
  if (!('symbol' in raw)) {
    return Object.freeze({ kind: 'several', symbols: symbols ?? 'all', ...window })
  }
  if (interval !== undefined) {
    return Object.freeze({
      kind: 'range', symbol: raw.symbol as string, from: from as number, to: to as number, interval, offset,
      ...(limit === undefined ? {} : { limit }),
    })
  }
  return Object.freeze({ kind: 'latest', symbol: raw.symbol as string, limit: limit ?? 1, offset, ...window })
}

/**
 * Checks a symbol against the record rules for a symbol.
 * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, naming `parameter`
 */
export function checkSymbol(parameter: string, value: unknown): asserts value is string {
  const problem = symbolProblem(value)
  if (problem !== undefined) {
    throw fail('PRICE_INVALID_SYMBOL', parameter, `${parameter} ${problem} (got ${describeValue(value)})`)
  }
}

/** @throws PriceStoreError `PRICE_INVALID_QUERY` when `limit` is outside 1..maxLimit */
export function checkLimit(limit: number, maxLimit: number): void {
  if (limit < 1 || limit > maxLimit) {
    throw fail('PRICE_INVALID_QUERY', 'limit', `limit must be between 1 and ${maxLimit} (got ${limit})`)
  }
}

/** @throws PriceStoreError `PRICE_INVALID_RANGE` when `from > to` */
export function checkOrder(from: number | undefined, to: number | undefined): void {
  if (from !== undefined && to !== undefined && from > to) {
    throw fail('PRICE_INVALID_RANGE', 'fromTimestamp', `fromTimestamp must not be after toTimestamp (got ${from} > ${to})`)
  }
}

/** Builds a coded query error naming the parameter. */
export function fail(code: PriceStoreErrorCode, parameter: string, message: string): PriceStoreError {
  return new PriceStoreError(code, message, { details: { parameter } })
}

function readKnownParameters(params: QueryParams): RawParameters {
  const raw: RawParameters = Object.create(null) as RawParameters
  for (const name of KNOWN_PARAMETERS) {
    const values = valuesOf(params, name)
    if (values.length > 1) {
      throw fail('PRICE_INVALID_QUERY', name, `parameter ${name} must be given at most once (got ${values.map(describeValue).join(', ')})`)
    }
    if (values.length === 1) raw[name] = values[0]
  }
  return raw
}

function valuesOf(params: QueryParams, name: string): readonly unknown[] {
  if (params instanceof URLSearchParams) return params.getAll(name)
  if (!Object.prototype.hasOwnProperty.call(params, name)) return []
  const value = params[name]
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}

function parseSymbolList(value: unknown, maxSymbols: number): readonly string[] {
  checkString('symbols', value, 'PRICE_INVALID_SYMBOL')
  const distinct = new Set<string>()
  for (const entry of value.split(',')) {
    const problem = symbolProblem(entry)
    if (problem !== undefined) {
      throw fail('PRICE_INVALID_SYMBOL', 'symbols', `each symbols entry ${problem} (got ${describeValue(entry)} in ${describeValue(value)})`)
    }
    distinct.add(entry)
  }
  if (distinct.size > maxSymbols) {
    throw fail('PRICE_INVALID_QUERY', 'symbols', `symbols may name at most ${maxSymbols} distinct symbols (got ${distinct.size})`)
  }
  return Object.freeze([...distinct])
}

function checkProvider(value: unknown, provider: Provider): void {
  checkString('provider', value, 'PRICE_INVALID_QUERY')
  if (value === '') throw fail('PRICE_INVALID_QUERY', 'provider', 'provider must not be empty (got "")')
  if (value !== provider.name && value !== provider.id) {
    throw fail(
      'PRICE_UNSUPPORTED_PROVIDER',
      'provider',
      `unsupported provider ${describeValue(value)}: this store serves ${JSON.stringify(provider.name)} (${provider.id})`,
    )
  }
}

function parseInteger(parameter: string, value: unknown, code: PriceStoreErrorCode): number {
  checkString(parameter, value, code)
  if (!PLAIN_INTEGER.test(value)) {
    throw fail(code, parameter, `${parameter} must be a plain decimal integer (got ${describeValue(value)})`)
  }
  const digits = value.replace(/^0+(?=.)/, '')
  const number = Number(digits)
  if (digits.length > 16 || !Number.isSafeInteger(number)) {
    throw fail(code, parameter, `${parameter} must be at most ${Number.MAX_SAFE_INTEGER} (got ${describeValue(value)})`)
  }
  return number
}

function checkString(parameter: string, value: unknown, code: PriceStoreErrorCode): asserts value is string {
  // Plain-object parameters come from callers that may pass anything.
  if (typeof value !== 'string') {
    throw fail(code, parameter, `${parameter} must be a string (got ${describeValue(value)})`)
  }
}
