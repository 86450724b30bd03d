/**
 * A naive reference model of GET /prices, written from SPEC.md and the API
 * contract only. It keeps every record in a plain array and answers by
 * filtering, sorting and grouping; it shares no code with src/engine or
 * src/store, so a bug there cannot hide here too.
 */
import { isPriceStoreError, type PriceStoreErrorCode } from '../errors.js'
import type { Candle, FilledPoint, Limits, Twap, PriceAnswer, PriceRecord, Provider, QueryParams } from '../types.js'
import { NearNumber } from './near-number.js'
import { referenceAsOf } from './reference-forms/as-of.js'
import { referenceCandles } from './reference-forms/candles.js'
import { ModelTooBig } from './reference-forms/grid.js'
import { referenceRange } from './reference-forms/range.js'
import { referenceCountedCandles, referenceCountedRange } from './reference-forms/empty-buckets.js'
import { referenceTwap } from './reference-forms/twap.js'
import { referenceCrossQuery } from './reference-forms/cross.js'
import { referenceMarker } from './reference-forms/valid-until.js'

export { ModelTooBig, NearNumber }

/** The store the model stands for: its provider (and any other names it answers to) and its caps. */
export interface ModelConfig {
  readonly provider: Provider & { readonly aliases?: readonly string[] }
  readonly limits: Limits
}

/** Either the answer or the code of the error the query must fail with. */
export type ModelResult =
  | { readonly answer: PriceAnswer }
  | { readonly error: PriceStoreErrorCode; readonly details?: { readonly count: number; readonly cap: number } }

const KNOWN = [
  'symbol', 'symbols', 'provider', 'limit', 'offset', 'fromTimestamp', 'toTimestamp', 'interval',
  'aggregate', 'fill', 'maxAge', 'origin', 'direction', 'tolerance', 'fields', 'quote', 'base', 'validUntil',
] as const
type Known = (typeof KNOWN)[number]

const RETURNED_FIRST = ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp']
const MAX_SAFE = 2n ** 53n - 1n

/** Ids (and symbols) order by their UTF-8 bytes, which differs from JS `<` on astral vs. U+E000..U+FFFF. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

/** Ascending (timestamp, id) order. */
export function compareRecords(a: PriceRecord, b: PriceRecord): number {
  return a.timestamp - b.timestamp || compareUtf8(a.id, b.id)
}

function hasLoneSurrogate(text: string): boolean {
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    if (cp >= 0xd800 && cp <= 0xdfff) return true
  }
  return false
}

/** The symbol rules of SPEC §1. */
export function isValidSymbol(text: string): boolean {
  const length = [...text].length
  return (
    length >= 1 &&
    length <= 64 &&
    !hasLoneSurrogate(text) &&
    !text.includes(',') &&
    !/\s/u.test(text) &&
    !/\p{Cc}/u.test(text)
  )
}

/** A plain decimal integer up to 2^53-1, or undefined. BigInt so huge digit strings compare exactly. */
function parseUint(text: string): number | undefined {
  if (!/^[0-9]+$/.test(text)) return undefined
  return BigInt(text) <= MAX_SAFE ? Number(text) : undefined
}

/** The returned shape of one ingested record: known fields first, extras in input order, key joined last. */
export function toReturned(input: Readonly<Record<string, unknown>>, provider: Provider): PriceRecord {
  const out: Record<string, unknown> = {}
  const define = (key: string, value: unknown) =>
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  for (const key of RETURNED_FIRST) define(key, input[key])
  for (const key of Object.keys(input)) {
    if (!RETURNED_FIRST.includes(key) && key !== 'providerPublicKey' && key !== 'minutes') define(key, input[key])
  }
  define('providerPublicKey', provider.publicKey)
  return out as PriceRecord
}

/** Every stored record after the writes, in returned shape: the last write of a (symbol, timestamp, id) wins. */
export function storedRecords(writes: readonly Readonly<Record<string, unknown>>[], provider: Provider): PriceRecord[] {
  const byKey = new Map<string, PriceRecord>()
  for (const input of writes) {
    const record = toReturned(input, provider)
    // Symbols and ids cannot hold U+0000 (a control character), so the joined key is unambiguous.
    byKey.set(`${record.symbol}\u0000${record.timestamp}\u0000${record.id}`, record)
  }
  return [...byKey.values()]
}

