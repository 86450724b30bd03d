/**
 * fast-check arbitraries of raw GET /prices parameter sets, aimed at a data
 * set's symbols and timestamps: every query form, mostly well-formed, each
 * parameter malformed now and then, repeated or unknown parameters, either
 * as URLSearchParams or as a plain object.
 */
import fc from 'fast-check'
import type { Limits, QueryParams } from '../types.js'
import { T0, TEST_PROVIDER } from './records.js'
import {
  INDEXED_INTERVALS, INVALID_SYMBOLS, MAX_SAFE, TEST_LIMITS, dataIntervalArb, rarely, symbolArb, timestampArb, type DataSet,
} from './record-arbitraries.js'

const HOUR = 3_600_000

const NUMERIC_GARBAGE = ['', '1.5', '1e3', '-1', '+1', ' 1', '1 ', 'abc', '0x10', '\u0661', '1_0', 'Infinity', 'NaN', '9007199254740992', '99999999999999999999999']

// Each request holds several params, so each one is malformed only rarely, or few requests would get past validation.
const weighted = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<T>, validWeight = 20) =>
  fc.oneof({ arbitrary: valid, weight: validWeight }, { arbitrary: invalid, weight: 1 })

const withLeadingZeros = (n: fc.Arbitrary<number>) =>
  fc.tuple(n, fc.constantFrom('', '', '', '', '0', '000')).map(([v, z]) => `${z}${v}`)

function paramValueArbs(data: ParamContext, limits: Limits) {
  const { symbols, interval } = data
  const known = fc.constantFrom(...symbols)
  const entry = weighted(fc.oneof({ arbitrary: known, weight: 4 }, { arbitrary: symbolArb, weight: 1 }), fc.constantFrom(...INVALID_SYMBOLS), 40)
  const pool = data.timestamps.length > 0 ? data.timestamps : [T0]
  const near = fc.tuple(fc.constantFrom(...pool), fc.constantFrom(-1, 0, 0, 0, 1)).map(([t, d]) => Math.max(0, t + d))
  // Whole-data windows make long ranges, so the maxRangePoints cap is actually reached.
  const wide = fc.constantFrom(0, Math.min(...pool), Math.max(...pool), MAX_SAFE)
  const ts = fc.oneof({ arbitrary: near, weight: 3 }, { arbitrary: wide, weight: 2 }, { arbitrary: timestampArb(interval), weight: 1 })
  const edgeLimits = [0, 1, limits.maxLimit - 1, limits.maxLimit, limits.maxLimit + 1, 3000].map(String)
  return {
    symbol: weighted(fc.oneof({ arbitrary: known, weight: 6 }, { arbitrary: symbolArb, weight: 1 }), fc.constantFrom(...INVALID_SYMBOLS)),
    symbols: weighted(
      fc.array(entry, { minLength: 1, maxLength: limits.maxSymbols + 2 }).map((xs) => xs.join(',')),
      fc.constantFrom('', ',', 'BTC,,stETH', 'BTC,', ',BTC'),
    ),
    provider: fc.constantFrom(TEST_PROVIDER.name, TEST_PROVIDER.name, TEST_PROVIDER.id, TEST_PROVIDER.id, '', 'other', 'REDSTONE', TEST_PROVIDER.publicKey),
    limit: weighted(
      fc.oneof({ arbitrary: withLeadingZeros(fc.integer({ min: 1, max: 15 })), weight: 6 }, { arbitrary: fc.constantFrom(...edgeLimits), weight: 2 }),
      fc.constantFrom(...NUMERIC_GARBAGE),
    ),
    offset: weighted(
      fc.oneof(
        { arbitrary: withLeadingZeros(fc.integer({ min: 0, max: 3 })), weight: 8 },
        { arbitrary: fc.integer({ min: 5, max: 70 }).map(String), weight: 2 },
        { arbitrary: fc.constant('9007199254740991'), weight: 1 },
      ),
      fc.constantFrom(...NUMERIC_GARBAGE),
    ),
    fromTimestamp: weighted(withLeadingZeros(ts), fc.constantFrom(...NUMERIC_GARBAGE)),
    toTimestamp: weighted(withLeadingZeros(ts), fc.constantFrom(...NUMERIC_GARBAGE)),
    interval: weighted(
      fc.oneof(
        { arbitrary: withLeadingZeros(fc.constant(interval)), weight: 6 },
        { arbitrary: fc.constantFrom('1', '1', '9007199254740991', '0', '000', ...INDEXED_INTERVALS.map(String)), weight: 3 },
        { arbitrary: fc.integer({ min: 1, max: 20 * HOUR }).map(String), weight: 1 },
      ),
      fc.constantFrom(...NUMERIC_GARBAGE),
    ),
    aggregate: weighted(fc.constantFrom('candles', 'twap'), fc.constantFrom('', 'CANDLES', 'ohlc', 'twap ')),
    fill: weighted(fc.constantFrom('prev', 'none'), fc.constantFrom('', 'PREV', 'next', 'linear', 'NONE')),
    maxAge: weighted(withLeadingZeros(fc.oneof(fc.integer({ min: 0, max: 3 * interval }), fc.constantFrom(0, interval, Math.max(0, interval - 1)))), fc.constantFrom(...NUMERIC_GARBAGE)),
    origin: weighted(
      fc.oneof(
        { arbitrary: fc.integer({ min: -2 * interval, max: 2 * interval }).map(String), weight: 4 },
        { arbitrary: fc.constantFrom('0', '-0', '600000', '-7200000', '-9007199254740991', '007'), weight: 2 },
      ),
      fc.constantFrom('', '1.5', '--1', '+5', 'abc', '-', '-9007199254740992'),
    ),
    direction: weighted(fc.constantFrom('before', 'after', 'nearest'), fc.constantFrom('', 'Before', 'newest', 'both')),
    tolerance: weighted(withLeadingZeros(fc.oneof(fc.integer({ min: 0, max: 3 * interval }), fc.constant(0))), fc.constantFrom(...NUMERIC_GARBAGE)),
    // Cross rates: mostly two known symbols (now and then the same one twice, or one the data lacks).
    quote: weighted(fc.oneof({ arbitrary: known, weight: 6 }, { arbitrary: symbolArb, weight: 1 }), fc.constantFrom(...INVALID_SYMBOLS)),
    base: weighted(fc.oneof({ arbitrary: known, weight: 6 }, { arbitrary: symbolArb, weight: 1 }), fc.constantFrom(...INVALID_SYMBOLS)),
  }
}

