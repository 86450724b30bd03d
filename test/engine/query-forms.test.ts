/**
 * The forms beyond RedStone's four (docs/semantics.md, "Beyond RedStone"):
 * candles, gap fill, the grid origin, as-of direction and tolerance, and
 * TWAP, on a small data set whose answers are worked out by hand below.
 * Each expectation runs against the store (typed methods and `query()`);
 * the property tests compare every form with the reference model at large.
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PriceStore, isPriceStoreError, type PriceAnswer } from '../../src/index.js'
import { TEST_PROVIDER as PROVIDER } from '../../src/testing/records.js'
import { rec } from '../support/records.js'

// BTC, in (timestamp, id) order. r0 lies before the ranges below; r1 and r2 share a millisecond.
const R = {
  r0: { timestamp: 500, id: 'a', value: 5 },
  r1: { timestamp: 1000, id: 'a', value: 10 },
  r2: { timestamp: 1000, id: 'b', value: 12 },
  r3: { timestamp: 1500, id: 'a', value: 12 }, // the same value as r2, later: the bucket's high
  r4: { timestamp: 1999, id: 'a', value: 8 },
  r5: { timestamp: 4200, id: 'a', value: 9 },
} as const
type Name = keyof typeof R

const ref = (name: Name) => ({ id: R[name].id, timestamp: R[name].timestamp, value: R[name].value })
const idsOf = (records: readonly { id: string; timestamp: number }[]) => records.map((r) => `${r.timestamp}/${r.id}`)
const key = (name: Name) => `${R[name].timestamp}/${R[name].id}`

let store: PriceStore

beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER, limits: { maxRangePoints: 10_000 } })
  await store.putMany(Object.values(R).map((r) => rec({ ...r, id: r.id, symbol: 'BTC' })))
  await store.put(rec({ symbol: 'ETH', id: 'e', timestamp: 2500, value: 100 }))
})

afterAll(async () => {
  await store.close()
})

async function httpAnswer(query: string): Promise<PriceAnswer> {
  return store.query(new URLSearchParams(query))
}

describe('candles', () => {
  it('open, high, low, close name their records; equal values go to the later record; count', async () => {
    const candles = await store.candles('BTC', { from: 1000, to: 5000, interval: 1000 })
    expect(candles).toEqual([
      { bucket: 1000, open: ref('r1'), high: ref('r3'), low: ref('r4'), close: ref('r4'), count: 4 },
      { bucket: 4000, open: ref('r5'), high: ref('r5'), low: ref('r5'), close: ref('r5'), count: 1 },
    ])
    expect(await httpAnswer('symbol=BTC&fromTimestamp=1000&toTimestamp=5000&interval=1000&aggregate=candles')).toEqual(candles)
  })

  it('with fill=prev, empty buckets are flat candles of the carried close, marked with its age', async () => {
    const candles = await store.candles('BTC', { from: 1000, to: 5000, interval: 1000, fill: 'prev' })
    const flat = (name: Name, bucket: number, age: number) =>
      ({ bucket, open: ref(name), high: ref(name), low: ref(name), close: ref(name), count: 0, carried: true, age })
    expect(candles.map((c) => c.bucket)).toEqual([1000, 2000, 3000, 4000, 5000])
    expect(candles[1]).toEqual(flat('r4', 2000, 2999 - 1999))
    expect(candles[2]).toEqual(flat('r4', 3000, 3999 - 1999))
    // The last bucket ends at `to` (5000), not at 5999.
    expect(candles[4]).toEqual(flat('r5', 5000, 5000 - 4200))
  })

  it('maxAge stops carrying: a bucket whose carried record is older than maxAge at its end is left out', async () => {
    const candles = await store.candles('BTC', { from: 1000, to: 5000, interval: 1000, fill: 'prev', maxAge: 1000 })
    expect(candles.map((c) => c.bucket)).toEqual([1000, 2000, 4000, 5000]) // 3000: age 2000
    const edge = await store.candles('BTC', { from: 1000, to: 5000, interval: 1000, fill: 'prev', maxAge: 999 })
    expect(edge.map((c) => c.bucket)).toEqual([1000, 4000, 5000]) // 2000: age 1000 > 999
  })
})

describe('gap fill on the range form', () => {
  it('the first bucket carries the record in force before the range starts (one seek, not a wider scan)', async () => {
    const points = await store.range('BTC', { from: 2100, to: 3500, interval: 1000, fill: 'prev' })
    expect(points.map(({ bucket, carried, age, record }) => ({ bucket, carried, age, id: `${record.timestamp}/${record.id}` }))).toEqual([
      { bucket: 2000, carried: true, age: 2999 - 1999, id: key('r4') },
      { bucket: 3000, carried: true, age: 3500 - 1999, id: key('r4') },
    ])
    expect(points[0]!.record).toMatchObject({ ...ref('r4'), minutes: 0 })
  })

  it('a bucket with records of its own is not carried: its latest record, with its age at the bucket end', async () => {
    const points = await store.range('BTC', { from: 0, to: 2500, interval: 1000, fill: 'prev' })
    expect(points.map((p) => [p.bucket, p.carried, p.age, `${p.record.timestamp}/${p.record.id}`])).toEqual([
      [0, false, 999 - 500, key('r0')],
      [1000, false, 1999 - 1999, key('r4')],
      [2000, true, 2500 - 1999, key('r4')],
    ])
  })

  it('buckets before the first record ever have nothing to carry and are left out', async () => {
    const points = await store.range('ETH', { from: 0, to: 4999, interval: 1000, fill: 'prev' })
    expect(points.map((p) => p.bucket)).toEqual([2000, 3000, 4000])
  })

  it('a filled answer is counted without visiting each bucket: 86,400,001 one-ms buckets are refused by count', async () => {
    const err = await store.range('BTC', { from: 0, to: 86_400_000, interval: 1, fill: 'prev' }).catch((caught: unknown) => caught)
    expect(isPriceStoreError(err, 'PRICE_RANGE_TOO_LARGE')).toBe(true)
    // Buckets 0..499 have nothing to carry (r0 is at 500); every later one is answered.
    expect((err as { details: unknown }).details).toMatchObject({ count: 86_400_001 - 500, cap: 10_000 })
    // Bounded by maxAge, the same range is small: each record carried for at most 2 ms.
    const bounded = await store.range('BTC', { from: 0, to: 86_400_000, interval: 1, fill: 'prev', maxAge: 2 })
    expect(bounded.map((p) => p.bucket)).toEqual([500, 501, 502, 1000, 1001, 1002, 1500, 1501, 1502, 1999, 2000, 2001, 4200, 4201, 4202])
  })

  it('streams without a cap, lazily: the first points of a huge filled range come at once', async () => {
    const seen: number[] = []
    for await (const point of store.rangeStream('BTC', { from: 0, to: 86_400_000, interval: 1, fill: 'prev' })) {
      seen.push(point.bucket)
      if (seen.length === 3) break
    }
    expect(seen).toEqual([500, 501, 502])
    const candles: number[] = []
    for await (const candle of store.candleStream('BTC', { from: 0, to: 5000, interval: 1000, fill: 'prev' })) candles.push(candle.count)
    expect(candles).toEqual([1, 4, 0, 0, 1, 0])
  })
})

describe('calendar alignment: origin shifts every bucketed form the same way', () => {
  it('buckets start at origin + k·interval; a shift by whole intervals changes nothing; negative origins work', async () => {
    const shifted = await store.range('BTC', { from: 0, to: 5000, interval: 1000, origin: 300 })
    // Buckets [300, 1299], [1300, 2299], [3300, 4299].
    expect(idsOf(shifted)).toEqual([key('r2'), key('r4'), key('r5')])
    expect(await store.range('BTC', { from: 0, to: 5000, interval: 1000, origin: -700 })).toEqual(shifted)
    const candles = await store.candles('BTC', { from: 0, to: 5000, interval: 1000, origin: 300 })
    expect(candles.map((c) => [c.bucket, c.count])).toEqual([[300, 3], [1300, 2], [3300, 1]])
    expect(await httpAnswer('symbol=BTC&fromTimestamp=0&toTimestamp=5000&interval=1000&origin=-700&aggregate=candles')).toEqual(candles)
  })
})

describe('the grid at the limits of safe integers', () => {
  it('an origin near 2^53 with an interval near 2^53 is normalised exactly', async () => {
    const MAX = Number.MAX_SAFE_INTEGER
    const candles = await httpAnswer(`symbol=BTC&fromTimestamp=0&toTimestamp=${MAX}&interval=${MAX}&origin=${MAX - 1}&aggregate=candles`)
    // Bucket -1 starts at origin - interval = -1 and holds every record.
    expect((candles as { bucket: number; count: number }[]).map((c) => [c.bucket, c.count])).toEqual([[-1, 6]])
    const range = await store.range('BTC', { from: 0, to: MAX, interval: MAX - 1, origin: MAX - 2 })
    expect(range.map((r) => r.id)).toEqual(['a']) // one bucket [-1, MAX-3]: its latest is r5
  })
})

describe('as-of with direction and tolerance', () => {
  it.each([
    ['before', 3000, undefined, 'r4'],
    ['after', 3000, undefined, 'r5'],
    ['nearest', 3000, undefined, 'r4'], // 1001 ms back, 1200 ms ahead
    ['nearest', 3100, undefined, 'r5'], // 1101 back, 1100 ahead
    ['nearest', 1250, undefined, 'r2'], // 250 each way: the tie goes to the record before
    ['nearest', 1250, 250, 'r2'], // the tolerance is inclusive
    ['nearest', 1250, 249, undefined],
    ['after', 1000, undefined, 'r1'], // forward from `to`: the first in (timestamp, id) order
    ['before', 1000, undefined, 'r2'], // backward: the latest
    ['after', 4201, undefined, undefined],
    ['before', 3000, 1000, undefined], // r4 is 1001 ms back
  ] as const)('%s of %i with tolerance %s → %s', async (direction, to, tolerance, name) => {
    const options = { to, direction, ...(tolerance === undefined ? {} : { tolerance }) }
    const expectedIds = name === undefined ? [] : [key(name)]
    expect(idsOf(await store.latest('BTC', options))).toEqual(expectedIds)
    const several = await store.several(['BTC', 'NONE'], options)
    expect(Object.keys(several)).toEqual(name === undefined ? [] : ['BTC'])
    const query = `toTimestamp=${to}&direction=${direction}${tolerance === undefined ? '' : `&tolerance=${tolerance}`}`
    expect(idsOf((await httpAnswer(`symbol=BTC&${query}`)) as { id: string; timestamp: number }[])).toEqual(expectedIds)
  })
})

describe('TWAP', () => {
  it('weighs each value by the time it is in force, the record in force at `from` carried in', async () => {
    const twap = await store.twap(['BTC'], { from: 1000, to: 3000 })
    // r2 (12) from 1000 to 1500, r3 (12) to 1999, r4 (8) to 3000; r1 is replaced at its own millisecond.
    expect(twap).toEqual({
      BTC: { twap: (12 * 500 + 12 * 499 + 8 * 1001) / 2000, from: 1000, to: 3000, start: 1000, count: 3, first: ref('r2'), last: ref('r4') },
    })
    expect(await httpAnswer('symbol=BTC&fromTimestamp=1000&toTimestamp=3000&aggregate=twap')).toEqual(twap)
  })

  it('starts at the first record when none is in force at `from`; leaves out symbols with none in the window; a zero span is the value in force', async () => {
    expect(await store.twap(['BTC'], { from: 0, to: 600 })).toEqual({
      BTC: { twap: 5, from: 0, to: 600, start: 500, count: 1, first: ref('r0'), last: ref('r0') },
    })
    expect(await store.twap(['BTC', 'ETH'], { from: 0, to: 400 })).toEqual({})
    expect(await store.twap(undefined, { from: 1000, to: 1000 })).toEqual({
      BTC: { twap: 12, from: 1000, to: 1000, start: 1000, count: 1, first: ref('r2'), last: ref('r2') },
    })
  })
})

describe('bad combinations get coded 400 errors naming the parameters', () => {
  it.each([
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9&interval=5&aggregate=twap', 'PRICE_INVALID_INTERVAL', 'interval'],
    ['symbol=BTC&fromTimestamp=0&aggregate=twap', 'PRICE_INVALID_RANGE', 'toTimestamp'],
    ['symbols=BTC&fromTimestamp=0&toTimestamp=9&interval=5&aggregate=candles', 'PRICE_INVALID_QUERY', 'aggregate'],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9&aggregate=candles', 'PRICE_INVALID_INTERVAL', 'interval'],
    ['symbol=BTC&aggregate=ohlc', 'PRICE_INVALID_QUERY', 'aggregate'],
    ['symbol=BTC&fill=prev', 'PRICE_INVALID_QUERY', 'fill'],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9&interval=5&fill=next', 'PRICE_INVALID_QUERY', 'fill'],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9&interval=5&maxAge=5', 'PRICE_INVALID_QUERY', 'maxAge'],
    ['symbol=BTC&origin=5', 'PRICE_INVALID_INTERVAL', 'origin'],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9&interval=5&origin=1.5', 'PRICE_INVALID_INTERVAL', 'origin'],
    ['symbol=BTC&direction=after', 'PRICE_INVALID_QUERY', 'toTimestamp'],
    ['symbol=BTC&toTimestamp=9&fromTimestamp=0&direction=after', 'PRICE_INVALID_QUERY', 'fromTimestamp'],
    ['symbol=BTC&toTimestamp=9&limit=2&tolerance=5', 'PRICE_INVALID_QUERY', 'limit'],
    ['symbol=BTC&toTimestamp=9&direction=sideways', 'PRICE_INVALID_QUERY', 'direction'],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=9&interval=5&direction=after', 'PRICE_INVALID_QUERY', 'direction'],
  ])('%s → %s naming %s', async (query, code, parameter) => {
    const err = await httpAnswer(query).catch((caught: unknown) => caught)
    expect(isPriceStoreError(err, code as never), String(err)).toBe(true)
    expect((err as Error).message).toContain(parameter)
  })

  it('the typed methods apply the same rules', async () => {
    const refused = async (run: () => Promise<unknown>, code: string) =>
      expect(isPriceStoreError(await run().then(() => undefined, (err: unknown) => err), code as never)).toBe(true)
    await refused(() => store.candles('BTC', { from: 0, to: 9, interval: 5, maxAge: 3 }), 'PRICE_INVALID_QUERY')
    await refused(() => store.candles('BTC', { from: 0, to: 9, interval: 5, origin: 0.5 }), 'PRICE_INVALID_INTERVAL')
    await refused(() => store.latest('BTC', { direction: 'after' }), 'PRICE_INVALID_QUERY')
    await refused(() => store.latest('BTC', { to: 5, direction: 'up' as never }), 'PRICE_INVALID_QUERY')
    await refused(() => store.twap(['BTC'], { from: 9, to: 0 }), 'PRICE_INVALID_RANGE')
    await refused(() => store.twap('BTC' as never, { from: 0, to: 9 }), 'PRICE_INVALID_SYMBOL')
  })
})