/** What `prune` must report: the records it removes, the hours they were in, the symbols it leaves with none. */
export interface ModelPruneResult {
  readonly records: number
  readonly hours: number
  readonly symbols: readonly string[]
}

/**
 * `store.prune({ before, symbol })` over stored records: every record of
 * `symbol` (of any symbol when it is left out) with `timestamp < before`
 * goes. Returns the records left and what the prune must report (hours are
 * UTC hours, `floor(timestamp / 3 600 000)`).
 */
export function referencePrune(records: readonly PriceRecord[], before: number, symbol?: string): { left: PriceRecord[]; result: ModelPruneResult } {
  const goes = (r: PriceRecord) => r.timestamp < before && (symbol === undefined || r.symbol === symbol)
  const left = records.filter((r) => !goes(r))
  const removed = records.filter(goes)
  const remaining = new Set(left.map((r) => r.symbol))
  const symbols = [...new Set(removed.map((r) => r.symbol))].filter((name) => !remaining.has(name)).sort(compareUtf8)
  const hours = new Set(removed.map((r) => Math.floor(r.timestamp / 3_600_000))).size
  return { left, result: { records: removed.length, hours, symbols } }
}

function readRaw(params: QueryParams, name: Known): string[] {
  if (params instanceof URLSearchParams) return params.getAll(name)
  const value = (params as Record<string, string | readonly string[] | undefined>)[name]
  if (value === undefined) return []
  return typeof value === 'string' ? [value] : [...value]
}

class ModelError extends Error {
  constructor(
    readonly code: PriceStoreErrorCode,
    /** The parameters the error message may name (SPEC §2: it names the parameter at fault). */
    readonly parameters: readonly string[],
    readonly details?: { count: number; cap: number },
    /** Found while answering, not while parsing (a cross rate's unknown symbol). */
    readonly whileAnswering = false,
  ) {
    super(code)
  }
}

function fail(code: PriceStoreErrorCode, ...parameters: string[]): never {
  throw new ModelError(code, parameters)
}

function inWindow(record: PriceRecord, from: number | undefined, to: number | undefined): boolean {
  return (from === undefined || record.timestamp >= from) && (to === undefined || record.timestamp <= to)
}