type Name =
  | 'symbol' | 'symbols' | 'provider' | 'limit' | 'offset' | 'fromTimestamp' | 'toTimestamp' | 'interval'
  | 'aggregate' | 'fill' | 'maxAge' | 'origin' | 'direction' | 'tolerance' | 'quote' | 'base'
/** The names chaos draws from; `quote` and `base` come only with the cross-rate shapes (and `added`), so chaos keeps aiming at the other forms. */
const NAMES: readonly Name[] = [
  'symbol', 'symbols', 'provider', 'limit', 'offset', 'fromTimestamp', 'toTimestamp', 'interval',
  'aggregate', 'fill', 'maxAge', 'origin', 'direction', 'tolerance',
]

/** Which known params a request aims for: each query form, then pure chaos. */
const SHAPES: Readonly<Record<string, readonly Name[]>> = {
  latest: ['symbol'],
  latestN: ['symbol', 'limit', 'offset'],
  history: ['symbol', 'toTimestamp'],
  historyWindow: ['symbol', 'fromTimestamp', 'toTimestamp', 'limit'],
  range: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp'],
  rangePaged: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp', 'limit', 'offset'],
  several: ['symbols'],
  severalWindow: ['symbols', 'fromTimestamp', 'toTimestamp', 'limit'],
  all: [],
  allWindow: ['toTimestamp', 'offset'],
  candles: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp', 'aggregate'],
  candlesFilled: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp', 'aggregate', 'fill', 'maxAge', 'offset'],
  candlesOrigin: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp', 'aggregate', 'origin', 'fill'],
  rangeFilled: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp', 'fill', 'maxAge', 'limit'],
  rangeFilledAll: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp', 'fill'],
  rangeOrigin: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp', 'origin'],
  // fill without maxAge (fill=none refuses maxAge), paged and on a shifted grid.
  rangeFilledPaged: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp', 'fill', 'offset', 'limit'],
  candlesFilledOrigin: ['symbol', 'interval', 'fromTimestamp', 'toTimestamp', 'aggregate', 'fill', 'origin', 'offset'],
  asOfDirection: ['symbol', 'toTimestamp', 'direction'],
  asOfTolerance: ['symbol', 'toTimestamp', 'direction', 'tolerance'],
  severalDirected: ['symbols', 'toTimestamp', 'direction', 'tolerance'],
  twapSeveral: ['symbols', 'fromTimestamp', 'toTimestamp', 'aggregate'],
  twapOne: ['symbol', 'fromTimestamp', 'toTimestamp', 'aggregate'],
  crossLatest: ['quote', 'base'],
  crossAsOf: ['quote', 'base', 'toTimestamp', 'maxAge'],
  crossRange: ['quote', 'base', 'interval', 'fromTimestamp', 'toTimestamp', 'origin', 'maxAge'],
  crossCandlesPaged: ['quote', 'base', 'interval', 'fromTimestamp', 'toTimestamp', 'aggregate', 'offset', 'limit'],
  crossTwap: ['quote', 'base', 'fromTimestamp', 'toTimestamp', 'aggregate', 'maxAge'],
}

