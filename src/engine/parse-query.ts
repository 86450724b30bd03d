import { PriceStoreError, describeValue } from '../errors.js'
import type { PriceStoreErrorCode } from '../errors.js'
import type { Limits, PriceQuery, Provider, QueryParams } from '../types.js'
import { DIRECTIONS, checkChoice, toAsOf, toFill } from './form-rules.js'
import { toGrid } from './grid.js'
import { readCursor, resumeRefusal } from './cursor.js'
import { toCrossQuery, type CrossParts } from './forms/cross-query.js'
import { FORMS, pagingOf } from './forms/index.js'
import { fail } from '../rules/query-errors.js'
import { parseFieldSelection } from '../rules/fields.js'
import { symbolProblem } from '../rules/text-rules.js'
import { parseTimeText } from '../rules/time-text.js'

/**
 * The store's provider and the other names it answers to. RedStone's own
 * client (`redstone-api`) picks a provider per token from its built-in list,
 * e.g. `redstone-rapid` for AR, so a store fed by `redstone` sees that name:
 * listing it in `aliases` accepts it as the same provider. None by default.
 */
export interface ProviderNames extends Provider {
  /** More names accepted as the `provider` parameter; records and identity keep `name`, `id` and `publicKey`. */
  readonly aliases?: readonly string[]
}

/** What `parseQuery` needs to know about the store it parses for. */
export interface QueryConfig {
  readonly provider: ProviderNames
  readonly limits: Limits
}

/** The known `GET /prices` parameters, in the order their errors take precedence. */
export const KNOWN_PARAMETERS = [
  'symbol', 'symbols', 'provider', 'limit', 'offset', 'fromTimestamp', 'toTimestamp', 'interval',
  'aggregate', 'fill', 'maxAge', 'origin', 'direction', 'tolerance', 'fields', 'quote', 'base', 'cursor', 'validUntil',
] as const
type KnownParameter = (typeof KNOWN_PARAMETERS)[number]
/** The known parameters given, each once; a value may be a non-string when it came from a plain object. */
type RawParameters = Partial<Record<KnownParameter, unknown>>

const PLAIN_INTEGER = /^[0-9]+$/
const SIGNED_INTEGER = /^-?[0-9]+$/
const NAMES = { from: 'fromTimestamp', to: 'toTimestamp' } as const

/**
 * Turns raw `GET /prices` parameters into a validated, frozen query (SPEC §2,
 * and the forms of docs/semantics.md beyond it; `fields` selects the
 * records' fields, see rules/fields.ts). Unknown parameters are
 * ignored. When several rules fail, the first in this order wins: a
 * repeated parameter; each parameter's own rules, in the order of
 * {@link KNOWN_PARAMETERS}; then the rules between parameters.
 *
 * @throws PriceStoreError with a `PRICE_INVALID_*` or `PRICE_UNSUPPORTED_PROVIDER` code
 * @example
 * parseQuery(new URLSearchParams('symbol=BTC&limit=10'), { provider, limits: DEFAULT_LIMITS })
 * // => { kind: 'latest', symbol: 'BTC', limit: 10, offset: 0 }
 */
export function parseQuery(params: QueryParams, config: QueryConfig): PriceQuery {
  return parseParameters(params, config, false)
}

/**
 * {@link parseQuery} for `store.page` (store/read/cursor-pages.ts): a
 * non-empty `cursor` is accepted (its position and signature are the
 * caller's to check); `parseQuery` refuses one after every other rule.
 */
export function parsePageQuery(params: QueryParams, config: QueryConfig): PriceQuery {
  return parseParameters(params, config, true)
}

