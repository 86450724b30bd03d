/**
 * Empty buckets made explicit (`fill=none`) on the range and candles forms:
 * the edges worked out by hand (before the first record, an all-empty grid,
 * the grid origin, the cap, maxAge refused), the typed methods, `query()`,
 * the streams and GET /prices (a streamed long answer included) agreeing,
 * and the reference model agreeing with all of them.
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { PriceStore, isPriceStoreError, type QueryParams } from '../../src/index.js'
import { TEST_PROVIDER as PROVIDER } from '../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { rec } from '../support/records.js'

// BTC: nothing before 1000; two records in bucket 1000, one at 4200.
const R = {
  r1: { timestamp: 1000, id: 'a', value: 10 },
  r2: { timestamp: 1500, id: 'a', value: 12 },
  r5: { timestamp: 4200, id: 'a', value: 9 },
} as const
const ref = (name: keyof typeof R) => ({ id: R[name].id, timestamp: R[name].timestamp, value: R[name].value })
const LIMITS = { maxRangePoints: 5000 }

let store: PriceStore
let server: RunningServer
const errors: unknown[] = []

beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER, limits: LIMITS })
  await store.putMany(Object.values(R).map((r) => rec({ ...r, symbol: 'BTC' })))
  server = await startServer({ store, onError: (err) => errors.push(err) })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
  expect(errors).toEqual([])
})

/** The answer through `query()`, GET /prices and the reference model, checked equal; the store's answer returned. */
async function everyWay(params: Record<string, string>): Promise<unknown> {
  const answer = await store.query(new URLSearchParams(params))
  const response = await fetch(`${server.url}/prices?${new URLSearchParams(params)}`)
  expect(response.status).toBe(200)
  expect(await response.text()).toBe(JSON.stringify(answer))
  const stored = storedRecords(await store.query(new URLSearchParams({ symbol: 'BTC', limit: '100' })) as never, PROVIDER)
  expect(referenceQuery(stored, params as QueryParams, { provider: PROVIDER, limits: { ...store.limits } })).toEqual({ answer })
  return answer
}

async function codeOf(promise: Promise<unknown>): Promise<[string, string | undefined]> {
  const err = await promise.then(() => undefined, (caught: unknown) => caught)
  if (!isPriceStoreError(err)) throw new Error(`expected a PriceStoreError, got ${String(err)}`)
  return [err.code, err.message]
}

