import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { answerPrices } from '../../src/http.js'
import { CrossWalk, crossOutcome, derivedSeries } from '../../src/engine/kernels/cross-rate.js'
import { PriceStore } from '../../src/index.js'
import { executeQuery, parseQuery } from '../../src/engine.js'
import { TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { toTypedCrossQuery } from '../../src/engine/typed-queries.js'
import { ArraySource } from '../support/array-source.js'

const ref = (id: string, timestamp: number, value: number) => ({ id, timestamp, value })

describe('cross-rate kernel', () => {
  it('divides quote by base as one float64 division, at the newer leg, naming both legs', () => {
    expect(crossOutcome(ref('e', 2_000, 3_000), ref('b', 1_000, 60_000), undefined)).toEqual({
      point: { value: 3_000 / 60_000, timestamp: 2_000, age: 1_000, legs: { quote: ref('e', 2_000, 3_000), base: ref('b', 1_000, 60_000) } },
    })
  })
  it('gives age 0 when the legs are tied, and maxAge 0 accepts it', () => {
    expect(crossOutcome(ref('e', 5, 1), ref('b', 5, 3), 0)).toMatchObject({ point: { timestamp: 5, age: 0, value: 1 / 3 } })
  })
  it('refuses a missing leg, legs farther apart than maxAge, a zero base and a non-finite quotient, naming the legs it had', () => {
    expect(crossOutcome(undefined, ref('b', 1, 1), undefined)).toEqual({ refused: 'no-quote', legs: { base: ref('b', 1, 1) } })
    expect(crossOutcome(undefined, undefined, undefined)).toEqual({ refused: 'no-quote', legs: {} })
    expect(crossOutcome(ref('e', 1, 1), undefined, undefined)).toEqual({ refused: 'no-base', legs: { quote: ref('e', 1, 1) } })
    expect(crossOutcome(ref('e', 10, 1), ref('b', 1, 1), 8)).toMatchObject({ refused: 'legs-too-far-apart' })
    expect(crossOutcome(ref('e', 10, 1), ref('b', 1, 1), 9)).toMatchObject({ point: { age: 9 } })
    expect(crossOutcome(ref('e', 1, 1), ref('b', 1, -0), undefined)).toMatchObject({ refused: 'base-zero' })
    expect(crossOutcome(ref('e', 1, Number.MAX_VALUE), ref('b', 1, 0.5), undefined)).toMatchObject({ refused: 'not-finite' })
    expect(crossOutcome(ref('e', 1, 1e-310), ref('b', 1, 1e10), undefined)).toMatchObject({ point: { value: 1e-310 / 1e10 } })
  })
  it('takes at each time the record in force, the greatest id on a tied timestamp', () => {
    const walk = new CrossWalk([ref('a', 10, 1), ref('b', 10, 2), ref('c', 20, 4)], [ref('x', 5, 1)], undefined)
    const ids = [9, 10, 19, 20].map((t) => walk.at(t)).map((o) => ('point' in o ? o.point.legs.quote.id : o.refused))
    expect(ids).toEqual(['no-quote', 'b', 'b', 'c'])
  })
  it('derives the series at the window start and at each millisecond holding a record of either leg', () => {
    const walk = new CrossWalk([ref('a', 0, 10), ref('b', 10, 20), ref('c', 30, 40)], [ref('x', 5, 2), ref('y', 10, 4), ref('z', 40, 8)], undefined)
    const series = [...derivedSeries(walk, 3, 35)].map(({ at, outcome }) => [at, 'point' in outcome ? outcome.point.value : outcome.refused])
    expect(series).toEqual([[3, 'no-base'], [5, 5], [10, 5], [30, 10]])
  })
})

describe('cross-rate forms over an array source', () => {
  const config = { provider: TEST_PROVIDER, limits: { maxLimit: 50, maxSymbols: 5, maxRangePoints: 100 } }
  const stored = storedRecords([
    makeRecord({ symbol: 'ETH', id: 'b', timestamp: 1_000, value: 4 }),
    makeRecord({ symbol: 'ETH', id: 'a', timestamp: 1_000, value: 2 }),
    makeRecord({ symbol: 'BTC', id: 'x', timestamp: 1_000, value: 2 }),
    makeRecord({ symbol: 'BTC', id: 'y', timestamp: 2_000, value: 4 }),
    makeRecord({ symbol: 'ETH', id: 'c', timestamp: 3_000, value: 8 }),
  ], TEST_PROVIDER)
  const ask = (query: string) => executeQuery(parseQuery(new URLSearchParams(query), config), new ArraySource(stored, { batchSize: 2 }), config.limits)

  it('candles: the rate at the bucket start, then after each record of either leg; ties go to the later point', async () => {
    const [candle] = (await ask('quote=ETH&base=BTC&fromTimestamp=0&toTimestamp=3999&interval=4000&aggregate=candles')) as any[]
    expect(candle).toMatchObject({ bucket: 0, points: 3, refused: 1 })
    // At 1000 the tie inside ETH goes to id "b" (4): 4 / 2.
    expect(candle.open).toMatchObject({ value: 2, timestamp: 1_000, legs: { quote: { id: 'b' }, base: { id: 'x' } } })
    expect(candle.low).toMatchObject({ value: 1, timestamp: 2_000, age: 1_000 })
    expect(candle.high).toMatchObject({ value: 2, timestamp: 3_000, legs: { quote: { id: 'c' }, base: { id: 'y' } } })
    expect(candle.close).toEqual(candle.high)
    expect(candle).toEqual((referenceQuery(stored, { quote: 'ETH', base: 'BTC', fromTimestamp: '0', toTimestamp: '3999', interval: '4000', aggregate: 'candles' }, config) as any).answer[0])
  })

  it('range and TWAP: every bucket marked, and a refusal refuses the whole average', async () => {
    const range = (await ask('quote=ETH&base=BTC&fromTimestamp=500&toTimestamp=3500&interval=1000')) as any[]
    expect(range.map((s) => [s.bucket, s.at, s.refused ?? s.point.value])).toEqual([[0, 999, 'no-quote'], [1_000, 1_999, 2], [2_000, 2_999, 1], [3_000, 3_500, 2]])
    const twap = (await ask('quote=ETH&base=BTC&fromTimestamp=0&toTimestamp=4000&aggregate=twap')) as any
    // Starts at 1000 when both legs exist: 2 for 1000 ms, 1 for 1000 ms, 2 for 1000 ms.
    expect(twap).toMatchObject({ start: 1_000, count: 3, first: { value: 2 }, last: { value: 2 } })
    expect(twap.twap).toBeCloseTo(5 / 3, 14)
    const refused = (await ask('quote=ETH&base=BTC&fromTimestamp=0&toTimestamp=4000&aggregate=twap&maxAge=999')) as any
    expect(refused).toMatchObject({ refused: 'legs-too-far-apart', at: 2_000, legs: { quote: { id: 'b' }, base: { id: 'y' } } })
  })
})

describe('cross-rate TWAP with no rate in force by `to`', () => {
  const config = { provider: TEST_PROVIDER, limits: { maxLimit: 50, maxSymbols: 5, maxRangePoints: 100 } }
  const from = 1_705_280_789_482
  const to = 1_705_280_849_482
  // TIE's newest record is inside the window, well before `to`; SAME is stored, but only after `to`.
  const stored = storedRecords([
    makeRecord({ symbol: 'TIE', id: 't1', timestamp: 1_705_280_700_000, value: 2 }),
    makeRecord({ symbol: 'TIE', id: 't2', timestamp: 1_705_280_820_000, value: 3 }),
    makeRecord({ symbol: 'SAME', id: 's1', timestamp: to + 1, value: 5 }),
  ], TEST_PROVIDER)
  const params = (start: number) => ({ quote: 'SAME', base: 'TIE', fromTimestamp: String(start), toTimestamp: String(to), aggregate: 'twap' })
  const ask = (start: number) => executeQuery(parseQuery(params(start), config), new ArraySource(stored, { batchSize: 2 }), config.limits)
  const refusedAtTo = (start: number, base: { id: string; timestamp: number; value: number }) =>
    ({ quote: 'SAME', base: 'TIE', from: start, to, refused: 'no-quote', at: to, legs: { base } })

  it('is refused no-quote at `to`, with the base leg in force then, not at the last leg record', async () => {
    const expected = refusedAtTo(from, ref('t2', 1_705_280_820_000, 3))
    expect(await ask(from)).toEqual(expected)
    expect(referenceQuery(stored, params(from), config)).toEqual({ answer: expected })
  })

  it('is refused at `to`, not at `from`, when the only leg record in force is carried in from before the window', async () => {
    const start = 1_705_280_750_000
    const short = { ...params(start), toTimestamp: String(1_705_280_800_000) }
    const expected = { ...refusedAtTo(start, ref('t1', 1_705_280_700_000, 2)), to: 1_705_280_800_000, at: 1_705_280_800_000 }
    expect(await executeQuery(parseQuery(short, config), new ArraySource(stored, { batchSize: 2 }), config.limits)).toEqual(expected)
    expect(referenceQuery(stored, short, config)).toEqual({ answer: expected })
  })

  it('answers the same through the store and HTTP', async () => {
    const store = await PriceStore.open(new MemoryLevel() as never, { provider: TEST_PROVIDER })
    try {
      await store.putMany(stored)
      const expected = refusedAtTo(from, ref('t2', 1_705_280_820_000, 3))
      expect(await store.query(params(from))).toEqual(expected)
      const answer = await answerPrices(store, new URLSearchParams(params(from)))
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body)).toEqual(expected)
    } finally {
      await store.close()
    }
  })
})