function parseParameters(params: QueryParams, config: QueryConfig, resumes: boolean): PriceQuery {
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
  const aggregate = 'aggregate' in raw ? checkChoice('aggregate', raw.aggregate, AGGREGATES, 'PRICE_INVALID_QUERY') : undefined
  const fill = 'fill' in raw ? checkChoice('fill', raw.fill, FILLS, 'PRICE_INVALID_QUERY') : undefined
  const maxAge = 'maxAge' in raw ? parseInteger('maxAge', raw.maxAge, 'PRICE_INVALID_QUERY') : undefined
  const origin = 'origin' in raw ? parseInteger('origin', raw.origin, 'PRICE_INVALID_INTERVAL', SIGNED_INTEGER) : undefined
  const direction = 'direction' in raw ? checkChoice('direction', raw.direction, DIRECTIONS, 'PRICE_INVALID_QUERY') : undefined
  const tolerance = 'tolerance' in raw ? parseInteger('tolerance', raw.tolerance, 'PRICE_INVALID_QUERY') : undefined
  // Spread into the query only when given: a query without `fields` is the same object as before it existed.
  const selection = 'fields' in raw ? { fields: parseFieldSelection('fields', raw.fields) } : undefined
  if ('quote' in raw) checkSymbol('quote', raw.quote)
  if ('base' in raw) checkSymbol('base', raw.base)
  // A cursor is checked here for its layout only; `store.page` checks its signature (store/read/cursor-pages.ts).
  const cursor = 'cursor' in raw ? checkCursor(raw.cursor) : undefined
  // Spread into the query only when true: `validUntil=false` asks for the answer without it, as before it existed.
  const validity = 'validUntil' in raw && checkChoice('validUntil', raw.validUntil, VALIDITY, 'PRICE_INVALID_QUERY') === 'true' ? VALID_UNTIL : undefined
  if ('quote' in raw || 'base' in raw) {
    const cross = crossQuery(raw, { from, to, interval, origin, aggregate, maxAge, limit })
    if (validity !== undefined) throw validUntilRefusal('a cross rate is derived from records, not one')
    // Built before this rule (its own rules come first): the query's form says whether it is a list.
    if (cursor !== undefined) checkCursorUse('offset' in raw, pagingOf(cross) !== undefined)
    if (cursor !== undefined && cursor !== '' && !resumes) throw resumeRefusal()
    return cross
  }

  if ('symbol' in raw && symbols !== undefined) {
    throw fail('PRICE_INVALID_QUERY', 'symbols', `give either symbol or symbols, not both (got symbol=${describeValue(raw.symbol)} and symbols=${describeValue(raw.symbols)})`)
  }
  if (aggregate === 'twap') {
    if (interval !== undefined) throw fail('PRICE_INVALID_INTERVAL', 'interval', `aggregate=twap averages the whole window: leave out interval (got interval=${interval})`)
    if (from === undefined || to === undefined) throw missingWindow('aggregate=twap', 'aggregate=twap', from)
  }
  if (aggregate === 'candles' && !('symbol' in raw)) {
    throw fail('PRICE_INVALID_QUERY', 'aggregate', 'aggregate=candles needs a symbol: candles answer one symbol')
  }
  if (aggregate === 'candles' && interval === undefined) {
    throw fail('PRICE_INVALID_INTERVAL', 'interval', 'aggregate=candles needs interval, the width of each candle in ms')
  }
  if (interval !== undefined && !('symbol' in raw)) {
    throw fail('PRICE_INVALID_INTERVAL', 'interval', `interval needs a symbol: the range form answers one symbol (got interval=${describeValue(raw.interval)} without symbol)`)
  }
  if (interval !== undefined && (from === undefined || to === undefined)) throw missingWindow('interval', `interval=${describeValue(raw.interval)}`, from)
  if (fill !== undefined && interval === undefined) {
    throw fail('PRICE_INVALID_QUERY', 'fill', `fill=${fill} fills the buckets of a range: give it with interval (got fill without interval)`)
  }
  if (origin !== undefined && interval === undefined) {
    throw fail('PRICE_INVALID_INTERVAL', 'origin', `origin shifts the buckets of a range: give it with interval (got origin=${origin} without interval)`)
  }
  if ((direction !== undefined || tolerance !== undefined) && (interval !== undefined || aggregate !== undefined)) {
    const given = direction === undefined ? 'tolerance' : 'direction'
    throw fail('PRICE_INVALID_QUERY', given, `${given} applies to the as-of lookups, not to ${aggregate === undefined ? 'the range form' : `aggregate=${aggregate}`}`)
  }
  if (validity !== undefined && aggregate !== undefined) throw validUntilRefusal(`aggregate=${aggregate} answers derived values, not records`)
  const fillMode = toFill(fill, maxAge)
  checkOrder(from, to)
  if (cursor !== undefined) checkCursorUse('offset' in raw, listAsked(raw, aggregate, interval))
  // Last of the rules (nothing below throws for a list form): a later page is `store.page`'s, never a silent first page.
  if (cursor !== undefined && cursor !== '' && !resumes) throw resumeRefusal()

  const window = { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }
  if (aggregate === 'twap') {
    const list = 'symbol' in raw ? Object.freeze([raw.symbol as string]) : symbols ?? 'all'
    return Object.freeze({ kind: 'twap', symbols: list, from: from as number, to: to as number, ...selection })
  }
  const asOf = toAsOf(direction, tolerance, { from, to, limit, offset }, NAMES)
  if (!('symbol' in raw)) {
    return Object.freeze({ kind: 'several', symbols: symbols ?? 'all', ...window, ...(asOf === undefined ? {} : { asOf }), ...selection, ...validity })
  }
  if (interval !== undefined) {
    return Object.freeze({
      kind: aggregate === 'candles' ? 'candles' : 'range',
      symbol: raw.symbol as string,
      ...toGrid(from as number, to as number, interval, origin),
      offset,
      ...(limit === undefined ? {} : { limit }),
      ...(fillMode === undefined ? {} : { fill: fillMode }),
      ...selection,
      ...validity,
    })
  }
  return Object.freeze({ kind: 'latest', symbol: raw.symbol as string, limit: limit ?? 1, offset, ...window, ...(asOf === undefined ? {} : { asOf }), ...selection, ...validity })
}

