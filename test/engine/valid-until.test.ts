import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerJsonPieces, answerToJson } from '../../src/engine/answer-json.js'
import { DeferredAnswer } from '../../src/engine/deferred-answer.js'
import { executePlanDeferred } from '../../src/engine/execute.js'
import { planQuery } from '../../src/engine/plan.js'
import { successorTimes } from '../../src/engine/valid-until.js'
import { executeQuery, parseQuery } from '../../src/engine.js'
import { PriceStore, isPriceStoreError, type PriceRecord, type QueryParams } from '../../src/index.js'
import { TEST_LIMITS } from '../../src/testing/record-arbitraries.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { ArraySource } from '../support/array-source.js'

// Validity windows (docs/semantics.md, "Validity windows"): each form, ties, fields, deferred JSON, pages.

const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
const MINUTE = 60_000

// BTC: a record a minute for ten minutes, and two more in the millisecond of the sixth (ids: btc-5 < btc-5a < btc-5b).
// ETH: three records, the last two in one millisecond.
const inputs = [
  ...Array.from({ length: 10 }, (_, i) => makeRecord({ symbol: 'BTC', timestamp: T0 + i * MINUTE, id: `btc-${i}` })),
  makeRecord({ symbol: 'BTC', timestamp: T0 + 5 * MINUTE, id: 'btc-5a' }),
  makeRecord({ symbol: 'BTC', timestamp: T0 + 5 * MINUTE, id: 'btc-5b' }),
  makeRecord({ symbol: 'ETH', timestamp: T0, id: 'eth-0' }),
  makeRecord({ symbol: 'ETH', timestamp: T0 + 3 * MINUTE, id: 'eth-1' }),
  makeRecord({ symbol: 'ETH', timestamp: T0 + 3 * MINUTE, id: 'eth-2' }),
]
const stored = storedRecords(inputs, TEST_PROVIDER)

async function engine(search: string): Promise<unknown> {
  return executeQuery(parseQuery(new URLSearchParams(search), config), new ArraySource(stored, { batchSize: 2 }), TEST_LIMITS)
}

function model(search: string): unknown {
  const result = referenceQuery(stored, new URLSearchParams(search), config)
  if (!('answer' in result)) throw new Error(`the model refused ${search}: ${result.error}`)
  return result.answer
}

/** `[id, validUntil]` of each record of a list answer. */
function windows(answer: unknown): [string, unknown][] {
  return (answer as (PriceRecord & { validUntil: unknown })[]).map((r) => [r.id, r.validUntil])
}

function refusal(params: QueryParams): { code: string; parameter: unknown } {
  try {
    parseQuery(params, config)
  } catch (err) {
    if (!isPriceStoreError(err)) throw err
    return { code: err.code, parameter: err.details.parameter }
  }
  throw new Error('expected a coded error')
}

