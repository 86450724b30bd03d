/**
 * Candles on the suite's backend: open, high, low, close and count per
 * bucket, typed, streamed and through query(), over grids with and without an
 * origin, with offset and limit, and capped by maxRangePoints, against the
 * reference model of `price-store/testing`.
 */
import { describe, expect, it } from 'vitest'
import type { CandleOptions, PriceAnswer, PriceStore } from '../../../src/index.js'
import { outcomeOf } from '../../../src/testing/reference-model.js'
import { difference } from '../../support/assertions.js'
import { rec } from '../../support/records.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MAX, MINUTE, Model, collect } from './model.js'

/** The query parameters of typed candle options. */
export function candleParams(symbol: string, o: CandleOptions): Record<string, string> {
  const params: Record<string, string> = { symbol, fromTimestamp: String(o.from), toTimestamp: String(o.to), interval: String(o.interval), aggregate: 'candles' }
  for (const key of ['origin', 'offset', 'limit', 'fill', 'maxAge'] as const) if (o[key] !== undefined) params[key] = String(o[key])
  return params
}

/** A grid without offset and limit: the streams take neither (they stream the whole grid). */
export function unpaged<T extends CandleOptions>(grid: T): T {
  const { offset: _offset, limit: _limit, ...rest } = grid
  return rest as T
}

/** A bucketed form as the store answers it three ways: its typed method, its stream, and its `query()` parameters. */
export interface BucketedForm {
  answer(symbol: string, grid: CandleOptions): Promise<PriceAnswer>
  stream(symbol: string, grid: CandleOptions): AsyncIterable<unknown>
  params(symbol: string, grid: CandleOptions): Record<string, string>
}

/**
 * Checks a bucketed form against the model for every symbol and grid: the
 * typed method and `query()` give the model's answer (or its error), and the
 * stream the model's answer of the unpaged grid.
 */
export async function expectBucketedLikeModel(
  store: PriceStore,
  model: Model,
  form: BucketedForm,
  symbols: readonly string[],
  grids: readonly CandleOptions[],
): Promise<void> {
  for (const symbol of symbols) {
    for (const grid of grids) {
      const params = form.params(symbol, grid)
      const want = model.query(params)
      const label = JSON.stringify(params)
      expect(difference(await outcomeOf(() => form.answer(symbol, grid)), want), label).toBeUndefined()
      expect(difference(await outcomeOf(() => store.query(params)), want), label).toBeUndefined()
      expect(difference({ answer: await collect(form.stream(symbol, unpaged(grid))) }, model.query(form.params(symbol, unpaged(grid)))), label).toBeUndefined()
    }
  }
}

/** The candles form of `store`. */
export function candlesOf(store: PriceStore): BucketedForm {
  return { answer: (symbol, grid) => store.candles(symbol, grid), stream: (symbol, grid) => store.candleStream(symbol, grid), params: candleParams }
}

const GRIDS: CandleOptions[] = [
  { from: 0, to: MAX, interval: 1 },
  { from: 0, to: MAX, interval: MINUTE },
  { from: 0, to: MAX, interval: 7 * MINUTE },
  { from: 0, to: MAX, interval: HOUR },
  { from: 0, to: MAX, interval: HOUR, origin: 30 * MINUTE },
  { from: 0, to: MAX, interval: 1000 * HOUR },
  { from: H, to: H + HOUR - 1, interval: 10 * MINUTE, origin: 3 },
  { from: H + 30 * MINUTE, to: H + 30 * MINUTE, interval: 1 },
  { from: H - 20 * MINUTE, to: H + 30 * MINUTE, interval: 13 },
  { from: 0, to: MAX, interval: MINUTE, offset: 3, limit: 4 },
  { from: 0, to: MAX, interval: MINUTE, offset: 1000 },
]

export const candlesTests: FeatureTests = (suite) => {
  describe('candles', () => {
    const { seeded, openStore } = useStores(suite)

    it('candles, candleStream and query() give the model\'s candles', async () => {
      const { store, model } = await seeded()
      await expectBucketedLikeModel(store, model, candlesOf(store), ['BTC', 'ETH', 'BTC-USD', 'NOPE'], GRIDS)
    })

    it('high and low break ties of value to the later record; a bucket of one record is flat', async () => {
      const store = await openStore()
      const records = [
        rec({ symbol: 'TIE', timestamp: H + 1, value: 5 }),
        rec({ symbol: 'TIE', timestamp: H + 2, value: 9 }),
        rec({ symbol: 'TIE', timestamp: H + 3, value: 5 }),
        rec({ symbol: 'TIE', timestamp: H + 4, value: 9 }),
        rec({ symbol: 'TIE', timestamp: H + 4, id: 'z-same-ms', value: 1 }),
        rec({ symbol: 'TIE', timestamp: H + HOUR, value: -0 }),
      ]
      await store.putMany(records)
      const model = new Model().add(records)
      const grid = { from: H, to: H + 2 * HOUR, interval: HOUR }
      expect(difference(await outcomeOf(() => store.candles('TIE', grid)), model.query(candleParams('TIE', grid)))).toBeUndefined()
    })

    it('an answer over maxRangePoints → PRICE_RANGE_TOO_LARGE with the model\'s count; candleStream is not capped', async () => {
      const limits = { maxLimit: 3000, maxSymbols: 1000, maxRangePoints: 3 }
      const { store, model } = await seeded({ limits })
      const grid = { from: 0, to: MAX, interval: MINUTE }
      const want = model.query(candleParams('BTC', grid), limits)
      expect(want).toMatchObject({ error: 'PRICE_RANGE_TOO_LARGE' })
      expect(await outcomeOf(() => store.candles('BTC', grid))).toEqual(want)
      expect(difference({ answer: await collect(store.candleStream('BTC', grid)) }, model.query(candleParams('BTC', grid)))).toBeUndefined()
    })
  })
}
