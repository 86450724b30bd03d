/**
 * Gap filling (`fill: 'prev'`, `maxAge`) on the suite's backend: the range
 * form's filled points and carried candles, typed, streamed and through
 * query(), against the reference model of `price-store/testing`.
 */
import { describe, expect, it } from 'vitest'
import type { CandleOptions } from '../../../src/index.js'
import { outcomeOf } from '../../../src/testing/reference-model.js'
import { difference } from '../../support/assertions.js'
import { candleParams, unpaged } from './candles.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MINUTE, collect } from './model.js'

/** Windows small enough for the model to visit every bucket: before the data, across it, after it. */
const GRIDS: (CandleOptions & { fill: 'prev' })[] = [
  { from: H - HOUR, to: H + 3 * HOUR, interval: 10 * MINUTE, fill: 'prev' },
  { from: H - HOUR, to: H + 3 * HOUR, interval: 10 * MINUTE, fill: 'prev', maxAge: 15 * MINUTE },
  { from: H + 5 * HOUR, to: H + 6 * HOUR, interval: 7 * MINUTE, fill: 'prev' },
  { from: H + 5 * HOUR, to: H + 6 * HOUR, interval: 7 * MINUTE, fill: 'prev', maxAge: 3 * HOUR },
  { from: H + 29 * MINUTE, to: H + 31 * MINUTE, interval: 1000, fill: 'prev', origin: 17 },
  { from: H, to: H + 2 * HOUR, interval: HOUR, fill: 'prev', maxAge: 0 },
  { from: H - HOUR, to: H + 3 * HOUR, interval: 10 * MINUTE, fill: 'prev', offset: 5, limit: 7 },
]

const rangeParams = (symbol: string, grid: CandleOptions) => {
  const { aggregate: _, ...params } = candleParams(symbol, grid)
  return params
}

export const fillTests: FeatureTests = (suite) => {
  describe('gap fill', () => {
    const { seeded } = useStores(suite)

    it('range with fill: one point per bucket, an empty one carrying the latest record before it, as the model answers', async () => {
      const { store, model } = await seeded()
      for (const symbol of ['BTC', 'ETH', 'NOPE']) {
        for (const grid of GRIDS) {
          const params = rangeParams(symbol, grid)
          const want = model.query(params)
          const label = JSON.stringify(params)
          expect(difference(await outcomeOf(() => store.range(symbol, grid)), want), label).toBeUndefined()
          expect(difference(await outcomeOf(() => store.query(params)), want), label).toBeUndefined()
          expect(difference({ answer: await collect(store.rangeStream(symbol, unpaged(grid))) }, model.query(rangeParams(symbol, unpaged(grid)))), label).toBeUndefined()
        }
      }
    })

    it('candles with fill: flat carried candles with count 0, as the model answers', async () => {
      const { store, model } = await seeded()
      for (const symbol of ['BTC', 'ETH', 'NOPE']) {
        for (const grid of GRIDS) {
          const params = candleParams(symbol, grid)
          const want = model.query(params)
          const label = JSON.stringify(params)
          expect(difference(await outcomeOf(() => store.candles(symbol, grid)), want), label).toBeUndefined()
          expect(difference(await outcomeOf(() => store.query(params)), want), label).toBeUndefined()
          expect(difference({ answer: await collect(store.candleStream(symbol, unpaged(grid))) }, model.query(candleParams(symbol, unpaged(grid)))), label).toBeUndefined()
        }
      }
    })
  })
}
