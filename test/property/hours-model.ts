/**
 * The machinery of the store's model-based property tests, shared by
 * store-model.prop.test.ts and prune.prop.test.ts: memory settings, the
 * several-hours scenarios (batches over sealed and open hours, late
 * records, rewrites) and the check of every query form against the model.
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import type { Limits, PriceAnswer, PriceRecord, PriceStore, QueryParams } from '../../src/index.js'
import { queryParamsArb, showParams } from '../../src/testing/query-arbitraries.js'
import { idArb, inputRecordArb, rarely, symbolArb } from '../../src/testing/record-arbitraries.js'
import { T0, TEST_PROVIDER, type InputRecord } from '../../src/testing/records.js'
import { compareUtf8, keyOrder, outcomeOf, referenceQuery, storedRecords, type ModelResult } from '../../src/testing/reference-model.js'
import { typedCallArb, typedCallParams, type TypedCall } from '../../src/testing/typed-call-arbitraries.js'

/** Hot-tail sizes: off, tiny (most reads go to disk), and the default (everything cached). */
export const CACHE_SIZES = [0, 1, 2, 5, 128] as const

/** What a store keeps in memory. Each size is off, small (constant eviction, early seals) or the default (undefined). */
export interface MemorySettings {
  readonly openBytes: number | undefined
  readonly headBytes: number | undefined
  readonly chunkBytes: number | undefined
  readonly recordsPerSymbol: number
}

export const memorySettingsArb: fc.Arbitrary<MemorySettings> = fc.record({
  // 0 seals every hour after each batch; a few KB seals the oldest hours early; the default waits for the hour's end.
  openBytes: fc.constantFrom(0, 2_048, 12_000, undefined),
  // Small caches hold one or two entries (each is weighed with a 1.5 KB allowance per row).
  headBytes: fc.constantFrom(0, 4_000, undefined),
  chunkBytes: fc.constantFrom(0, 6_000, undefined),
  recordsPerSymbol: fc.constantFrom(0, 2, 128),
})

/** The same, with the hot-tail sizes of the single-hour scenarios. */
export const cacheArb: fc.Arbitrary<MemorySettings> = fc.tuple(memorySettingsArb, fc.constantFrom(...CACHE_SIZES)).map(([settings, recordsPerSymbol]) => ({ ...settings, recordsPerSymbol }))

export function storeOptionsFor(settings: MemorySettings, limits: Limits) {
  const cache: { recordsPerSymbol: number; headBytes?: number; chunkBytes?: number } = { recordsPerSymbol: settings.recordsPerSymbol }
  if (settings.headBytes !== undefined) cache.headBytes = settings.headBytes
  if (settings.chunkBytes !== undefined) cache.chunkBytes = settings.chunkBytes
  return { provider: TEST_PROVIDER, limits, cache, ...(settings.openBytes === undefined ? {} : { openBytes: settings.openBytes }) }
}

export function expectSameOutcome(actual: ModelResult, expected: ModelResult, label: string): void {
  expect(actual, label).toEqual(expected)
  if ('answer' in actual && 'answer' in expected) expect(keyOrder(actual.answer), label).toEqual(keyOrder(expected.answer))
}

export function callTyped(store: PriceStore, call: TypedCall): Promise<PriceAnswer> {
  switch (call.method) {
    case 'latest':
      return call.opts === undefined ? store.latest(call.symbol) : store.latest(call.symbol, call.opts)
    case 'several':
      return store.several(call.symbols, call.opts)
    case 'range':
      return store.range(call.symbol, call.opts)
    case 'candles':
      return store.candles(call.symbol, call.opts)
    case 'twap':
      return store.twap(call.symbols, call.opts)
  }
}

// ---------------------------------------------------------------------------
// Several hours: the open area, sealing, chunk merges, heads and the caches.

