/**
 * ask() on the suite's backend: the answer of every form with the form
 * named, equal to the reference model's answer and to query()'s; a plan from
 * plan() taken as well; bad parameters refused with query()'s codes; a
 * signal; and the answer's type narrowed by its form (those type checks are
 * compiled by `npm run typecheck`).
 */
import { describe, expect, expectTypeOf, it } from 'vitest'
import { type Candle, type FilledPoint, type PriceRecord, type QueryParams, type RangeQuery, type SampledRecord, type Twap, type TypedAnswer } from '../../../src/index.js'
import { formOf, type AnswerForm } from '../../../src/engine.js'
import type { CountedBucket, EmptyCandle } from '../../../src/index.js'
import { rejectsCode } from '../../support/assertions.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR } from './model.js'

const TO = H + 3 * HOUR
const range = { symbol: 'BTC', fromTimestamp: String(H - HOUR), toTimestamp: String(TO), interval: String(HOUR / 4) }
const CASES: [AnswerForm, QueryParams][] = [
  ['latest', { symbol: 'BTC', limit: '2' }],
  ['latest', { symbol: 'BTC', toTimestamp: String(H + HOUR / 2 + 1), direction: 'nearest' }],
  ['several', { symbols: 'BTC,ETH' }],
  ['several', {}],
  ['range', range],
  ['filled', { ...range, fill: 'prev' }],
  ['candles', { ...range, aggregate: 'candles' }],
  ['candles', { ...range, aggregate: 'candles', fill: 'prev' }],
  ['twap', { symbols: 'BTC,ETH', fromTimestamp: String(H), toTimestamp: String(TO), aggregate: 'twap' }],
]

export const askTests: FeatureTests = (suite) => {
  describe('ask', () => {
    const { seeded } = useStores(suite)

    it('names each form, with the model\'s answer (which query() gives too) and the validated query', async () => {
      const { store, model } = await seeded()
      for (const [form, params] of CASES) {
        const label = JSON.stringify(params)
        const result = await store.ask(params)
        expect(result.form, label).toBe(form)
        expect({ answer: result.answer }, label).toEqual(model.query(params))
        expect(result.answer, label).toEqual(await store.query(params))
        expect(result.query, label).toEqual(store.plan(params).query)
        expect(formOf(result.query), label).toBe(form)
      }
    })

    it('takes a plan from plan() and URLSearchParams; refuses bad parameters and a forged plan', async () => {
      const { store } = await seeded()
      const plan = store.plan({ symbol: 'BTC', limit: '2' })
      expect(await store.ask(plan)).toEqual(await store.ask({ symbol: 'BTC', limit: '2' }))
      expect((await store.ask(new URLSearchParams('symbol=ETH'))).form).toBe('latest')
      await rejectsCode(store.ask({ ...plan }), 'PRICE_INVALID_QUERY')
      await rejectsCode(store.ask({ symbol: 'BTC', limit: 'x' }), 'PRICE_INVALID_QUERY')
    })

    it('takes a signal', async () => {
      const { store } = await seeded()
      const controller = new AbortController()
      controller.abort()
      await rejectsCode(store.ask({ symbol: 'BTC' }, { signal: controller.signal }), 'PRICE_ABORTED')
    })

    it('narrows the answer by form, for the type checker', async () => {
      const { store } = await seeded()
      const result = await store.ask({ symbol: 'BTC' })
      expectTypeOf(result).toEqualTypeOf<TypedAnswer>()
      // @ts-expect-error: without narrowing, the answer may be an object keyed by symbol, which has no map()
      void result.answer.map((item: unknown) => item)
      switch (result.form) {
        case 'latest':
          expectTypeOf(result.answer).toEqualTypeOf<PriceRecord[]>()
          break
        case 'several':
          expectTypeOf(result.answer).toEqualTypeOf<Record<string, PriceRecord>>()
          break
        case 'range':
          expectTypeOf(result.answer).toEqualTypeOf<SampledRecord[]>()
          expectTypeOf(result.query).toEqualTypeOf<RangeQuery>()
          break
        case 'filled':
          expectTypeOf(result.answer).toEqualTypeOf<FilledPoint[]>()
          expectTypeOf(result.query.fill.mode).toEqualTypeOf<'prev'>()
          break
        case 'candles':
          expectTypeOf(result.answer).toEqualTypeOf<Candle[]>()
          break
        case 'counted':
          expectTypeOf(result.answer).toEqualTypeOf<CountedBucket[]>()
          expectTypeOf(result.query.fill.mode).toEqualTypeOf<'none'>()
          break
        case 'countedCandles':
          expectTypeOf(result.answer).toEqualTypeOf<(Candle | EmptyCandle)[]>()
          break
        case 'twap':
          expectTypeOf(result.answer).toEqualTypeOf<Record<string, Twap>>()
          break
        case 'cross':
        case 'crossRange':
        case 'crossCandles':
        case 'crossTwap':
          break
        default:
          expectTypeOf(result).toBeNever()
      }
      expect(result.form).toBe('latest')
    })
  })
}