function answer(records: readonly PriceRecord[], params: QueryParams, config: ModelConfig): PriceAnswer {
  const raw = new Map<Known, string>()
  for (const name of KNOWN) {
    const values = readRaw(params, name)
    if (values.length > 1) fail('PRICE_INVALID_QUERY', name)
    if (values.length === 1) raw.set(name, values[0]!)
  }

  const symbol = raw.get('symbol')
  if (symbol !== undefined && !isValidSymbol(symbol)) fail('PRICE_INVALID_SYMBOL', 'symbol')

  let symbols: string[] | undefined
  const symbolsText = raw.get('symbols')
  if (symbolsText !== undefined) {
    const entries = symbolsText.split(',')
    if (!entries.every(isValidSymbol)) fail('PRICE_INVALID_SYMBOL', 'symbols')
    symbols = [...new Set(entries)]
    if (symbols.length > config.limits.maxSymbols) fail('PRICE_INVALID_QUERY', 'symbols')
  }

  const provider = raw.get('provider')
  if (provider === '') fail('PRICE_INVALID_QUERY', 'provider')
  const names = [config.provider.name, config.provider.id, ...(config.provider.aliases ?? [])]
  if (provider !== undefined && !names.includes(provider)) {
    fail('PRICE_UNSUPPORTED_PROVIDER', 'provider')
  }

  const number = (name: Known, code: PriceStoreErrorCode): number | undefined => {
    const text = raw.get(name)
    if (text === undefined) return undefined
    return parseUint(text) ?? fail(code, name)
  }
  const limit = number('limit', 'PRICE_INVALID_QUERY')
  if (limit !== undefined && (limit < 1 || limit > config.limits.maxLimit)) fail('PRICE_INVALID_QUERY', 'limit')
  const offset = number('offset', 'PRICE_INVALID_QUERY') ?? 0
  const from = number('fromTimestamp', 'PRICE_INVALID_RANGE')
  const to = number('toTimestamp', 'PRICE_INVALID_RANGE')
  const interval = number('interval', 'PRICE_INVALID_INTERVAL')
  if (interval === 0) fail('PRICE_INVALID_INTERVAL', 'interval')
  const aggregate = raw.get('aggregate')
  if (aggregate !== undefined && aggregate !== 'candles' && aggregate !== 'twap') fail('PRICE_INVALID_QUERY', 'aggregate')
  const fill = raw.get('fill')
  if (fill !== undefined && fill !== 'prev' && fill !== 'none') fail('PRICE_INVALID_QUERY', 'fill')
  const maxAge = number('maxAge', 'PRICE_INVALID_QUERY')
  const originText = raw.get('origin')
  let origin = 0
  if (originText !== undefined) {
    if (!/^-?[0-9]+$/.test(originText) || BigInt(originText) > MAX_SAFE || -BigInt(originText) > MAX_SAFE) fail('PRICE_INVALID_INTERVAL', 'origin')
    origin = Number(originText)
  }
  const direction = raw.get('direction')
  if (direction !== undefined && !['before', 'after', 'nearest'].includes(direction)) fail('PRICE_INVALID_QUERY', 'direction')
  const tolerance = number('tolerance', 'PRICE_INVALID_QUERY')
  const fieldsText = raw.get('fields')
  const validText = raw.get('validUntil')
  if (validText !== undefined && validText !== 'true' && validText !== 'false') fail('PRICE_INVALID_QUERY', 'validUntil')
  const valid = validText === 'true'
  const selected = fieldsText === undefined ? undefined : referenceFieldSelection(fieldsText, valid) ?? fail('PRICE_INVALID_QUERY', 'fields')
  // With validUntil=true every record is marked before it is selected; the selection keeps the mark.
  const mark = valid ? referenceMarker(records) : undefined
  const fields = mark === undefined ? selected : <T extends object>(record: T): T => (selected === undefined ? mark(record) : selected(mark(record)))
  for (const name of ['quote', 'base'] as const) if (raw.has(name) && !isValidSymbol(raw.get(name)!)) fail('PRICE_INVALID_SYMBOL', name)
  if (raw.has('quote') || raw.has('base')) {
    const crossed = referenceCrossQuery(records, {
      ...defined({ quote: raw.get('quote'), base: raw.get('base'), maxAge, from, to, interval, origin: originText === undefined ? undefined : origin, aggregate, offset, limit }),
      given: [...raw.keys()].filter((name) => name !== 'validUntil'),
    }, config.limits.maxRangePoints)
    if ('error' in crossed && crossed.whileAnswering !== true) throw new ModelError(crossed.error, [crossed.parameter], crossed.details)
    if (valid) fail('PRICE_INVALID_QUERY', 'validUntil')
    if ('answer' in crossed) return crossed.answer as PriceAnswer
    throw new ModelError(crossed.error, [crossed.parameter], crossed.details, crossed.whileAnswering === true)
  }

  if (symbol !== undefined && symbols !== undefined) fail('PRICE_INVALID_QUERY', 'symbol')
  if (aggregate === 'twap' && interval !== undefined) fail('PRICE_INVALID_INTERVAL', 'interval')
  if (aggregate === 'twap' && (from === undefined || to === undefined)) fail('PRICE_INVALID_RANGE', 'fromTimestamp', 'toTimestamp')
  if (aggregate === 'candles' && symbol === undefined) fail('PRICE_INVALID_QUERY', 'aggregate')
  if (aggregate === 'candles' && interval === undefined) fail('PRICE_INVALID_INTERVAL', 'interval')
  if (interval !== undefined && symbol === undefined) fail('PRICE_INVALID_INTERVAL', 'interval')
  if (interval !== undefined && (from === undefined || to === undefined)) fail('PRICE_INVALID_RANGE', 'fromTimestamp', 'toTimestamp')
  if (fill !== undefined && interval === undefined) fail('PRICE_INVALID_QUERY', 'fill')
  if (originText !== undefined && interval === undefined) fail('PRICE_INVALID_INTERVAL', 'origin')
  const directed = direction !== undefined || tolerance !== undefined
  if (directed && (interval !== undefined || aggregate !== undefined)) fail('PRICE_INVALID_QUERY', 'direction', 'tolerance')
  if (maxAge !== undefined && (fill === undefined || fill === 'none')) fail('PRICE_INVALID_QUERY', 'maxAge')
  if (valid && aggregate !== undefined) fail('PRICE_INVALID_QUERY', 'validUntil')
  if (from !== undefined && to !== undefined && from > to) fail('PRICE_INVALID_RANGE', 'fromTimestamp', 'toTimestamp')
  if (aggregate !== 'twap' && directed) {
    if (to === undefined) fail('PRICE_INVALID_QUERY', 'direction', 'tolerance')
    if (from !== undefined) fail('PRICE_INVALID_QUERY', 'direction', 'tolerance')
    if ((limit !== undefined && limit !== 1) || offset !== 0) fail('PRICE_INVALID_QUERY', 'direction', 'tolerance')
  }

  const everyName = () => [...new Set(records.map((r) => r.symbol))].sort(compareUtf8)
  const all = (name: string) => records.filter((r) => r.symbol === name).sort(compareRecords)
  const window = records.filter((r) => inWindow(r, from, to))
  const ofSymbol = (name: string) => window.filter((r) => r.symbol === name).sort(compareRecords)

  if (aggregate === 'twap') {
    const out: Record<string, unknown> = {}
    for (const name of symbol !== undefined ? [symbol] : symbols ?? everyName()) {
      const twap = referenceTwap(all(name), from!, to!)
      if (twap !== undefined) define(out, name, fields === undefined ? twap : selectTwap(twap as Twap, fields))
    }
    return out as PriceAnswer
  }

  if (symbol !== undefined && interval !== undefined) {
    // BigInt: the remainder of a signed origin must not round near 2^53.
    const grid = { from: from!, to: to!, interval, origin: Number(((BigInt(origin) % BigInt(interval)) + BigInt(interval)) % BigInt(interval)) }
    const items = fill === 'none'
      ? (aggregate === 'candles' ? referenceCountedCandles : referenceCountedRange)(ofSymbol(symbol), all(symbol), grid)
      : aggregate === 'candles'
      ? referenceCandles(ofSymbol(symbol), all(symbol), grid, fill !== undefined, maxAge)
      : referenceRange(ofSymbol(symbol), all(symbol), grid, fill !== undefined, maxAge)
    const page = items.slice(offset, limit === undefined ? undefined : offset + limit)
    if (page.length > config.limits.maxRangePoints) {
      throw new ModelError('PRICE_RANGE_TOO_LARGE', [], { count: page.length, cap: config.limits.maxRangePoints })
    }
    if (fields === undefined) return page as PriceAnswer
    if (aggregate === 'candles') {
      return (page as Candle[]).map((c) => (c.open === undefined ? c : { ...c, open: fields(c.open), high: fields(c.high), low: fields(c.low), close: fields(c.close) })) as PriceAnswer
    }
    if (fill !== undefined) return (page as FilledPoint[]).map((point) => (point.record === undefined ? point : { ...point, record: fields(point.record) })) as PriceAnswer
    return (page as object[]).map(fields) as PriceAnswer
  }

  const asOf = (name: string): PriceRecord | undefined => referenceAsOf(all(name), to!, direction ?? 'before', tolerance)
  if (symbol !== undefined) {
    if (directed) {
      const found = asOf(symbol)
      return found === undefined ? [] : [fields === undefined ? found : fields(found)]
    }
    const latest = ofSymbol(symbol)
      .reverse()
      .slice(offset, offset + (limit ?? 1))
    return fields === undefined ? latest : (latest.map(fields) as PriceAnswer)
  }

  const several: Record<string, PriceRecord> = {}
  for (const name of symbols ?? everyName()) {
    const latest = directed ? asOf(name) : ofSymbol(name).at(-1)
    if (latest !== undefined) define(several, name, fields === undefined ? latest : fields(latest))
  }
  return several
}