describe('store.cross() options (toTypedCrossQuery)', () => {
  const limits = { maxLimit: 50, maxSymbols: 5, maxRangePoints: 100 }
  const code = (f: () => unknown) => {
    try {
      f()
      return undefined
    } catch (err) {
      return (err as { code?: string }).code
    }
  }
  it('builds the same queries as the parameters, and refuses bad options with a code', () => {
    expect(toTypedCrossQuery('ETH', 'BTC', { from: 1, to: 5, interval: 2, aggregate: 'candles', maxAge: 3 }, limits))
      .toEqual(parseQuery(new URLSearchParams('quote=ETH&base=BTC&fromTimestamp=1&toTimestamp=5&interval=2&aggregate=candles&maxAge=3'), { provider: TEST_PROVIDER, limits }))
    expect(toTypedCrossQuery('ETH', 'BTC', undefined, limits)).toEqual({ kind: 'cross', quote: 'ETH', base: 'BTC' })
    expect(code(() => toTypedCrossQuery('ETH', 'BTC', { aggregate: 'ohlc' }, limits))).toBe('PRICE_INVALID_QUERY')
    expect(code(() => toTypedCrossQuery('ETH', 'BTC', { interval: 0, from: 0, to: 1 }, limits))).toBe('PRICE_INVALID_INTERVAL')
    expect(code(() => toTypedCrossQuery('ETH', 'BTC', { to: 1.5 }, limits))).toBe('PRICE_INVALID_RANGE')
    expect(code(() => toTypedCrossQuery('ETH', 'BTC', { from: 1, to: 5, interval: 1, limit: 51 }, limits))).toBe('PRICE_INVALID_QUERY')
    expect(code(() => toTypedCrossQuery('ETH', 'ETH', {}, limits))).toBe('PRICE_INVALID_QUERY')
    expect(code(() => toTypedCrossQuery(42, 'BTC', {}, limits))).toBe('PRICE_INVALID_SYMBOL')
    expect(code(() => toTypedCrossQuery('ETH', 'BTC', 'now', limits))).toBe('PRICE_INVALID_QUERY')
  })
})
