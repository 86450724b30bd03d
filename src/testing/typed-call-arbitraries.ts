/**
 * fast-check arbitraries of calls of the store's typed query methods
 * (`latest`, `several`, `range`, `candles`, `twap`) with well-formed
 * options, and the GET /prices parameters each call means, so the
 * reference model can answer it.
 */
import fc from 'fast-check'
import type { Limits } from '../types.js'
import { T0 } from './records.js'
import { INDEXED_INTERVALS, MAX_SAFE, TEST_LIMITS, rarely, symbolArb, timestampArb } from './record-arbitraries.js'
import type { ParamContext } from './query-arbitraries.js'

type Direction = 'before' | 'after' | 'nearest'
type Bucketed = { from: number; to: number; interval: number; limit?: number; offset?: number; origin?: number; fill?: 'prev'; maxAge?: number }

/** A call of one of the store's typed query methods: the method, its symbol(s) and its options. */
export type TypedCall =
  | { readonly method: 'latest'; readonly symbol: string; readonly opts?: { limit?: number; offset?: number; from?: number; to?: number; direction?: Direction; tolerance?: number } }
  | { readonly method: 'several'; readonly symbols?: string[]; readonly opts?: { from?: number; to?: number; direction?: Direction; tolerance?: number } }
  | { readonly method: 'range' | 'candles'; readonly symbol: string; readonly opts: Bucketed }
  | { readonly method: 'twap'; readonly symbols?: string[]; readonly opts: { from: number; to: number } }

/** Drops null fields, so optional options are really absent (exactOptionalPropertyTypes). */
function compact<T extends object>(obj: T): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== null)) as { [K in keyof T]?: Exclude<T[K], null> }
}