function selectTwap(twap: Twap, fields: <T extends object>(record: T) => T): Twap {
  return { ...twap, first: fields(twap.first), last: fields(twap.last) }
}

/** The record fields `fields` may name (docs/semantics.md, "Field selection"), written here again: the model shares no code with the engine. */
export const SELECTABLE_FIELDS: readonly string[] = [
  'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'providerPublicKey', 'minutes', 'liteEvmSignature', 'evmSignature',
]

/**
 * A `fields` value as the function that takes the unselected keys out of a
 * record (or record reference), or undefined when the value is malformed:
 * empty, an empty or unknown entry, or bare and `-` entries mixed.
 */
function referenceFieldSelection(text: string, keepValidUntil = false): (<T extends object>(record: T) => T) | undefined {
  const entries = text.split(',')
  const drop = entries.every((entry) => entry.startsWith('-'))
  if (!drop && entries.some((entry) => entry.startsWith('-'))) return undefined
  const names = entries.map((entry) => (drop ? entry.slice(1) : entry))
  if (!names.every((name) => SELECTABLE_FIELDS.includes(name))) return undefined
  return <T extends object>(record: T): T => {
    const out = {}
    for (const key of Object.keys(record)) {
      if (names.includes(key) !== drop || (keepValidUntil && key === 'validUntil')) define(out, key, (record as Record<string, unknown>)[key])
    }
    return out as T
  }
}