describe('fill=none on the range form', () => {
  it('every bucket appears: counts and latest records, empty ones with count 0, beforeFirst before the first record', async () => {
    const points = await store.range('BTC', { from: 0, to: 5000, interval: 1000, fill: 'none' }) as unknown as Record<string, unknown>[]
    expect(points.map((p) => ({ ...p, record: (p['record'] as { id?: string; timestamp?: number } | undefined)?.timestamp }))).toEqual([
      { bucket: 0, count: 0, beforeFirst: true, record: undefined },
      { bucket: 1000, count: 2, record: 1500 },
      { bucket: 2000, count: 0, record: undefined },
      { bucket: 3000, count: 0, record: undefined },
      { bucket: 4000, count: 1, record: 4200 },
      { bucket: 5000, count: 0, record: undefined },
    ])
    expect(points[0]).not.toHaveProperty('record')
    expect(points[2]).toEqual({ bucket: 2000, count: 0 })
    expect(await everyWay({ symbol: 'BTC', fromTimestamp: '0', toTimestamp: '5000', interval: '1000', fill: 'none' })).toEqual(points)
  })

  it('an all-empty grid after the data answers only empty buckets, none beforeFirst', async () => {
    expect(await everyWay({ symbol: 'BTC', fromTimestamp: '6000', toTimestamp: '8500', interval: '1000', fill: 'none' }))
      .toEqual([{ bucket: 6000, count: 0 }, { bucket: 7000, count: 0 }, { bucket: 8000, count: 0 }])
  })

  it('an unknown symbol answers every bucket as beforeFirst', async () => {
    expect(await everyWay({ symbol: 'ETH', fromTimestamp: '0', toTimestamp: '1999', interval: '1000', fill: 'none' }))
      .toEqual([{ bucket: 0, count: 0, beforeFirst: true }, { bucket: 1000, count: 0, beforeFirst: true }])
  })

  it('follows the grid origin: the first bucket may start before from', async () => {
    const points = await everyWay({ symbol: 'BTC', fromTimestamp: '900', toTimestamp: '2600', interval: '1000', origin: '600', fill: 'none' }) as { bucket: number; count: number }[]
    expect(points.map((p) => [p.bucket, p.count])).toEqual([[600, 2], [1600, 0], [2600, 0]])
  })

  it('counts every bucket against maxRangePoints, offset and limit page it', async () => {
    const [code] = await codeOf(store.range('BTC', { from: 0, to: 5_000_000, interval: 1, fill: 'none' }))
    expect(code).toBe('PRICE_RANGE_TOO_LARGE')
    const page = await everyWay({ symbol: 'BTC', fromTimestamp: '0', toTimestamp: '5000', interval: '1000', fill: 'none', offset: '1', limit: '2' })
    expect((page as { bucket: number }[]).map((p) => p.bucket)).toEqual([1000, 2000])
  })

  it('refuses maxAge with fill=none (nothing is carried) with a coded 400', async () => {
    const [code, message] = await codeOf(store.range('BTC', { from: 0, to: 5000, interval: 1000, fill: 'none', maxAge: 10 }))
    expect(code).toBe('PRICE_INVALID_QUERY')
    expect(message).toContain('maxAge')
    const response = await fetch(`${server.url}/prices?symbol=BTC&fromTimestamp=0&toTimestamp=5000&interval=1000&fill=none&maxAge=10`)
    expect(response.status).toBe(400)
    expect(await response.text()).toContain('PRICE_INVALID_QUERY')
  })

  it('the stream and a streamed long HTTP answer give the same buckets as the answer', async () => {
    const params = { symbol: 'BTC', fromTimestamp: '0', toTimestamp: '4999', interval: '1', fill: 'none' }
    const answer = await everyWay(params)
    expect((answer as unknown[]).length).toBe(5000)
    const streamed: unknown[] = []
    for await (const point of store.rangeStream('BTC', { from: 0, to: 4999, interval: 1, fill: 'none' })) streamed.push(point)
    expect(streamed).toEqual(answer)
  })
})

describe('fill=none on candles', () => {
  it('every bucket: candles with count, empty ones with count 0 and no prices', async () => {
    const candles = await store.candles('BTC', { from: 0, to: 5000, interval: 1000, fill: 'none' })
    expect(candles).toEqual([
      { bucket: 0, count: 0, beforeFirst: true },
      { bucket: 1000, open: ref('r1'), high: ref('r2'), low: ref('r1'), close: ref('r2'), count: 2 },
      { bucket: 2000, count: 0 },
      { bucket: 3000, count: 0 },
      { bucket: 4000, open: ref('r5'), high: ref('r5'), low: ref('r5'), close: ref('r5'), count: 1 },
      { bucket: 5000, count: 0 },
    ])
    expect(await everyWay({ symbol: 'BTC', fromTimestamp: '0', toTimestamp: '5000', interval: '1000', aggregate: 'candles', fill: 'none' })).toEqual(candles)
    const streamed: unknown[] = []
    for await (const candle of store.candleStream('BTC', { from: 0, to: 5000, interval: 1000, fill: 'none' })) streamed.push(candle)
    expect(streamed).toEqual(candles)
  })

  it('ask() names the forms counted and countedCandles', async () => {
    expect((await store.ask({ symbol: 'BTC', fromTimestamp: '0', toTimestamp: '10', interval: '5', fill: 'none' })).form).toBe('counted')
    expect((await store.ask({ symbol: 'BTC', fromTimestamp: '0', toTimestamp: '10', interval: '5', fill: 'none', aggregate: 'candles' })).form).toBe('countedCandles')
  })
})
