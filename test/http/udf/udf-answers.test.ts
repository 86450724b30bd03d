import { describe, expect, it } from 'vitest'
import { answerUdf, priceScale, udfEndpoint, type UdfOptions, type UdfSource } from '../../../src/adapters/http/udf/udf.js'
import { planHistory } from '../../../src/adapters/http/udf/udf-history.js'
import { DEFAULT_LIMITS, PriceStoreError, type Limits, type PriceRecord } from '../../../src/index.js'
import type { Candle } from '../../../src/types.js'
import { TEST_PROVIDER as PROVIDER } from '../../../src/testing/records.js'

// The socket-free UDF answers, over a stub source whose every call is recorded.

type CandleCall = { symbol: string; options: { from: number; to: number; interval: number; origin: number } }
type LatestCall = { symbol: string; options: { limit: number; to?: number } }

interface Stub extends UdfSource {
  candleCalls: CandleCall[]
  latestCalls: LatestCall[]
}

function stub(options: { symbols?: string[]; candles?: Candle[]; latest?: PriceRecord[]; limits?: Partial<Limits>; fail?: unknown } = {}): Stub {
  const candleCalls: CandleCall[] = []
  const latestCalls: LatestCall[] = []
  return {
    candleCalls,
    latestCalls,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    provider: PROVIDER,
    async symbols() {
      return options.symbols ?? ['AR', 'BTC', 'ETH', 'WBTC', 'stETH']
    },
    async candles(symbol, candleOptions) {
      candleCalls.push({ symbol, options: candleOptions })
      if (options.fail !== undefined) throw options.fail
      return options.candles ?? []
    },
    async latest(symbol, latestOptions) {
      latestCalls.push({ symbol, options: latestOptions })
      return options.latest ?? []
    },
  }
}

function ref(id: string, timestamp: number, value: number): { id: string; timestamp: number; value: number } {
  return { id, timestamp, value }
}

function record(symbol: string, timestamp: number, value: number): PriceRecord {
  return {
    id: `${symbol}-${timestamp}`, symbol, provider: PROVIDER.id, value, signature: 's', permawebTx: 't', version: '0.4',
    source: {}, timestamp, providerPublicKey: PROVIDER.publicKey,
  }
}

async function udf(source: UdfSource, endpoint: Parameters<typeof answerUdf>[1], query: string, options?: UdfOptions) {
  const answer = await answerUdf(source, endpoint, new URLSearchParams(query), options)
  expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.body)))
  const body = answer.headers['content-type']!.startsWith('application/json') ? JSON.parse(answer.body) : answer.body
  return { ...answer, json: body }
}

/** 2024-05-31T22:00:00Z in seconds: a whole hour, a whole 5 minutes. */
const T = 1_717_192_800

describe('udfEndpoint', () => {
  it('names the five endpoints and nothing else', () => {
    expect(['config', 'symbols', 'search', 'history', 'time'].map((name) => udfEndpoint(`/udf/${name}`))).toEqual(['config', 'symbols', 'search', 'history', 'time'])
    for (const path of ['/udf', '/udf/', '/udf/config/', '/udf/quotes', '/UDF/config', '/udf/constructor', '/udf/__proto__']) expect(udfEndpoint(path)).toBeUndefined()
  })
})