/** The most buckets a gap-filled query may span in the model tests: the naive model visits each one. */
const MODEL_FILL_BUCKETS = 100_000

/** Whether a parameter set asks for gap filling over more buckets than the model visits. */
function tooManyFilledBuckets(entries: readonly [string, string][]): boolean {
  const get = (name: string) => entries.find(([k]) => k === name)?.[1]
  const [fill, interval, from, to] = [get('fill'), get('interval'), get('fromTimestamp'), get('toTimestamp')]
  if (fill === undefined || interval === undefined || from === undefined || to === undefined) return false
  if (![interval, from, to].every((text) => /^[0-9]+$/.test(text))) return false
  return (Number(to) - Number(from)) / Math.max(1, Number(interval)) > MODEL_FILL_BUCKETS
}

const UNKNOWN_NAMES = ['foo', 'Symbol', 'SYMBOLS', 'limit ', 'from', 'timestamp', 'provider[]', '']

/** What the parameter generator aims at: the data set's symbols, interval and timestamps. */
export type ParamContext = Pick<DataSet, 'symbols' | 'interval' | 'timestamps'>

/** A context for parameter generation alone, without the cost of records. */
export const paramContextArb: fc.Arbitrary<ParamContext> = fc
  .record({ symbols: fc.uniqueArray(symbolArb, { minLength: 1, maxLength: 4 }), interval: dataIntervalArb })
  .chain(({ symbols, interval }) =>
    fc.record({ symbols: fc.constant(symbols), interval: fc.constant(interval), timestamps: fc.uniqueArray(timestampArb(interval), { minLength: 1, maxLength: 10 }) }),
  )

/** A raw parameter set as an entry list, before it is rendered as URLSearchParams or a plain object. */
export function rawEntriesArb(data: ParamContext, limits: Limits = TEST_LIMITS): fc.Arbitrary<[string, string][]> {
  const values = paramValueArbs(data, limits)
  const valuesRecord = fc.record(values)
  return fc
    .record({
      shape: fc.constantFrom(...Object.keys(SHAPES), 'chaos'),
      chaos: fc.subarray([...NAMES]),
      added: rarely(fc.constantFrom(...NAMES, 'quote', 'base'), 5),
      dropped: rarely(fc.constantFrom(...NAMES), 8),
      repeated: rarely(fc.constantFrom(...NAMES), 12),
      ordered: fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 }),
      first: valuesRecord,
      second: valuesRecord,
      unknown: fc.array(fc.tuple(fc.constantFrom(...UNKNOWN_NAMES), fc.string({ maxLength: 4 })), { maxLength: 3 }),
      order: fc.array(fc.double({ noNaN: true }), { minLength: 16, maxLength: 16 }),
    })
    .map(({ shape, chaos, added, dropped, repeated, ordered, first, second, unknown, order }) => {
      // Independent bounds would be inverted half the time; mostly keep them in order so windows hold data.
      if (ordered && /^\d+$/.test(first.fromTimestamp) && /^\d+$/.test(first.toTimestamp) && Number(first.fromTimestamp) > Number(first.toTimestamp)) {
        first = { ...first, fromTimestamp: first.toTimestamp, toTimestamp: first.fromTimestamp }
      }
      // A form's shape asks for its own aggregate, unless the value drawn is malformed.
      const form = /^(twap|crossTwap)/.test(shape) ? 'twap' : /^(candles|crossCandles)/.test(shape) ? 'candles' : undefined
      if (form !== undefined && (first.aggregate === 'candles' || first.aggregate === 'twap')) first = { ...first, aggregate: form }
      const names = new Set<Name>(shape === 'chaos' ? chaos : SHAPES[shape])
      if (added !== null) names.add(added)
      if (dropped !== null) names.delete(dropped)
      const entries: [string, string][] = [...names].map((n) => [n, first[n]])
      if (repeated !== null) entries.push([repeated, second[repeated]])
      entries.push(...unknown)
      // Parameter order in the URL must not matter.
      return entries.map((e, i) => [e, order[i] ?? 0] as const).sort((a, b) => a[1] - b[1]).map(([e]) => e)
    })
    .filter((entries) => !tooManyFilledBuckets(entries))
}