const AGGREGATES = ['candles', 'twap'] as const
const VALIDITY = ['true', 'false'] as const
/** What a query asking for validity windows holds (docs/semantics.md, "Validity windows"). */
const VALID_UNTIL = Object.freeze({ validUntil: true as const })

/** The refusal of `validUntil=true` (or the option) for a form whose answers hold no stored records. */
export function validUntilRefusal(form: string, parameter = 'validUntil'): PriceStoreError {
  return fail('PRICE_INVALID_QUERY', parameter, `${parameter} marks the records of an answer, and ${form}: ask it of the latest, history, several, as-of or range forms`)
}

/** A `cursor`'s own rule: empty (the first page) or a cursor's layout (engine/cursor.ts). */
function checkCursor(value: unknown): string {
  checkString('cursor', value, 'PRICE_INVALID_QUERY')
  readCursor(value)
  return value
}

/**
 * Whether the parameters ask for a list, checked before the query is built
 * (the as-of rules below would otherwise come first): the form they ask for
 * (the one built below, once the rules above hold) has `paging`, and none
 * of the parameters its row names as making one answer is given.
 */
function listAsked(raw: RawParameters, aggregate: (typeof AGGREGATES)[number] | undefined, interval: number | undefined): boolean {
  const paging = FORMS[formAsked(raw, aggregate, interval)].paging
  return paging !== undefined && !(paging.notListWith ?? []).some((name) => name in raw)
}

/** The form of the query the single-symbol and several parameters build (see the end of `parseParameters`). */
function formAsked(raw: RawParameters, aggregate: (typeof AGGREGATES)[number] | undefined, interval: number | undefined): PriceQuery['kind'] {
  if (aggregate === 'twap') return 'twap'
  if (!('symbol' in raw)) return 'several'
  if (interval === undefined) return 'latest'
  return aggregate === 'candles' ? 'candles' : 'range'
}

/** A cursor pages a list (latest-N, history, range, candles, a cross-rate range or candles), in place of `offset`. */
function checkCursorUse(withOffset: boolean, list: boolean): void {
  if (withOffset) throw fail('PRICE_INVALID_QUERY', 'cursor', 'give either offset or cursor, not both: a cursor resumes after the page before it')
  if (!list) throw fail('PRICE_INVALID_QUERY', 'cursor', 'cursor pages list answers only (latest-N, history, range, candles, a cross-rate range or candles), not several, TWAP, a cross rate at one time or a directed as-of lookup')
}