describe('/udf/config and /udf/time', () => {
  it('config: search and single-symbol resolve, no groups, server time, the resolutions served', async () => {
    const { status, json } = await udf(stub(), 'config', '')
    expect(status).toBe(200)
    expect(json).toEqual({
      supported_resolutions: ['1', '5', '15', '30', '60', '240', '1D', '1W'],
      supports_search: true,
      supports_group_request: false,
      supports_marks: false,
      supports_timescale_marks: false,
      supports_time: true,
      exchanges: [],
      symbols_types: [{ name: 'crypto', value: 'crypto' }],
    })
  })

  it('time: whole UNIX seconds as plain text', async () => {
    const { status, headers, body } = await udf(stub(), 'time', '', { now: () => 1_717_200_000_999 })
    expect(status).toBe(200)
    expect(headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(body).toBe('1717200000')
  })
})

describe('/udf/symbols', () => {
  it('a known symbol: 24x7 crypto in UTC, its price scale from the latest price', async () => {
    const source = stub({ latest: [record('AR', 1_717_199_990_658, 36.57618)] })
    const { status, json } = await udf(source, 'symbols', 'symbol=AR')
    expect(status).toBe(200)
    expect(json).toMatchObject({
      name: 'AR', ticker: 'AR', type: 'crypto', session: '24x7', timezone: 'Etc/UTC', exchange: 'redstone',
      minmov: 1, pricescale: 10_000, has_intraday: true, has_daily: true, has_empty_bars: false,
      supported_resolutions: ['1', '5', '15', '30', '60', '240', '1D', '1W'], intraday_multipliers: ['1', '5', '15', '30', '60', '240'],
    })
    expect(source.latestCalls).toEqual([{ symbol: 'AR', options: { limit: 1 } }])
  })

  it.each([
    [67_012.5, 100], [3_562.77, 100], [999.9, 1_000], [100, 1_000], [36.57, 10_000], [1, 100_000], [0.9998, 1_000_000],
    [0.161, 1_000_000], [0.000012, 10_000_000_000], [1e-20, 1e12], [-5, 100_000], [0, 100], [undefined, 100],
  ])('price scale at %s: %i (six significant digits, at least two decimals)', (price, scale) => {
    expect(priceScale(price)).toBe(scale)
  })

  it('an unknown symbol: 404 HTTP_NOT_FOUND, with UDF\'s s: "error" so its adapter reports it', async () => {
    const { status, json } = await udf(stub(), 'symbols', 'symbol=NOPE')
    expect(status).toBe(404)
    expect(json).toEqual({ s: 'error', errmsg: expect.stringContaining('NOPE'), error: { code: 'HTTP_NOT_FOUND', message: expect.stringContaining('NOPE') } })
    expect(json.errmsg).toBe(json.error.message)
  })

  it.each([
    ['', 'PRICE_INVALID_QUERY'],
    ['symbol=', 'PRICE_INVALID_SYMBOL'],
    ['symbol=BTC%20USD', 'PRICE_INVALID_SYMBOL'],
    ['symbol=A,B', 'PRICE_INVALID_SYMBOL'],
    ['symbol=BTC&symbol=ETH', 'PRICE_INVALID_QUERY'],
  ])('%j: 400 %s', async (query, code) => {
    const { status, json } = await udf(stub(), 'symbols', query)
    expect(status).toBe(400)
    expect(json).toMatchObject({ s: 'error', error: { code } })
  })
})

describe('/udf/search', () => {
  it('exact matches first, then prefixes, then the rest, ignoring case; each in the store\'s order', async () => {
    const { json } = await udf(stub({ symbols: ['AR', 'BTC', 'BTCB', 'ETH', 'WBTC', 'btc.e', 'stETH'] }), 'search', 'query=btc')
    expect(json.map((item: { symbol: string }) => item.symbol)).toEqual(['BTC', 'BTCB', 'btc.e', 'WBTC'])
    expect(json[0]).toEqual({ symbol: 'BTC', full_name: 'BTC', description: 'BTC price signed by redstone', exchange: 'redstone', ticker: 'BTC', type: 'crypto' })
  })

  it('an empty query lists every symbol, up to limit (default: maxSymbols)', async () => {
    const many = Array.from({ length: 40 }, (_, i) => `S${String(i).padStart(2, '0')}`)
    expect((await udf(stub({ symbols: many }), 'search', 'query=')).json).toHaveLength(40)
    expect((await udf(stub({ symbols: many, limits: { maxSymbols: 25 } }), 'search', '')).json).toHaveLength(25)
    expect((await udf(stub({ symbols: many, limits: { maxSymbols: 25 } }), 'search', 'limit=26')).status).toBe(400)
    expect((await udf(stub({ symbols: many }), 'search', 'limit=3')).json.map((item: { symbol: string }) => item.symbol)).toEqual(['S00', 'S01', 'S02'])
  })

  it('type and exchange filter: crypto and this store\'s provider, or empty for any', async () => {
    expect((await udf(stub(), 'search', 'query=&type=crypto&exchange=redstone')).json).toHaveLength(5)
    expect((await udf(stub(), 'search', 'query=&type=&exchange=')).json).toHaveLength(5)
    expect((await udf(stub(), 'search', 'query=&type=stock')).json).toEqual([])
    expect((await udf(stub(), 'search', 'query=&exchange=NYSE')).json).toEqual([])
  })

  it.each(['limit=0', 'limit=x', 'limit=1001', 'limit=-1', 'query=a&query=b'])('%s: 400 PRICE_INVALID_QUERY', async (query) => {
    const { status, json } = await udf(stub(), 'search', query)
    expect(status).toBe(400)
    expect(json.error.code).toBe('PRICE_INVALID_QUERY')
  })
})

describe('planHistory: whole buckets, UNIX seconds, `to` not included', () => {
  const plan = (query: string, maxBars = 10_000) => planHistory(new URLSearchParams(query), maxBars)

  it('aligned from and to: exactly the buckets from `from` up to the one before `to`', () => {
    expect(plan(`symbol=BTC&resolution=5&from=${T}&to=${T + 3600}`)).toEqual({
      symbol: 'BTC', grid: { interval: 300_000, origin: 0 }, window: { from: T * 1000, to: (T + 3600) * 1000 - 1 }, start: T * 1000,
    })
  })

  it('from and to inside buckets: every bucket they overlap, read whole', () => {
    // 22:00:30 to 22:12:10 overlaps 22:00, 22:05 and 22:10, which ends at 22:14:59.999.
    expect(plan(`symbol=BTC&resolution=5&from=${T + 30}&to=${T + 730}`).window).toEqual({ from: T * 1000, to: (T + 900) * 1000 - 1 })
  })

  it('countback: that many buckets, ending with the one before `to`; `from` ignored', () => {
    expect(plan(`symbol=BTC&resolution=60&from=0&to=${T}&countback=3`).window).toEqual({ from: (T - 3 * 3600) * 1000, to: T * 1000 - 1 })
    expect(plan(`symbol=BTC&resolution=60&to=${T}&countback=1`).window).toEqual({ from: (T - 3600) * 1000, to: T * 1000 - 1 })
  })

  it('more buckets than maxBars: the newest maxBars', () => {
    expect(plan(`symbol=BTC&resolution=1&from=0&to=${T}`, 10).window).toEqual({ from: (T - 600) * 1000, to: T * 1000 - 1 })
    expect(plan(`symbol=BTC&resolution=1&to=${T}&countback=9007199254740991`, 10).window).toEqual({ from: (T - 600) * 1000, to: T * 1000 - 1 })
  })

  it('days start at 00:00 UTC, weeks on Monday 00:00 UTC', () => {
    // 2024-05-31 (a Friday) 22:00 → the day 2024-05-31, the week from Monday 2024-05-27.
    expect(plan(`symbol=BTC&resolution=1D&from=${T}&to=${T + 1}`).window).toEqual({ from: 1_717_113_600_000, to: 1_717_199_999_999 })
    expect(plan(`symbol=BTC&resolution=D&from=${T}&to=${T + 1}`).window).toEqual({ from: 1_717_113_600_000, to: 1_717_199_999_999 })
    expect(plan(`symbol=BTC&resolution=1W&from=${T}&to=${T + 1}`).window).toEqual({ from: 1_716_768_000_000, to: 1_717_372_799_999 })
    expect(new Date(1_716_768_000_000).toISOString()).toBe('2024-05-27T00:00:00.000Z')
    expect(new Date(1_716_768_000_000).getUTCDay()).toBe(1)
  })

  it('no time covered: no window; the past starts at `from`', () => {
    expect(plan(`symbol=BTC&resolution=5&from=${T}&to=${T}`)).toEqual({ symbol: 'BTC', grid: { interval: 300_000, origin: 0 }, start: T * 1000 })
    expect(plan('symbol=BTC&resolution=5&from=0&to=0').window).toBeUndefined()
    expect(plan('symbol=BTC&resolution=5&to=0&countback=5').window).toBeUndefined()
  })

  it('a window before the epoch is cut at 0', () => {
    expect(plan('symbol=BTC&resolution=1W&from=0&to=60').window).toEqual({ from: 0, to: 4 * 86_400_000 - 1 })
  })

  it.each([
    ['resolution=5&from=1&to=2', 'PRICE_INVALID_QUERY', 'symbol'],
    ['symbol=&resolution=5&from=1&to=2', 'PRICE_INVALID_SYMBOL', 'symbol'],
    ['symbol=BTC&from=1&to=2', 'PRICE_INVALID_QUERY', 'resolution'],
    ['symbol=BTC&resolution=2&from=1&to=2', 'PRICE_INVALID_INTERVAL', 'resolution'],
    ['symbol=BTC&resolution=1M&from=1&to=2', 'PRICE_INVALID_INTERVAL', 'resolution'],
    ['symbol=BTC&resolution=toString&from=1&to=2', 'PRICE_INVALID_INTERVAL', 'resolution'],
    ['symbol=BTC&resolution=5&to=2', 'PRICE_INVALID_QUERY', 'from'],
    ['symbol=BTC&resolution=5&from=1', 'PRICE_INVALID_QUERY', 'to'],
    ['symbol=BTC&resolution=5&from=3&to=2', 'PRICE_INVALID_RANGE', 'from'],
    ['symbol=BTC&resolution=5&from=x&to=2', 'PRICE_INVALID_RANGE', 'from'],
    ['symbol=BTC&resolution=5&from=1.5&to=2', 'PRICE_INVALID_RANGE', 'from'],
    ['symbol=BTC&resolution=5&from=-1&to=2', 'PRICE_INVALID_RANGE', 'from'],
    ['symbol=BTC&resolution=5&from=1&to=', 'PRICE_INVALID_RANGE', 'to'],
    ['symbol=BTC&resolution=5&from=1&to=8640000000001', 'PRICE_INVALID_RANGE', 'to'],
    ['symbol=BTC&resolution=5&from=1&to=99999999999999999999', 'PRICE_INVALID_RANGE', 'to'],
    ['symbol=BTC&resolution=5&from=1&to=2&countback=0', 'PRICE_INVALID_RANGE', 'countback'],
    ['symbol=BTC&resolution=5&from=1&to=2&to=3', 'PRICE_INVALID_QUERY', 'to'],
  ])('%s: %s naming %s', (query, code, parameter) => {
    let thrown: unknown
    try {
      plan(query)
    } catch (err) {
      thrown = err
    }
    expect(thrown).toBeInstanceOf(PriceStoreError)
    expect(thrown).toMatchObject({ code, details: { parameter } })
    expect((thrown as Error).message).toContain(parameter)
  })

  it('leading zeros are allowed, as in /prices', () => {
    expect(plan(`symbol=BTC&resolution=5&from=000${T}&to=0${T + 300}`).window).toEqual({ from: T * 1000, to: (T + 300) * 1000 - 1 })
  })
})

describe('/udf/history', () => {
  const candles: Candle[] = [
    { bucket: T * 1000, open: ref('a', T * 1000 + 1, 10), high: ref('b', T * 1000 + 5, 12.5), low: ref('c', T * 1000 + 9, 9), close: ref('d', T * 1000 + 299_000, 11), count: 30 },
    { bucket: (T + 600) * 1000, open: ref('e', (T + 600) * 1000, -0), high: ref('e', (T + 600) * 1000, -0), low: ref('e', (T + 600) * 1000, -0), close: ref('e', (T + 600) * 1000, -0), count: 1 },
  ]

  it('bars as UDF columns: t in seconds, o h l c from the candle\'s records, v the number of records', async () => {
    const source = stub({ candles })
    const { status, body } = await udf(source, 'history', `symbol=BTC&resolution=5&from=${T}&to=${T + 900}`)
    expect(status).toBe(200)
    // Exact text: -0 is kept, as /prices keeps it.
    expect(body).toBe(`{"s":"ok","t":[${T},${T + 600}],"o":[10,-0],"h":[12.5,-0],"l":[9,-0],"c":[11,-0],"v":[30,1]}`)
    expect(source.candleCalls).toEqual([{ symbol: 'BTC', options: { from: T * 1000, to: (T + 900) * 1000 - 1, interval: 300_000, origin: 0 } }])
    expect(source.latestCalls).toEqual([])
  })

  it('no bars, older data: no_data with nextTime, the start of the bar of the newest record before the request', async () => {
    const source = stub({ latest: [record('BTC', (T - 7200) * 1000 + 123_456, 5)] })
    const { json } = await udf(source, 'history', `symbol=BTC&resolution=60&from=${T}&to=${T + 3600}`)
    expect(json).toEqual({ s: 'no_data', nextTime: T - 7200 })
    expect(source.latestCalls).toEqual([{ symbol: 'BTC', options: { to: T * 1000 - 1, limit: 1 } }])
  })

  it('no bars and nothing older: no_data alone', async () => {
    expect((await udf(stub(), 'history', `symbol=BTC&resolution=60&from=${T}&to=${T + 3600}`)).json).toEqual({ s: 'no_data' })
    expect((await udf(stub(), 'history', 'symbol=BTC&resolution=60&from=0&to=3600')).json).toEqual({ s: 'no_data' })
  })

  it('an empty request reads no candles, only what lies before it', async () => {
    const source = stub({ latest: [record('BTC', (T - 1) * 1000, 5)] })
    expect((await udf(source, 'history', `symbol=BTC&resolution=5&from=${T}&to=${T}`)).json).toEqual({ s: 'no_data', nextTime: T - 300 })
    expect(source.candleCalls).toEqual([])
  })

  it('runHistory gets the plan and decides when the reads run', async () => {
    const seen: unknown[] = []
    const options: UdfOptions = {
      runHistory: (plan, read) => {
        seen.push(plan)
        return read()
      },
    }
    const { json } = await udf(stub({ candles }), 'history', `symbol=BTC&resolution=5&from=${T}&to=${T + 900}`, options)
    expect(json.t).toEqual([T, T + 600])
    expect(seen).toEqual([planHistory(new URLSearchParams(`symbol=BTC&resolution=5&from=${T}&to=${T + 900}`), DEFAULT_LIMITS.maxRangePoints)])
  })

  it('a bad request never reaches the store or runHistory', async () => {
    const source = stub()
    const options: UdfOptions = { runHistory: () => Promise.reject(new Error('not here')) }
    const { status, json } = await udf(source, 'history', `symbol=BTC&resolution=7&from=${T}&to=${T + 900}`, options)
    expect(status).toBe(400)
    expect(json).toEqual({ s: 'error', errmsg: json.error.message, error: { code: 'PRICE_INVALID_INTERVAL', message: expect.stringContaining('"7"') } })
    expect(source.candleCalls).toEqual([])
  })

  it('store failures: 503 for a closed store (retry-after), 500 without internals otherwise, both reported', async () => {
    const reported: unknown[] = []
    const closed = await udf(stub({ fail: new PriceStoreError('PRICE_NOT_OPEN', 'closed at /secret/path') }), 'history', `symbol=BTC&resolution=5&from=${T}&to=${T + 900}`, { onError: (err) => reported.push(err) })
    expect(closed.status).toBe(503)
    expect(closed.headers['retry-after']).toBe('1')
    expect(closed.json).toMatchObject({ s: 'error', error: { code: 'PRICE_NOT_OPEN' } })
    const broken = await udf(stub({ fail: new Error('SECRET') }), 'history', `symbol=BTC&resolution=5&from=${T}&to=${T + 900}`, { onError: (err) => reported.push(err) })
    expect(broken.status).toBe(500)
    expect(broken.json).toEqual({
      s: 'error', errmsg: 'internal error while answering the request', error: { code: 'HTTP_INTERNAL_ERROR', message: 'internal error while answering the request' },
    })
    expect(broken.body).not.toContain('SECRET')
    expect(reported).toHaveLength(2)
  })

  it('a refused range (PRICE_RANGE_TOO_LARGE from the store) is a 400 in UDF\'s shape', async () => {
    const { status, json } = await udf(stub({ fail: new PriceStoreError('PRICE_RANGE_TOO_LARGE', 'too many') }), 'history', `symbol=BTC&resolution=5&from=${T}&to=${T + 900}`)
    expect(status).toBe(400)
    expect(json).toEqual({ s: 'error', errmsg: 'too many', error: { code: 'PRICE_RANGE_TOO_LARGE', message: 'too many' } })
  })
})