describe('validUntil in the engine', () => {
  it('is opt-in: without it, or with validUntil=false, the answer is the same as before', async () => {
    for (const search of ['symbol=BTC&limit=5', 'symbols=BTC,ETH', `symbol=BTC&fromTimestamp=${T0}&toTimestamp=${T0 + 9 * MINUTE}&interval=${2 * MINUTE}`]) {
      const plain = await engine(search)
      expect(answerToJson(await engine(`${search}&validUntil=false`) as never)).toBe(answerToJson(plain as never))
      expect(JSON.stringify(plain)).not.toContain('validUntil')
    }
    expect(parseQuery(new URLSearchParams('symbol=BTC&validUntil=false'), config)).toEqual(parseQuery(new URLSearchParams('symbol=BTC'), config))
  })

  it('latest-N: each record\'s successor, ties in (timestamp, id) order; the newest gets null', async () => {
    const answer = await engine('symbol=BTC&limit=6&validUntil=true')
    expect(windows(answer)).toEqual([
      ['btc-9', null], ['btc-8', T0 + 9 * MINUTE], ['btc-7', T0 + 8 * MINUTE], ['btc-6', T0 + 7 * MINUTE],
      // Three records in one millisecond: the first two are followed within it (an empty window), the last by btc-6.
      ['btc-5b', T0 + 6 * MINUTE], ['btc-5a', T0 + 5 * MINUTE],
    ])
    expect(answer).toEqual(model('symbol=BTC&limit=6&validUntil=true'))
    // validUntil is the last key.
    expect(Object.keys((answer as object[])[0] as object).at(-1)).toBe('validUntil')
  })

  it('with an offset or a history window, the newest record of the answer still gets its successor from the store', async () => {
    expect(windows(await engine('symbol=BTC&limit=2&offset=1&validUntil=true'))).toEqual([['btc-8', T0 + 9 * MINUTE], ['btc-7', T0 + 8 * MINUTE]])
    const history = `symbol=BTC&limit=2&fromTimestamp=${T0}&toTimestamp=${T0 + 4 * MINUTE}&validUntil=true`
    expect(windows(await engine(history))).toEqual([['btc-4', T0 + 5 * MINUTE], ['btc-3', T0 + 4 * MINUTE]])
    expect(await engine(history)).toEqual(model(history))
  })

  it('as-of and directed as-of: the record in force and when it stopped being', async () => {
    expect(windows(await engine(`symbol=BTC&toTimestamp=${T0 + 5 * MINUTE + 30_000}&validUntil=true`))).toEqual([['btc-5b', T0 + 6 * MINUTE]])
    expect(windows(await engine(`symbol=BTC&toTimestamp=${T0 + 5 * MINUTE}&validUntil=true`))).toEqual([['btc-5b', T0 + 6 * MINUTE]])
    // The first record at or after the time: followed in its own millisecond, so never in force (an empty window).
    expect(windows(await engine(`symbol=BTC&toTimestamp=${T0 + 4 * MINUTE + 1}&direction=after&validUntil=true`))).toEqual([['btc-5', T0 + 5 * MINUTE]])
  })

  it('several: null for each symbol\'s newest, the true successor inside a toTimestamp window', async () => {
    const newest = await engine('symbols=BTC,ETH&validUntil=true') as Record<string, PriceRecord & { validUntil: unknown }>
    expect([newest['BTC']?.validUntil, newest['ETH']?.validUntil]).toEqual([null, null])
    const asOf = `toTimestamp=${T0 + 3 * MINUTE - 1}&validUntil=true`
    const old = await engine(asOf) as Record<string, PriceRecord & { validUntil: unknown }>
    expect([old['BTC']?.id, old['BTC']?.validUntil, old['ETH']?.id, old['ETH']?.validUntil]).toEqual(['btc-2', T0 + 3 * MINUTE, 'eth-0', T0 + 3 * MINUTE])
    expect(old).toEqual(model(asOf))
  })

  it('range: a sampled record\'s successor is the next stored record, not the next sample', async () => {
    const search = `symbol=BTC&fromTimestamp=${T0}&toTimestamp=${T0 + 7 * MINUTE}&interval=${2 * MINUTE}&validUntil=true`
    const answer = await engine(search)
    expect(windows(answer)).toEqual([['btc-1', T0 + 2 * MINUTE], ['btc-3', T0 + 4 * MINUTE], ['btc-5b', T0 + 6 * MINUTE], ['btc-7', T0 + 8 * MINUTE]])
    expect(answer).toEqual(model(search))
    for (const fill of ['prev', 'none']) {
      const filled = `symbol=BTC&fromTimestamp=${T0 - 2 * MINUTE}&toTimestamp=${T0 + 12 * MINUTE}&interval=${3 * MINUTE}&fill=${fill}&validUntil=true`
      expect(await engine(filled)).toEqual(model(filled))
    }
  })

  it('fields: validUntil is kept by any selection, and its value read from the whole record', async () => {
    const kept = await engine('symbol=BTC&limit=2&fields=value&validUntil=true')
    expect(kept).toEqual([{ value: expect.any(Number), validUntil: null }, { value: expect.any(Number), validUntil: T0 + 9 * MINUTE }])
    const several = await engine('symbols=ETH&fields=-signature,-source&validUntil=true')
    expect(several).toEqual(model('symbols=ETH&fields=-signature,-source&validUntil=true'))
    expect(refusal(new URLSearchParams('symbol=BTC&fields=validUntil'))).toEqual({ code: 'PRICE_INVALID_QUERY', parameter: 'fields' })
  })

  it('a deferred answer writes the same JSON from its rows as from its built records', async () => {
    const plan = planQuery(parseQuery(new URLSearchParams('symbol=BTC&limit=12&validUntil=true'), config), TEST_LIMITS.maxRangePoints)
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
    try {
      await store.putMany(inputs)
      const deferred = await store.runDeferred(plan)
      expect(deferred).toBeInstanceOf(DeferredAnswer)
      // The store's rows write their own JSON: validUntil is spliced onto it, not rebuilt from the record.
      expect((deferred as DeferredAnswer).json(0)).toBe(JSON.stringify((deferred as DeferredAnswer).item(0)))
      const streamed = [...answerJsonPieces(deferred as DeferredAnswer, 64)].join('')
      expect(JSON.parse(streamed)).toEqual(model('symbol=BTC&limit=12&validUntil=true'))
      expect(streamed).toBe(answerToJson((deferred as DeferredAnswer).toArray() as never))
      const engineDeferred = await executePlanDeferred(plan, new ArraySource(stored))
      expect((engineDeferred as DeferredAnswer).toArray()).toEqual(JSON.parse(streamed))
    } finally {
      await store.close()
    }
  })

  it('refuses validUntil=true on candles, TWAP and cross rates, and a value other than true or false', () => {
    const window = `fromTimestamp=${T0}&toTimestamp=${T0 + MINUTE}`
    for (const search of [`symbol=BTC&${window}&interval=1000&aggregate=candles&validUntil=true`, `${window}&aggregate=twap&validUntil=true`, 'quote=BTC&base=ETH&validUntil=true']) {
      expect(refusal(new URLSearchParams(search))).toEqual({ code: 'PRICE_INVALID_QUERY', parameter: 'validUntil' })
      expect(referenceQuery(stored, new URLSearchParams(search), config)).toEqual({ error: 'PRICE_INVALID_QUERY' })
    }
    for (const value of ['1', 'yes', 'TRUE', '']) expect(refusal({ symbol: 'BTC', validUntil: value })).toEqual({ code: 'PRICE_INVALID_QUERY', parameter: 'validUntil' })
  })
})

