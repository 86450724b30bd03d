/**
 * `store.ask()`: the answer of `query()` with its form named, so a caller
 * switches on `form` rather than guessing with `Array.isArray`. The type
 * checks below are compiled by `npm run typecheck`.
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { PriceStore, formOf, type AnswerForm, type Candle, type FilledPoint, type PriceRecord, type QueryParams, type RangeQuery, type SampledRecord, type Twap, type TypedAnswer } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { rejectsCode } from '../support/assertions.js'

const HOUR = 3_600_000
const TO = T0 + 3 * HOUR
let store: PriceStore

beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  await store.putMany([
    makeRecord({ symbol: 'BTC', timestamp: T0, value: 10 }),
    makeRecord({ symbol: 'BTC', timestamp: T0 + 2 * HOUR, value: 12 }),
    makeRecord({ symbol: 'ETH', timestamp: T0 + HOUR, value: 2 }),
  ])
})

afterAll(async () => {
  await store.close()
})

const range = { symbol: 'BTC', fromTimestamp: String(T0), toTimestamp: String(TO), interval: String(HOUR) }
const cases: [AnswerForm, QueryParams][] = [
  ['latest', { symbol: 'BTC', limit: '2' }],
  ['latest', { symbol: 'BTC', toTimestamp: String(T0 + HOUR), direction: 'nearest' }],
  ['several', { symbols: 'BTC,ETH' }],
  ['range', range],
  ['filled', { ...range, fill: 'prev' }],
  ['candles', { ...range, aggregate: 'candles' }],
  ['candles', { ...range, aggregate: 'candles', fill: 'prev' }],
  ['twap', { symbols: 'BTC,ETH', fromTimestamp: String(T0), toTimestamp: String(TO), aggregate: 'twap' }],
]

describe('store.ask', () => {
  it.each(cases)('names the form %s, with the answer query() gives and the validated query', async (form, params) => {
    const result = await store.ask(params)
    expect(result.form).toBe(form)
    expect(result.answer).toEqual(await store.query(params))
    expect(result.query).toEqual(store.plan(params).query)
    expect(formOf(result.query)).toBe(form)
  })

  it('takes a plan from store.plan() as well, and refuses anything else shaped like one', async () => {
    const plan = store.plan({ symbol: 'BTC', limit: '2' })
    expect(await store.ask(plan)).toEqual(await store.ask({ symbol: 'BTC', limit: '2' }))
    await rejectsCode(store.ask({ ...plan }), 'PRICE_INVALID_QUERY')
  })

  it('takes URLSearchParams, and rejects bad parameters with the codes query() uses', async () => {
    expect((await store.ask(new URLSearchParams('symbol=ETH'))).form).toBe('latest')
    await rejectsCode(store.ask({ symbol: 'BTC', limit: 'x' }), 'PRICE_INVALID_QUERY')
  })

  it('takes a signal', async () => {
    const controller = new AbortController()
    controller.abort()
    await rejectsCode(store.ask({ symbol: 'BTC' }, { signal: controller.signal }), 'PRICE_ABORTED')
  })

  it('narrows the answer by form, for the type checker', async () => {
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
      case 'twap':
        expectTypeOf(result.answer).toEqualTypeOf<Record<string, Twap>>()
        break
      default:
        expectTypeOf(result).toBeNever()
    }
    expect(result.form).toBe('latest')
  })
})
