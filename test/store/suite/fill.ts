/**
 * Gap filling (`fill: 'prev'`, `maxAge`) on the suite's backend: the range
 * form's filled points and carried candles, typed, streamed and through
 * query(), against the reference model of `price-store/testing`.
 */
import { describe, it } from 'vitest'
import type { CandleOptions } from '../../../src/index.js'
import { candleParams, candlesOf, expectBucketedLikeModel } from './candles.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MINUTE } from './model.js'

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
      const range = { answer: (symbol: string, grid: CandleOptions) => store.range(symbol, grid), stream: (symbol: string, grid: CandleOptions) => store.rangeStream(symbol, grid), params: rangeParams }
      await expectBucketedLikeModel(store, model, range, ['BTC', 'ETH', 'NOPE'], GRIDS)
    })

    it('candles with fill: flat carried candles with count 0, as the model answers', async () => {
      const { store, model } = await seeded()
      await expectBucketedLikeModel(store, model, candlesOf(store), ['BTC', 'ETH', 'NOPE'], GRIDS)
    })
  })
}