describe('successorTimes', () => {
  it('reads past many records of one millisecond', async () => {
    const crowd = storedRecords(Array.from({ length: 70 }, (_, i) => makeRecord({ symbol: 'X', timestamp: T0, id: `id-${String(i).padStart(3, '0')}` })).concat([makeRecord({ symbol: 'X', timestamp: T0 + 1, id: 'last' })]), TEST_PROVIDER)
    const source = new ArraySource(crowd, { batchSize: 5 })
    expect(await successorTimes(source, 'X', [{ timestamp: T0, id: 'id-000' }, { timestamp: T0, id: 'id-069' }, { timestamp: T0 + 1, id: 'last' }])).toEqual([T0, T0 + 1, null])
    expect(await successorTimes(source, 'Y', [{ timestamp: T0, id: 'a' }])).toEqual([null])
  })
})

describe('validUntil through a store', () => {
  let store: PriceStore
  beforeAll(async () => {
    store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
    await store.putMany(inputs)
  })
  afterAll(async () => {
    await store.close()
  })

  it('the typed methods take validUntil: true; candles refuse it', async () => {
    expect(windows(await store.latest('BTC', { limit: 2, validUntil: true }))).toEqual([['btc-9', null], ['btc-8', T0 + 9 * MINUTE]])
    expect(await store.several(['ETH'], { to: T0, validUntil: true })).toEqual(model(`symbols=ETH&toTimestamp=${T0}&validUntil=true`))
    expect(await store.range('BTC', { from: T0, to: T0 + 9 * MINUTE, interval: 5 * MINUTE, validUntil: true })).toEqual(
      model(`symbol=BTC&fromTimestamp=${T0}&toTimestamp=${T0 + 9 * MINUTE}&interval=${5 * MINUTE}&validUntil=true`),
    )
    expect(await store.latest('BTC', { validUntil: false })).toEqual(await store.latest('BTC'))
    await expect(store.candles('BTC', { from: T0, to: T0 + MINUTE, interval: 1000, validUntil: true } as never)).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY', details: { parameter: 'validUntil' } })
    await expect(store.twap(['BTC'], { from: T0, to: T0 + MINUTE, validUntil: true } as never)).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY', details: { parameter: 'validUntil' } })
    await expect((async () => store.cross('BTC', 'ETH', { validUntil: true } as never))()).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY', details: { parameter: 'validUntil' } })
    await expect((async () => { for await (const _ of store.rangeStream('BTC', { from: T0, to: T0 + MINUTE, interval: 1000, validUntil: true })) break })()).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY', details: { parameter: 'validUntil' } })
    const batch = await store.batchAsOf({ symbols: ['BTC', 'ETH'], times: [T0 - 1, T0 + 5 * MINUTE], validUntil: true })
    expect([batch['BTC']?.[String(T0 - 1)], windows([batch['BTC']?.[String(T0 + 5 * MINUTE)]?.record]), windows([batch['ETH']?.[String(T0 + 5 * MINUTE)]?.record])]).toEqual([null, [['btc-5b', T0 + 6 * MINUTE]], [['eth-2', null]]])
    await expect(store.latest('BTC', { validUntil: 'yes' } as never)).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY', details: { parameter: 'validUntil' } })
  })

  it('a read scope bounds the lookup as it bounds the answer: a record whose successor the scope hides gets null', async () => {
    const scope = { notAfter: T0 + 5 * MINUTE + 1 }
    const answer = await store.query({ symbol: 'BTC', limit: '3', validUntil: 'true' }, { scope })
    expect(windows(answer)).toEqual([['btc-5b', null], ['btc-5a', T0 + 5 * MINUTE], ['btc-5', T0 + 5 * MINUTE]])
    const several = (await store.query({ symbols: 'BTC,ETH', validUntil: 'true' }, { scope: { notAfter: T0 + 3 * MINUTE - 1 } })) as unknown as Record<string, { id: string; validUntil: unknown }>
    expect([several['BTC']?.id, several['BTC']?.validUntil, several['ETH']?.id, several['ETH']?.validUntil]).toEqual(['btc-2', null, 'eth-0', null])
  })

  it('a cursor walk: the last record of each page gets its true successor, not the next page\'s first', async () => {
    const whole = model('symbol=BTC&limit=12&validUntil=true') as unknown[]
    const seen: unknown[] = []
    let cursor = ''
    do {
      const page = await store.page({ symbol: 'BTC', limit: '5', cursor, validUntil: 'true' })
      seen.push(...(page.answer as unknown[]))
      cursor = page.next ?? ''
    } while (cursor !== '')
    expect(seen).toEqual(whole)
    const range = `symbol=BTC&fromTimestamp=${T0}&toTimestamp=${T0 + 9 * MINUTE}&interval=${MINUTE}&validUntil=true`
    const ranged: unknown[] = []
    cursor = ''
    do {
      const page = await store.page(new URLSearchParams(`${range}&limit=3&cursor=${cursor}`))
      ranged.push(...(page.answer as unknown[]))
      cursor = page.next ?? ''
    } while (cursor !== '')
    expect(ranged).toEqual(model(range))
  })
})
