import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { PricesQueryable } from '../../../src/adapters/http/prices/answer.js'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { UdfSource } from '../../../src/adapters/http/udf/udf.js'
import type { DemoRecord } from '../../../src/demo/demo-data.js'
import { DEFAULT_LIMITS, type PriceStore } from '../../../src/index.js'
import type { Candle } from '../../../src/types.js'
import { END, PROVIDER, openDemoStore, serve } from '../../support/http/demo-server.js'

// TradingView's UDF endpoints over HTTP, against a real store of demo data
// (5 tokens, a record every 10 s for the 2 hours before END).

const JSON_TYPE = 'application/json; charset=utf-8'
/** END in UDF's seconds: 2024-06-01T00:00:00Z. */
const END_S = END / 1000
const HOUR_S = 3600

let store: PriceStore
let records: DemoRecord[]
let server: RunningServer

beforeAll(async () => {
  ;({ store, records } = await openDemoStore())
  server = await serve(store)
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

async function get(path: string, base = server.url): Promise<{ status: number; headers: Headers; json: any }> {
  // Uncompressed (fetch asks for gzip): content-length is then the text's (compression: test/http/encoding/).
  const response = await fetch(`${base}${path}`, { headers: { 'accept-encoding': 'identity' } })
  const text = await response.text()
  expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(text)))
  return { status: response.status, headers: response.headers, json: response.headers.get('content-type') === JSON_TYPE ? JSON.parse(text) : text }
}

/**
 * UDF columns computed from the raw records by a naive loop: each bucket of
 * `interval` ms (shifted by `origin`) whose start lies in [firstBar, endBar]
 * (seconds), with its first and last record by (timestamp, id), its
 * extremes and its record count.
 */
function naiveHistory(symbol: string, interval: number, firstBar: number, lastBar: number, origin = 0) {
  const buckets = new Map<number, DemoRecord[]>()
  for (const record of records) {
    if (record.symbol !== symbol) continue
    const start = Math.floor((record.timestamp - origin) / interval) * interval + origin
    if (start < firstBar * 1000 || start > lastBar * 1000) continue
    buckets.set(start, [...(buckets.get(start) ?? []), record])
  }
  const t: number[] = []
  const o: number[] = []
  const h: number[] = []
  const l: number[] = []
  const c: number[] = []
  const v: number[] = []
  for (const [start, bucket] of [...buckets.entries()].sort(([a], [b]) => a - b)) {
    bucket.sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : 1))
    t.push(start / 1000)
    o.push(bucket[0]!.value)
    h.push(Math.max(...bucket.map((record) => record.value)))
    l.push(Math.min(...bucket.map((record) => record.value)))
    c.push(bucket.at(-1)!.value)
    v.push(bucket.length)
  }
  return { s: 'ok', t, o, h, l, c, v }
}