/** Sets an own enumerable property, so a symbol named "__proto__" is a key. */
function define(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/**
 * What GET /prices must answer for `params` over the stored `records`
 * (returned shape, e.g. from {@link storedRecords}).
 */
export function referenceQuery(records: readonly PriceRecord[], params: QueryParams, config: ModelConfig): ModelResult {
  try {
    return { answer: answer(records, params, config) }
  } catch (err) {
    if (!(err instanceof ModelError)) throw err
    return err.details === undefined ? { error: err.code } : { error: err.code, details: err.details }
  }
}

/** For a query the model rejects while parsing: the parameters its error message may name (one must appear). */
export function referenceFaultParameters(params: QueryParams, config: ModelConfig): readonly string[] | undefined {
  try {
    answer([], params, config)
    return undefined
  } catch (err) {
    if (!(err instanceof ModelError)) throw err
    return err.code === 'PRICE_RANGE_TOO_LARGE' || err.whileAnswering ? undefined : err.parameters
  }
}

/** The key order of every record in an answer (toEqual ignores key order; the contract does not). */
export function keyOrder(answer: unknown): unknown {
  if (Array.isArray(answer)) return answer.map((r) => Object.keys(r as object))
  const obj = answer as Record<string, unknown>
  // A cross rate's top level holds strings and numbers (a TWAP's `twap` may be a NearNumber): no keys of their own.
  const keysOf = (value: unknown) => (typeof value === 'object' && value !== null && !(value instanceof NearNumber) ? Object.keys(value) : [])
  return { symbols: Object.keys(obj), records: Object.keys(obj).map((k) => keysOf(obj[k])) }
}

/** Runs the real thing and puts its answer or coded error in the model's shape; anything uncoded is rethrown. */
export async function outcomeOf(run: () => Promise<PriceAnswer> | PriceAnswer): Promise<ModelResult> {
  try {
    return { answer: await run() }
  } catch (err) {
    if (!isPriceStoreError(err)) throw err
    if (err.code !== 'PRICE_RANGE_TOO_LARGE') return { error: err.code }
    return { error: err.code, details: { count: err.details.count ?? NaN, cap: err.details.cap ?? NaN } }
  }
}

/** The entries of `object` whose value is not undefined (the cross-rate reference takes absent as absent). */
function defined<T extends object>(object: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> }
}