/** Typed store calls aimed at a data set: every method, with windows near the data so filled answers stay small. */
export function typedCallArb(data: ParamContext, limits: Limits = TEST_LIMITS): fc.Arbitrary<TypedCall> {
  const pool = data.timestamps.length > 0 ? data.timestamps : [T0]
  const ts = fc.oneof(fc.constantFrom(...pool, 0, MAX_SAFE), timestampArb(data.interval))
  const bounds = fc.tuple(ts, ts).map(([a, b]): [number, number] => (a <= b ? [a, b] : [b, a]))
  const symbol = fc.oneof({ arbitrary: fc.constantFrom(...data.symbols), weight: 5 }, { arbitrary: symbolArb, weight: 1 })
  const maybe = <T>(arb: fc.Arbitrary<T>) => rarely(arb, 2)
  const latest = fc
    .record({ symbol, limit: maybe(fc.integer({ min: 1, max: limits.maxLimit })), offset: maybe(fc.integer({ min: 0, max: 10 })), from: maybe(ts), to: maybe(ts) })
    .map(({ symbol, from, to, ...rest }): TypedCall => {
      const [lo, hi] = from !== null && to !== null && from > to ? [to, from] : [from, to]
      return { method: 'latest', symbol, opts: compact({ ...rest, from: lo ?? null, to: hi ?? null }) }
    })
  const several = fc
    .record({ symbols: maybe(fc.array(symbol, { minLength: 1, maxLength: limits.maxSymbols })), bounds: maybe(bounds), fromOnly: fc.boolean() })
    .map(({ symbols, bounds, fromOnly }): TypedCall => {
      const opts: { from?: number; to?: number } = bounds === null ? {} : fromOnly ? { from: bounds[0] } : { from: bounds[0], to: bounds[1] }
      return symbols === null ? { method: 'several', opts } : { method: 'several', symbols, opts }
    })
  const range = fc
    .record({
      symbol,
      bounds,
      interval: fc.constantFrom(1, data.interval, ...INDEXED_INTERVALS),
      limit: maybe(fc.integer({ min: 1, max: limits.maxRangePoints + 2 })),
      offset: maybe(fc.integer({ min: 0, max: 5 })),
    })
    .map(({ symbol, bounds, interval, ...rest }): TypedCall => ({ method: 'range', symbol, opts: { from: bounds[0], to: bounds[1], interval, ...compact(rest) } }))
  // The forms beyond RedStone: near-data windows, so filled answers stay small enough for the model.
  const near = fc.tuple(fc.constantFrom(...pool), fc.integer({ min: -3 * data.interval, max: 3 * data.interval })).map(([t, d]) => Math.max(0, t + d))
  const nearBounds = fc.tuple(near, near).map(([a, b]): [number, number] => (a <= b ? [a, b] : [b, a]))
  const direction = fc.constantFrom<Direction>('before', 'after', 'nearest')
  const asOf = fc
    .record({ symbol, to: near, direction: maybe(direction), tolerance: maybe(fc.integer({ min: 0, max: 2 * data.interval })) })
    .map(({ symbol, to, ...rest }): TypedCall => ({ method: 'latest', symbol, opts: { to, ...compact(rest) } }))
  const severalAsOf = fc
    .record({ symbols: maybe(fc.array(symbol, { minLength: 1, maxLength: limits.maxSymbols })), to: near, direction, tolerance: maybe(fc.integer({ min: 0, max: 2 * data.interval })) })
    .map(({ symbols, to, ...rest }): TypedCall => ({ method: 'several', ...(symbols === null ? {} : { symbols }), opts: { to, ...compact(rest) } }))
  const bucketed = fc
    .record({
      method: fc.constantFrom<'range' | 'candles'>('range', 'candles'),
      symbol,
      bounds: nearBounds,
      interval: fc.constantFrom(data.interval, data.interval * 2, ...INDEXED_INTERVALS),
      origin: maybe(fc.integer({ min: -2 * data.interval, max: 2 * data.interval })),
      fill: maybe(fc.constant('prev' as const)),
      limit: maybe(fc.integer({ min: 1, max: limits.maxRangePoints + 2 })),
      offset: maybe(fc.integer({ min: 0, max: 5 })),
    })
    .chain((call) => fc.record({ call: fc.constant(call), maxAge: call.fill === null ? fc.constant(null) : maybe(fc.integer({ min: 0, max: 3 * data.interval })) }))
    .map(({ call: { method, symbol, bounds, interval, ...rest }, maxAge }): TypedCall => ({
      method, symbol, opts: { from: bounds[0], to: bounds[1], interval, ...compact({ ...rest, maxAge }) },
    }))
    .filter((call) => call.method !== 'range' && call.method !== 'candles' ? true : (call.opts.to - call.opts.from) / call.opts.interval <= 100_000)
  const twap = fc
    .record({ symbols: maybe(fc.array(symbol, { minLength: 1, maxLength: limits.maxSymbols })), bounds: fc.oneof(nearBounds, bounds) })
    .map(({ symbols, bounds }): TypedCall => ({ method: 'twap', ...(symbols === null ? {} : { symbols }), opts: { from: bounds[0], to: bounds[1] } }))
  return fc.oneof(latest, several, range, asOf, severalAsOf, bucketed, twap)
}

/** The GET /prices params a typed call means, so the model can answer it. */
export function typedCallParams(call: TypedCall): Record<string, string> {
  const params: Record<string, string> = {}
  const set = (name: string, value: number | string | undefined) => {
    if (value !== undefined) params[name] = String(value)
  }
  if (call.method === 'several' || call.method === 'twap') {
    set('symbols', call.symbols?.join(','))
  } else {
    set('symbol', call.symbol)
    set('limit', call.opts?.limit)
    set('offset', call.opts?.offset)
  }
  set('fromTimestamp', call.opts?.from)
  set('toTimestamp', call.opts?.to)
  if (call.method === 'twap') set('aggregate', 'twap')
  if (call.method === 'candles') set('aggregate', 'candles')
  if (call.method === 'range' || call.method === 'candles') {
    set('interval', call.opts.interval)
    set('origin', call.opts.origin)
    set('fill', call.opts.fill)
    set('maxAge', call.opts.maxAge)
  }
  if (call.method === 'latest' || call.method === 'several') {
    set('direction', call.opts?.direction)
    set('tolerance', call.opts?.tolerance)
  }
  return params
}