describe('/udf/history', () => {
  it('5-minute bars over the two hours: the candles of the raw records', async () => {
    const { status, headers, json } = await get(`/udf/history?symbol=AR&resolution=5&from=${END_S - 2 * HOUR_S}&to=${END_S}`)
    expect(status).toBe(200)
    expect(headers.get('content-type')).toBe(JSON_TYPE)
    const expected = naiveHistory('AR', 300_000, END_S - 2 * HOUR_S, END_S - 300)
    expect(expected.t).toHaveLength(24)
    expect(json).toEqual(expected)
  })

  it('from and to inside bars: every bar they touch, whole, the same as asked alone', async () => {
    const { json } = await get(`/udf/history?symbol=BTC&resolution=15&from=${END_S - HOUR_S - 100}&to=${END_S - 1000}`)
    // 22:58:20 to 23:43:20 touches the bars of 22:45, 23:00, 23:15 and 23:30.
    expect(json).toEqual(naiveHistory('BTC', 900_000, END_S - HOUR_S - 900, END_S - 1800))
    const alone = await get(`/udf/history?symbol=BTC&resolution=15&from=${END_S - 1800}&to=${END_S - 900}`)
    expect(alone.json.c).toEqual([json.c.at(-1)])
  })

  it('1D bars start at 00:00 UTC, 1W bars on Monday', async () => {
    const day = await get(`/udf/history?symbol=ETH&resolution=1D&from=${END_S - 86_400}&to=${END_S}`)
    expect(day.json).toEqual(naiveHistory('ETH', 86_400_000, END_S - 86_400, END_S - 86_400))
    expect(day.json.v).toEqual([720])
    const week = await get(`/udf/history?symbol=ETH&resolution=W&from=${END_S - 86_400}&to=${END_S}`)
    expect(week.json.t).toEqual([Date.UTC(2024, 4, 27) / 1000])
    expect(week.json.c).toEqual(day.json.c)
  })

  it('countback: the last bars before `to`, `from` ignored', async () => {
    const { json } = await get(`/udf/history?symbol=stETH&resolution=15&from=0&to=${END_S}&countback=3`)
    expect(json).toEqual(naiveHistory('stETH', 900_000, END_S - 2700, END_S - 900))
  })

  it('more bars than maxRangePoints: the newest ones', async () => {
    const capped = await openDemoStore({ maxRangePoints: 10 })
    const running = await serve(capped.store)
    try {
      const { status, json } = await get(`/udf/history?symbol=AR&resolution=1&from=${END_S - 2 * HOUR_S}&to=${END_S}`, running.url)
      expect(status).toBe(200)
      expect(json).toEqual(naiveHistory('AR', 60_000, END_S - 600, END_S - 60))
    } finally {
      await running.close()
      await capped.store.close()
    }
  })

  it('no bars: no_data, with nextTime when there is older data', async () => {
    expect((await get(`/udf/history?symbol=AR&resolution=60&from=${END_S + HOUR_S}&to=${END_S + 2 * HOUR_S}`)).json).toEqual({ s: 'no_data', nextTime: END_S - HOUR_S })
    expect((await get(`/udf/history?symbol=AR&resolution=5&from=${END_S + HOUR_S}&to=${END_S + 2 * HOUR_S}`)).json).toEqual({ s: 'no_data', nextTime: END_S - 300 })
    expect((await get(`/udf/history?symbol=AR&resolution=5&from=${END_S - 10 * HOUR_S}&to=${END_S - 3 * HOUR_S}`)).json).toEqual({ s: 'no_data' })
    expect((await get(`/udf/history?symbol=NOPE&resolution=5&from=${END_S - HOUR_S}&to=${END_S}`)).json).toEqual({ s: 'no_data' })
  })

  it.each([
    ['symbol=AR&resolution=2&from=1&to=2', 'PRICE_INVALID_INTERVAL'],
    ['symbol=AR&resolution=1M&from=1&to=2', 'PRICE_INVALID_INTERVAL'],
    ['resolution=5&from=1&to=2', 'PRICE_INVALID_QUERY'],
    ['symbol=&resolution=5&from=1&to=2', 'PRICE_INVALID_SYMBOL'],
    ['symbol=AR&resolution=5&from=3&to=2', 'PRICE_INVALID_RANGE'],
    ['symbol=AR&resolution=5&from=abc&to=2', 'PRICE_INVALID_RANGE'],
    ['symbol=AR&resolution=5&from=1&to=1e9', 'PRICE_INVALID_RANGE'],
    ['symbol=AR&resolution=5&from=1&to=2&countback=-3', 'PRICE_INVALID_RANGE'],
    ['symbol=AR&symbol=BTC&resolution=5&from=1&to=2', 'PRICE_INVALID_QUERY'],
  ])('%s: 400 %s, coded JSON in UDF\'s shape', async (query, code) => {
    const { status, headers, json } = await get(`/udf/history?${query}`)
    expect(status).toBe(400)
    expect(headers.get('content-type')).toBe(JSON_TYPE)
    expect(json).toEqual({ s: 'error', errmsg: expect.any(String), error: { code, message: json.errmsg } })
  })
})