export const MINUTE = 60_000
export const TEN_MINUTES = 600_000
export const HOUR = 3_600_000
export const DAY = 86_400_000
/** The hours a scenario writes into, from T0 (an hour start) on. */
export const HOURS = 5
/** Caps large enough that multi-hour answers are compared record by record, not refused. */
export const HOURS_LIMITS: Limits = Object.freeze({ maxLimit: 400, maxSymbols: 5, maxRangePoints: 400 })
export const hoursConfig = { provider: TEST_PROVIDER, limits: HOURS_LIMITS }
/** rangeStream has no cap: its model is the range form with an unreachable one. */
export const streamConfig = { provider: TEST_PROVIDER, limits: { ...HOURS_LIMITS, maxRangePoints: Number.MAX_SAFE_INTEGER } }
/** Range intervals: the 10-minute heads and their multiples (1 h, 1 day, 20 min, 3 h), and scans (1 ms, 1 min, 7 min). */
export const HOURS_INTERVALS = [TEN_MINUTES, HOUR, DAY, 1, 7 * MINUTE, 2 * TEN_MINUTES, 3 * HOUR, MINUTE] as const

/** A timestamp in hour `hour` after T0: anywhere, next to a 10-minute edge, or at the end of a minute. */
export function hourTimestampArb(hour: number): fc.Arbitrary<number> {
  const start = T0 + hour * HOUR
  return fc.oneof(
    { arbitrary: fc.integer({ min: 0, max: HOUR - 1 }).map((offset) => start + offset), weight: 3 },
    { arbitrary: fc.tuple(fc.integer({ min: 0, max: 6 }), fc.constantFrom(-1, 0, 1)).map(([k, d]) => Math.max(0, start + k * TEN_MINUTES + d)), weight: 2 },
    { arbitrary: fc.integer({ min: 0, max: 59 }).map((m) => start + m * MINUTE + 59_999), weight: 1 },
  )
}

/** A batch as generated: the hour it is mostly about, new records, late records into earlier hours, and rewrites. */
export interface BatchSpec {
  readonly hour: number
  readonly fresh: readonly InputRecord[]
  readonly late: readonly InputRecord[]
  /** Which earlier record to rewrite (modulo their count), and its new contents. */
  readonly rewrites: readonly (readonly [number, InputRecord])[]
}

export interface HoursData {
  readonly symbols: readonly string[]
  readonly batches: readonly (readonly InputRecord[])[]
  /** Whether to let the background seals run before asking, after each batch. */
  readonly settle: readonly boolean[]
}

export function batchSpecArb(symbols: readonly string[], ids: readonly string[]): fc.Arbitrary<BatchSpec> {
  const id = fc.oneof({ arbitrary: fc.constantFrom(...ids), weight: 3 }, { arbitrary: idArb, weight: 1 })
  return fc.integer({ min: 0, max: HOURS - 1 }).chain((hour) =>
    fc.record({
      hour: fc.constant(hour),
      fresh: fc.array(inputRecordArb(symbols, TEN_MINUTES, { timestamp: hourTimestampArb(hour), id }), { maxLength: 24 }),
      late: fc.array(inputRecordArb(symbols, TEN_MINUTES, { timestamp: fc.integer({ min: 0, max: hour }).chain(hourTimestampArb), id }), { maxLength: 4 }),
      rewrites: fc.array(fc.tuple(fc.nat(), inputRecordArb(symbols, TEN_MINUTES)), { maxLength: 4 }),
    }),
  )
}