/**
 * A cross-rate query (`quote` and `base`, docs/semantics.md "Cross rates"):
 * the parameters that pick other forms' records are refused, the rest go
 * to the cross-rate rules (forms/cross-query.ts).
 */
function crossQuery(raw: RawParameters, parsed: Omit<CrossParts, 'quote' | 'base' | 'offset'>): PriceQuery {
  for (const name of ['symbol', 'symbols', 'fill', 'direction', 'tolerance', 'fields'] as const) {
    if (name in raw) throw fail('PRICE_INVALID_QUERY', name, `${name} does not apply to a cross rate (quote and base name its two symbols)`)
  }
  const offset = 'offset' in raw ? parseInteger('offset', raw.offset, 'PRICE_INVALID_QUERY') : undefined
  return toCrossQuery({ ...parsed, quote: raw.quote, base: raw.base, offset }, NAMES)
}
const FILLS = ['prev', 'none'] as const

/** The error for a form that needs both ends of its window. */
function missingWindow(form: string, given: string, from: number | undefined): PriceStoreError {
  const missing = from === undefined ? 'fromTimestamp' : 'toTimestamp'
  return fail('PRICE_INVALID_RANGE', missing, `${form} needs both fromTimestamp and toTimestamp (got ${given} without ${missing})`)
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

export { fail }

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

/** Every value `params` holds for `name` (a URLSearchParams' repeats, an array, one value, or none). */
export function valuesOf(params: QueryParams, name: string): readonly unknown[] {
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

function checkProvider(value: unknown, provider: ProviderNames): void {
  checkString('provider', value, 'PRICE_INVALID_QUERY')
  if (value === '') throw fail('PRICE_INVALID_QUERY', 'provider', 'provider must not be empty (got "")')
  if (value !== provider.name && value !== provider.id && provider.aliases?.includes(value) !== true) {
    const aliases = provider.aliases === undefined || provider.aliases.length === 0 ? '' : `, also named ${provider.aliases.map((alias) => JSON.stringify(alias)).join(', ')}`
    throw fail(
      'PRICE_UNSUPPORTED_PROVIDER',
      'provider',
      `unsupported provider ${describeValue(value)}: this store serves ${JSON.stringify(provider.name)} (${provider.id})${aliases}`,
    )
  }
}

function parseInteger(parameter: string, value: unknown, code: PriceStoreErrorCode, pattern = PLAIN_INTEGER): number {
  checkString(parameter, value, code)
  if (!pattern.test(value)) {
    const kind = pattern === PLAIN_INTEGER ? 'a plain decimal integer' : 'a decimal integer, optionally negative'
    throw fail(code, parameter, `${parameter} must be ${kind} (got ${describeValue(value)})${timeTextHint(parameter, value)}`)
  }
  const digits = value.replace(/^(-?)0+(?=.)/, '$1')
  const number = Number(digits)
  if (digits.replace('-', '').length > 16 || !Number.isSafeInteger(number)) {
    throw fail(code, parameter, `${parameter} must be at most ${Number.MAX_SAFE_INTEGER} in size (got ${describeValue(value)})`)
  }
  return number === 0 ? 0 : number // never -0
}

/**
 * For a time given as text (`now-1h`, `2024-06-01`) where `/prices` keeps RedStone's epoch milliseconds: says so, and
 * where the text is taken. Whether it is time text does not depend on the clock (read at a fixed time here).
 */
function timeTextHint(parameter: string, value: string): string {
  if (parameter !== 'fromTimestamp' && parameter !== 'toTimestamp') return ''
  if (parseTimeText(value, () => TEXT_PROBE_NOW) === undefined) return ''
  return `: /prices takes milliseconds since 1970, as RedStone's API does; time text such as ${JSON.stringify(value)} is taken by /prices/export, /prices/quality, /prices/verify and the CLI`
}

/** A clock reading far from both ends of the times accepted, so that any relative time text reads as a time. */
const TEXT_PROBE_NOW = 2 ** 50

function checkString(parameter: string, value: unknown, code: PriceStoreErrorCode): asserts value is string {
  // Plain-object parameters come from callers that may pass anything.
  if (typeof value !== 'string') {
    throw fail(code, parameter, `${parameter} must be a string (got ${describeValue(value)})`)
  }
}