/** Renders entries as URLSearchParams, or as a plain object (arrays for repeats, sometimes `[v]`, undefined or `[]` for absent). */
export function renderParamsArb(entries: readonly [string, string][]): fc.Arbitrary<QueryParams> {
  const style = fc.record({
    asSearch: fc.boolean(),
    wrap: fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }),
    absent: rarely(fc.constantFrom(...NAMES), 4),
    absentAs: fc.boolean(),
  })
  return style.map(
    ({ asSearch, wrap, absent, absentAs }) => {
      if (asSearch) {
        const usp = new URLSearchParams()
        for (const [k, v] of entries) usp.append(k, v)
        return usp
      }
      const grouped = new Map<string, string[]>()
      for (const [k, v] of entries) grouped.set(k, [...(grouped.get(k) ?? []), v])
      const obj: Record<string, string | string[] | undefined> = {}
      ;[...grouped].forEach(([k, vs], i) => (obj[k] = vs.length === 1 && !wrap[i] ? vs[0] : vs))
      if (absent !== null && !grouped.has(absent)) obj[absent] = absentAs ? undefined : []
      return obj
    },
  )
}

/** Raw params (either rendering) for a data set. */
export function rawParamsArb(data: ParamContext, limits: Limits = TEST_LIMITS): fc.Arbitrary<QueryParams> {
  return rawEntriesArb(data, limits).chain(renderParamsArb)
}

/** Shows a param set readably in failure messages. */
export function showParams(params: QueryParams): string {
  return params instanceof URLSearchParams ? `URLSearchParams(${JSON.stringify(params.toString())})` : JSON.stringify(params)
}

/** Well-formed range queries over most of the data, rendered either way: the case random params reach least. */
export function rangeParamsArb(data: ParamContext, limits: Limits = TEST_LIMITS): fc.Arbitrary<QueryParams> {
  const pool = data.timestamps.length > 0 ? data.timestamps : [T0]
  return fc
    .record({
      symbol: fc.constantFrom(...data.symbols),
      fromTimestamp: fc.constantFrom(0, Math.min(...pool), Math.min(...pool) + 1),
      toTimestamp: fc.constantFrom(MAX_SAFE, Math.max(...pool), Math.max(...pool) - 1),
      interval: fc.constantFrom(1, 1, data.interval, data.interval, data.interval * 2, ...INDEXED_INTERVALS),
      limit: rarely(fc.integer({ min: 1, max: limits.maxRangePoints + 2 }), 3),
      offset: rarely(fc.integer({ min: 0, max: 5 }), 3),
    })
    .chain((q) => {
      const entries = Object.entries(q).flatMap(([k, v]): [string, string][] => (v === null ? [] : [[k, String(v)]]))
      return renderParamsArb(entries)
    })
}

/** The mix the model tests use: mostly random raw params, some long well-formed ranges. */
export function queryParamsArb(data: ParamContext, limits: Limits = TEST_LIMITS): fc.Arbitrary<QueryParams> {
  return fc.oneof({ arbitrary: rawParamsArb(data, limits), weight: 4 }, { arbitrary: rangeParamsArb(data, limits), weight: 1 })
}