/** Symbols, then batches in mostly increasing hours (so hours are sealed as time moves on), with late records and rewrites. */
export const hoursDataArb: fc.Arbitrary<HoursData> = fc
  .record({
    symbols: fc.uniqueArray(fc.oneof({ arbitrary: fc.constantFrom('BTC', 'BTC-USD', 'stETH'), weight: 3 }, { arbitrary: symbolArb, weight: 1 }), {
      minLength: 1,
      maxLength: 3,
    }),
    ids: fc.uniqueArray(idArb, { minLength: 1, maxLength: 5 }).map((ids) => [...new Set([...ids, '\uFF61', '\u{1F600}'])]),
    inOrder: fc.oneof({ arbitrary: fc.constant(true), weight: 3 }, { arbitrary: fc.constant(false), weight: 1 }),
    // Far ahead: under the default openBytes, a record this late seals every earlier hour.
    far: rarely(fc.constantFrom(T0 + DAY, Number.MAX_SAFE_INTEGER), 4),
  })
  .chain(({ symbols, ids, inOrder, far }) =>
    fc.record({
      symbols: fc.constant(symbols),
      specs: fc.array(batchSpecArb(symbols, ids), { minLength: 1, maxLength: 7 }).map((specs) => (inOrder ? [...specs].sort((a, b) => a.hour - b.hour) : specs)),
      far: fc.constant(far),
      farRecord: inputRecordArb(symbols, TEN_MINUTES),
      settle: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
    }),
  )
  .map(({ symbols, specs, far, farRecord, settle }) => {
    const earlier: InputRecord[] = []
    const batches = specs.map((spec, i) => {
      const batch: InputRecord[] = [...spec.fresh, ...spec.late]
      for (const [pick, contents] of spec.rewrites) {
        const pool = [...earlier, ...batch]
        const target = pool[pick % Math.max(1, pool.length)]
        // Same symbol, timestamp and id, new contents: the rewrite replaces the record, sealed or not.
        if (target !== undefined) batch.push({ ...contents, symbol: target.symbol, timestamp: target.timestamp, id: target.id })
      }
      if (far !== null && i === specs.length - 1) batch.push({ ...farRecord, timestamp: far })
      earlier.push(...batch)
      return batch
    })
    return { symbols, batches: batches.filter((batch) => batch.length > 0), settle }
  })

/** A range call whose ends fall anywhere: inside 10-minute buckets, on edges, next to written timestamps, or unbounded. */
export type RangeCall = { readonly symbol: string; readonly from: number; readonly to: number; readonly interval: number; readonly limit?: number; readonly offset?: number }

export interface HoursQueries {
  readonly ranges: readonly RangeCall[]
  readonly asOf: readonly TypedCall[]
  readonly typed: readonly TypedCall[]
  readonly raw: readonly QueryParams[]
}

export function hoursQueriesArb(data: HoursData): fc.Arbitrary<HoursQueries> {
  const timestamps = [...new Set([T0, ...data.batches.flat().map((r) => r.timestamp)])]
  const context = { symbols: data.symbols, interval: TEN_MINUTES, timestamps }
  const near = fc.tuple(fc.constantFrom(...timestamps), fc.constantFrom(-1, 0, 1)).map(([t, d]) => Math.max(0, t + d))
  const inside = fc.integer({ min: -HOUR, max: (HOURS + 1) * HOUR }).map((offset) => Math.max(0, T0 + offset))
  const end = fc.oneof({ arbitrary: inside, weight: 3 }, { arbitrary: near, weight: 2 }, { arbitrary: fc.constantFrom(0, T0, Number.MAX_SAFE_INTEGER), weight: 1 })
  const symbol = fc.oneof({ arbitrary: fc.constantFrom(...data.symbols), weight: 6 }, { arbitrary: symbolArb, weight: 1 })
  const range: fc.Arbitrary<RangeCall> = fc
    .record({ symbol, a: end, b: end, interval: fc.constantFrom(...HOURS_INTERVALS), limit: rarely(fc.integer({ min: 1, max: 30 }), 3), offset: rarely(fc.integer({ min: 0, max: 5 }), 3) })
    .map(({ symbol, a, b, interval, limit, offset }) => ({
      symbol, from: Math.min(a, b), to: Math.max(a, b), interval,
      ...(limit === null ? {} : { limit }), ...(offset === null ? {} : { offset }),
    }))
  // As-of reads ("the price at or before T") and windows, with T inside buckets of sealed and open hours.
  const asOf: fc.Arbitrary<TypedCall> = fc
    .record({ symbol, to: end, from: rarely(end, 3), limit: fc.constantFrom(1, 1, 3, 50) })
    .map(({ symbol, to, from, limit }) => ({ method: 'latest', symbol, opts: from === null || from > to ? { to, limit } : { from, to, limit } }))
  return fc.record({
    ranges: fc.array(range, { minLength: 3, maxLength: 8 }),
    asOf: fc.array(asOf, { minLength: 1, maxLength: 4 }),
    typed: fc.array(typedCallArb(context, HOURS_LIMITS), { maxLength: 4 }),
    raw: fc.array(queryParamsArb(context, HOURS_LIMITS), { minLength: 1, maxLength: 4 }),
  })
}

