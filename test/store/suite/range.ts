/**
 * The range form and rangeStream on the suite's backend: one record per
 * epoch-aligned bucket, offset then limit, the stream equal to the array, and
 * the maxRangePoints cap (exact counts; the stream is not capped).
 */
import { describe, expect, it } from 'vitest'
import type { PriceStore } from '../../../src/index.js'
import { difference, expectExact, rejectsCode, throwsCode } from '../../support/assertions.js'
import { rec } from '../../support/records.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MAX, MINUTE, Model, collect } from './model.js'

export const rangeTests: FeatureTests = (suite) => {
  describe('range', () => {
    const { openStore, seeded } = useStores(suite)

    it('range: one record per epoch-aligned bucket, its latest, oldest first, with minutes; offset then limit', async () => {
      const { store, model } = await seeded()
      const cases = [
        { from: 0, to: MAX, interval: 1 },
        { from: 0, to: MAX, interval: MINUTE },
        { from: 0, to: MAX, interval: 7 * MINUTE },
        { from: 0, to: MAX, interval: HOUR },
        { from: 0, to: MAX, interval: 1000 * HOUR },
        { from: 0, to: MAX, interval: MAX },
        { from: H, to: H + HOUR - 1, interval: 10 * MINUTE },
        { from: H + 30 * MINUTE, to: H + 30 * MINUTE, interval: 1 }, // both ends inclusive
        { from: H - 20 * MINUTE, to: H + 30 * MINUTE, interval: 13 },
        { from: 0, to: MAX, interval: MINUTE, offset: 3 },
        { from: 0, to: MAX, interval: MINUTE, offset: 3, limit: 4 },
        { from: 0, to: MAX, interval: MINUTE, limit: 1 },
        { from: 0, to: MAX, interval: MINUTE, offset: 1000 },
      ]
      for (const symbol of ['BTC', 'ETH', 'BTC-USD']) {
        for (const o of cases) {
          const got = await store.range(symbol, o)
          expect(difference(got, model.range(symbol, o)), `${symbol} ${JSON.stringify(o)}`).toBeUndefined()
        }
      }
      // With one record a minute... here: the hour bucket is represented by its last record.
      const hourly = await store.range('BTC', { from: H, to: H + HOUR - 1, interval: HOUR })
      expect(hourly.map((r) => r.timestamp)).toEqual([H + HOUR - 1])
      expect(hourly[0]?.minutes).toBe(59)
    })

    it('rangeStream yields what range returns', async () => {
      const { store, model } = await seeded()
      for (const o of [{ from: 0, to: MAX, interval: 1 }, { from: H, to: H + HOUR, interval: 7 * MINUTE }]) {
        const streamed = await collect(store.rangeStream('BTC', o))
        expectExact(streamed, await store.range('BTC', o))
        expectExact(streamed, model.range('BTC', o))
      }
    })

    it('rangeStream checks its arguments when called', async () => {
      const store = await openStore()
      throwsCode(() => store.rangeStream('BTC', { from: 0, to: 1, interval: 0 }), 'PRICE_INVALID_INTERVAL')
      throwsCode(() => store.rangeStream('BTC', { from: 2, to: 1, interval: 1 }), 'PRICE_INVALID_RANGE')
      throwsCode(() => store.rangeStream('BTC USD', { from: 0, to: 1, interval: 1 }), 'PRICE_INVALID_SYMBOL')
    })
  })

  describe('range cap (maxRangePoints)', () => {
    const { openStore } = useStores(suite)

    async function capped(cap: number, count: number): Promise<{ store: PriceStore; model: Model }> {
      const store = await openStore({ limits: { maxRangePoints: cap } })
      const records = Array.from({ length: count }, (_, i) => rec({ symbol: 'CAP', timestamp: H + i * MINUTE + (i % 2) }))
      await store.putMany(records)
      return { store, model: new Model().add(records) }
    }

    it('an answer over the cap → PRICE_RANGE_TOO_LARGE with the exact count and the cap', async () => {
      const { store } = await capped(3, 5)
      const err = await rejectsCode(store.range('CAP', { from: 0, to: MAX, interval: MINUTE }), 'PRICE_RANGE_TOO_LARGE')
      expect(err.details.count).toBe(5)
      expect(err.details.cap).toBe(3)
      expect(err.message).toContain('5')
      expect(err.message).toContain('3')
      expect(err.message).toMatch(/interval/)
      expect(err.message).toMatch(/limit/)
    })

    it('the count is exact for a large answer, and counts after offset and limit', async () => {
      const { store, model } = await capped(3, 60)
      const all = { from: 0, to: MAX, interval: MINUTE }
      expect((await rejectsCode(store.range('CAP', all), 'PRICE_RANGE_TOO_LARGE')).details).toMatchObject({ count: 60, cap: 3 })
      expect((await rejectsCode(store.range('CAP', { ...all, offset: 10 }), 'PRICE_RANGE_TOO_LARGE')).details.count).toBe(50)
      expect((await rejectsCode(store.range('CAP', { ...all, limit: 4 }), 'PRICE_RANGE_TOO_LARGE')).details.count).toBe(4)
      expect((await rejectsCode(store.range('CAP', { ...all, limit: 100 }), 'PRICE_RANGE_TOO_LARGE')).details.count).toBe(60)
      expect((await rejectsCode(store.range('CAP', { ...all, offset: 55, limit: 100 }), 'PRICE_RANGE_TOO_LARGE')).details.count).toBe(5)
      expectExact(await store.range('CAP', { ...all, offset: 57 }), model.range('CAP', { ...all, offset: 57 }))
      expectExact(await store.range('CAP', { ...all, limit: 3 }), model.range('CAP', { ...all, limit: 3 }))
      expectExact(await store.range('CAP', { ...all, offset: 20, limit: 3 }), model.range('CAP', { ...all, offset: 20, limit: 3 }))
      expectExact(await store.range('CAP', { ...all, interval: 20 * MINUTE }), model.range('CAP', { ...all, interval: 20 * MINUTE }))
    })

    it('the query form is capped the same way', async () => {
      const { store } = await capped(3, 5)
      const err = await rejectsCode(store.query({ symbol: 'CAP', interval: '60000', fromTimestamp: '0', toTimestamp: String(MAX) }), 'PRICE_RANGE_TOO_LARGE')
      expect(err.details).toMatchObject({ count: 5, cap: 3 })
    })

    it('rangeStream has no cap', async () => {
      const { store, model } = await capped(3, 60)
      const all = { from: 0, to: MAX, interval: MINUTE }
      const streamed = await collect(store.rangeStream('CAP', all))
      expect(streamed.length).toBe(60)
      expectExact(streamed, model.range('CAP', all))
    })

    it('latest and several are not capped by maxRangePoints', async () => {
      const { store, model } = await capped(3, 10)
      expectExact(await store.latest('CAP', { limit: 10 }), model.latest('CAP', { limit: 10 }))
    })
  })
}