describe('/udf/config, /udf/symbols, /udf/search, /udf/time', () => {
  it('config: search, no groups, the resolutions served', async () => {
    const { status, json } = await get('/udf/config')
    expect(status).toBe(200)
    expect(json).toMatchObject({ supports_search: true, supports_group_request: false, supports_time: true, supported_resolutions: ['1', '5', '15', '30', '60', '240', '1D', '1W'] })
  })

  it('symbols: the symbol\'s info, its price scale from its latest price; 404 for an unknown one', async () => {
    const btc = await get('/udf/symbols?symbol=BTC')
    expect(btc.json).toMatchObject({ name: 'BTC', ticker: 'BTC', type: 'crypto', session: '24x7', timezone: 'Etc/UTC', exchange: PROVIDER.name, minmov: 1, pricescale: 100 })
    expect((await get('/udf/symbols?symbol=AR')).json.pricescale).toBe(10_000)
    const unknown = await get('/udf/symbols?symbol=DOGE')
    expect(unknown.status).toBe(404)
    expect(unknown.json).toMatchObject({ s: 'error', error: { code: 'HTTP_NOT_FOUND' } })
    const bad = await get('/udf/symbols?symbol=B%20TC')
    expect(bad.status).toBe(400)
    expect(bad.json.error.code).toBe('PRICE_INVALID_SYMBOL')
  })

  it('search: the store\'s symbols holding the query, exact match first', async () => {
    const { json } = await get('/udf/search?query=eth&type=&exchange=&limit=30')
    expect(json.map((item: { symbol: string }) => item.symbol)).toEqual(['ETH', 'stETH'])
    expect((await get('/udf/search?query=')).json.map((item: { symbol: string }) => item.symbol)).toEqual(await store.symbols())
    expect((await get('/udf/search?limit=0')).status).toBe(400)
  })

  it('time: the server\'s clock in whole seconds, as text', async () => {
    const before = Math.floor(Date.now() / 1000)
    const { status, headers, json } = await get('/udf/time')
    const after = Math.floor(Date.now() / 1000)
    expect(status).toBe(200)
    expect(headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(json).toMatch(/^[0-9]+$/)
    expect(Number(json)).toBeGreaterThanOrEqual(before)
    expect(Number(json)).toBeLessThanOrEqual(after)
  })

  it('HEAD answers the headers of GET; other methods 405 with Allow', async () => {
    const head = await fetch(`${server.url}/udf/config`, { method: 'HEAD' })
    const got = await fetch(`${server.url}/udf/config`)
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(got.headers.get('content-length'))
    expect(await head.text()).toBe('')
    for (const path of ['/udf/history', '/udf/config', '/', '/page/chart.js']) {
      const post = await fetch(`${server.url}${path}`, { method: 'POST', body: '{}' })
      expect(post.status).toBe(405)
      expect(post.headers.get('allow')).toBe('GET, HEAD')
      expect(((await post.json()) as { error: { code: string } }).error.code).toBe('HTTP_METHOD_NOT_ALLOWED')
    }
  })

  it('a store that cannot give candles serves /prices only: /udf/* and / are 404', async () => {
    const running = await serve({ query: async () => [] })
    try {
      for (const path of ['/udf/config', '/udf/history?symbol=A&resolution=5&from=1&to=2', '/']) {
        const { status, json } = await get(path, running.url)
        expect(status).toBe(404)
        expect(json.error.code).toBe('HTTP_NOT_FOUND')
      }
    } finally {
      await running.close()
    }
  })
})

describe('history goes through the query gate, as heavy /prices queries do', () => {
  const servers: RunningServer[] = []
  afterEach(async () => {
    for (const running of servers.splice(0)) {
      running.server.closeAllConnections()
      await running.close()
    }
  })

  /** The demo store, but its candles wait until the test releases them (then answer none). */
  function slowSource() {
    const waiting: (() => void)[] = []
    const source: UdfSource & PricesQueryable = {
      limits: DEFAULT_LIMITS,
      provider: PROVIDER,
      query: (params) => store.query(params),
      plan: (params) => store.plan(params),
      run: (plan) => store.run(plan),
      symbols: () => store.symbols(),
      latest: (symbol, options) => store.latest(symbol, options),
      candles: () => new Promise<Candle[]>((resolve) => waiting.push(() => resolve([]))),
    }
    return { source, waiting }
  }

  async function until(running: RunningServer, check: (load: ReturnType<RunningServer['queries']>) => boolean): Promise<void> {
    while (!check(running.queries())) await new Promise((resolve) => setTimeout(resolve, 5))
  }

  const history = `/udf/history?symbol=BTC&resolution=5&from=${END_S - HOUR_S}&to=${END_S}`

  it('a history read takes a slot; past the cap and the line it is refused with 503 HTTP_BUSY in UDF\'s shape', async () => {
    const { source, waiting } = slowSource()
    const running = await startServer({ store: source, maxConcurrentQueries: 1, maxQueuedQueries: 0, queryTimeoutMs: 0 })
    servers.push(running)
    const first = fetch(`${running.url}${history}`)
    await until(running, (load) => load.running === 1)
    const refused = await get(history, running.url)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.json).toEqual({ s: 'error', errmsg: expect.any(String), error: { code: 'HTTP_BUSY', message: refused.json.errmsg } })
    // Not the store's heavy work: answered meanwhile.
    expect((await get('/udf/config', running.url)).status).toBe(200)
    // A request covering no time only looks up the newest record before it: light, as symbol=BTC&toTimestamp=T is.
    expect((await get(`/udf/history?symbol=BTC&resolution=5&from=${END_S}&to=${END_S}`, running.url)).json).toEqual({ s: 'no_data', nextTime: END_S - 300 })
    expect((await get('/prices?symbol=BTC', running.url)).status).toBe(200)
    waiting.forEach((release) => release())
    const answered = await first
    expect(answered.status).toBe(200)
    // The slow candles answered none: the newest bar before the window is where to look.
    expect(await answered.json()).toEqual({ s: 'no_data', nextTime: END_S - HOUR_S - 300 })
    expect(running.queries()).toMatchObject({ running: 0, refused: 1 })
  })

  it('a history read past the time budget: 503 HTTP_QUERY_TIMEOUT in UDF\'s shape', async () => {
    const { source, waiting } = slowSource()
    const running = await startServer({ store: source, queryTimeoutMs: 200 })
    servers.push(running)
    const { status, headers, json } = await get(history, running.url)
    expect(status).toBe(503)
    expect(headers.get('retry-after')).toBe('1')
    expect(json).toMatchObject({ s: 'error', error: { code: 'HTTP_QUERY_TIMEOUT' } })
    waiting.forEach((release) => release())
    await until(running, (load) => load.running === 0)
    expect(running.queries().timedOut).toBe(1)
  })
})