export const hoursScenarioArb = hoursDataArb.chain((data) =>
  fc.record({ data: fc.constant(data), queries: hoursQueriesArb(data), settings: memorySettingsArb, reopenSettings: memorySettingsArb }),
)


export function rangeParams(call: RangeCall): Record<string, string> {
  const params: Record<string, string> = { symbol: call.symbol, fromTimestamp: String(call.from), toTimestamp: String(call.to), interval: String(call.interval) }
  if (call.limit !== undefined) params['limit'] = String(call.limit)
  if (call.offset !== undefined) params['offset'] = String(call.offset)
  return params
}

export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of stream) out.push(item)
  return out
}

/** Every query of the scenario, plus each symbol's whole history, against the model over `writes`. */
export async function expectHoursMatch(store: PriceStore, writes: readonly InputRecord[], data: HoursData, queries: HoursQueries, label: string): Promise<void> {
  await expectHoursHold(store, storedRecords(writes, TEST_PROVIDER), data, queries, label)
}

/** The same, against the model over stored records (in returned shape, e.g. what a prune left). */
export async function expectHoursHold(store: PriceStore, stored: readonly PriceRecord[], data: HoursData, queries: HoursQueries, label: string): Promise<void> {
  const check = async (params: QueryParams, run: () => Promise<PriceAnswer>, what: string) =>
    expectSameOutcome(await outcomeOf(run), referenceQuery(stored, params, hoursConfig), `${label}: ${what}`)
  for (const call of queries.ranges) {
    const params = rangeParams(call)
    const { symbol, ...opts } = call
    await check(params, () => store.range(symbol, opts), `range ${JSON.stringify(call)}`)
    await check(params, () => store.query(params), `query ${JSON.stringify(params)}`)
    const whole = { symbol, fromTimestamp: params['fromTimestamp']!, toTimestamp: params['toTimestamp']!, interval: params['interval']! }
    const streamed = await outcomeOf(async () => collect(store.rangeStream(symbol, { from: call.from, to: call.to, interval: call.interval })))
    expect(streamed, `${label}: rangeStream ${JSON.stringify(whole)}`).toEqual(referenceQuery(stored, whole, streamConfig))
  }
  for (const call of [...queries.asOf, ...queries.typed]) {
    await check(typedCallParams(call), () => callTyped(store, call), `${call.method} ${JSON.stringify(call)}`)
    if (call.method !== 'range' && call.method !== 'candles') continue
    // The bucketed forms as streams: the whole answer, without offset, limit or cap.
    const { offset: _offset, limit: _limit, ...range } = call.opts
    const whole = typedCallParams({ ...call, opts: range })
    // Made inside the outcome: a stream refuses bad options when it is made, before it is read.
    const stream = (): AsyncIterable<never> => (call.method === 'range' ? store.rangeStream(call.symbol, range) : store.candleStream(call.symbol, range)) as AsyncIterable<never>
    const streamed = await outcomeOf(async () => collect(stream()))
    expect(streamed, `${label}: ${call.method} stream ${JSON.stringify(whole)}`).toEqual(referenceQuery(stored, whole, streamConfig))
  }
  for (const params of queries.raw) await check(params, () => store.query(params), showParams(params))
  // Each symbol whole, newest first, and every record once at interval 1: nothing lost, nothing twice.
  for (const symbol of data.symbols) {
    await check({ symbol, limit: '400' }, () => store.latest(symbol, { limit: 400 }), `all of ${symbol}`)
    const every = { symbol, fromTimestamp: '0', toTimestamp: String(Number.MAX_SAFE_INTEGER), interval: '1' }
    const streamed = await outcomeOf(async () => collect(store.rangeStream(symbol, { from: 0, to: Number.MAX_SAFE_INTEGER, interval: 1 })))
    expect(streamed, `${label}: every record of ${symbol}`).toEqual(referenceQuery(stored, every, streamConfig))
  }
  await check({}, () => store.several(), 'several, every symbol')
  expect(await store.symbols(), `${label}: symbols`).toEqual([...new Set(stored.map((r) => r.symbol))].sort(compareUtf8))
}

/** Lets the seals queued after a batch run before the next query (sometimes: queries must be right either way). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 1))
}
