/**
 * GET /prices/quality against a real store served by startServer: status,
 * bad input, the JSON shape (against docs/openapi.yaml and the reference
 * model), HEAD; its bound on reports at once and a client leaving, on a
 * stub store; and the feed-age metrics with their bounded label count.
 */
import { readFile } from 'node:fs/promises'
import { MemoryLevel } from 'memory-level'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { MAX_QUALITY_REPORTS } from '../../src/adapters/http/live/quality-endpoint.js'
import { FEED_AGE_MAX_SYMBOLS } from '../../src/adapters/http/observe/feed-age-metrics.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER, referenceQuality, storedRecords } from '../../src/testing/index.js'
import { checkSchema } from '../support/http/schema-check.js'
import { rec } from '../support/records.js'

const BASE = Date.UTC(2026, 0, 1)
const STEP = 10_000

let doc: Record<string, any>
let store: PriceStore
let server: RunningServer
const inputs = [
  ...Array.from({ length: 200 }, (_, i) => rec({ symbol: 'BTC', timestamp: BASE + i * STEP + (i >= 100 ? 600_000 : 0), value: 100 + (i % 7), id: `b${i}` })),
  ...Array.from({ length: 50 }, (_, i) => rec({ symbol: 'ETH', timestamp: BASE + i * 2 * STEP, value: 10 + i, id: `e${i}`, source: { a: 10 + i, b: 11 + i } })),
  rec({ symbol: 'ETH', timestamp: BASE, id: 'e-dup' }),
]

beforeAll(async () => {
  doc = parse(await readFile(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, any>
  store = await PriceStore.open(new MemoryLevel() as never, { provider: TEST_PROVIDER })
  await store.putMany(inputs)
  server = await startServer({ store, metrics: true })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

async function get(query: string, method = 'GET', base = server.url): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${base}/prices/quality${query}`, { method })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) }
}

const SCHEMA = { $ref: '#/components/schemas/QualityReport' }

describe('GET /prices/quality', () => {
  it('answers the report store.quality() gives, in the documented shape, not cached', async () => {
    const to = BASE + 3_600_000
    for (const [query, options] of [
      [`?fromTimestamp=${BASE}&toTimestamp=${to}&now=${to}`, { from: BASE, to, now: to }],
      [`?symbols=ETH,BTC&fromTimestamp=${BASE}&toTimestamp=${to}&now=${to}&interval=600000&gapThreshold=15000`, { symbols: ['ETH', 'BTC'], from: BASE, to, now: to, interval: 600_000, gapThreshold: 15_000 }],
      [`?symbol=ETH&fromTimestamp=${BASE}&toTimestamp=${to}&now=${to}&sources=true`, { symbols: ['ETH'], from: BASE, to, now: to, sources: true }],
      [`?fromTimestamp=${BASE}&toTimestamp=${to}&now=${to}&moves=false&interval=3600000&origin=-60000`, { from: BASE, to, now: to, moves: false, interval: 3_600_000, origin: -60_000 }],
    ] as const) {
      const { status, headers, body } = await get(query)
      expect(status, query).toBe(200)
      expect(headers.get('cache-control')).toBe('no-store')
      expect(headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(checkSchema(body, SCHEMA, doc), query).toEqual([])
      expect(body).toEqual(JSON.parse(JSON.stringify(referenceQuality(storedRecords(inputs, TEST_PROVIDER), options))))
    }
    const btc = (await get(`?symbol=BTC&fromTimestamp=${BASE}&toTimestamp=${to}&now=${to}`)).body.symbols[0]
    expect(btc.gaps).toMatchObject({ median: STEP, max: STEP + 600_000, over: 1, list: [{ start: BASE + 99 * STEP, end: BASE + 100 * STEP + 600_000 }] })
  })

  it('HEAD answers the headers without a body', async () => {
    const { status, body } = await get(`?fromTimestamp=${BASE}&toTimestamp=${BASE}`, 'HEAD')
    expect(status).toBe(200)
    expect(body).toBeUndefined()
  })

  it.each([
    ['', 'PRICE_INVALID_RANGE'],
    [`?fromTimestamp=${BASE}`, 'PRICE_INVALID_RANGE'],
    [`?fromTimestamp=2&toTimestamp=1`, 'PRICE_INVALID_RANGE'],
    [`?fromTimestamp=x&toTimestamp=1`, 'PRICE_INVALID_RANGE'],
    [`?fromTimestamp=0&toTimestamp=1&fromTimestamp=0`, 'PRICE_INVALID_QUERY'],
    [`?fromTimestamp=0&toTimestamp=1&interval=0`, 'PRICE_INVALID_INTERVAL'],
    [`?fromTimestamp=0&toTimestamp=1&interval=1h`, 'PRICE_INVALID_INTERVAL'],
    [`?fromTimestamp=0&toTimestamp=1&origin=5`, 'PRICE_INVALID_INTERVAL'],
    [`?fromTimestamp=0&toTimestamp=1&gapThreshold=0`, 'PRICE_INVALID_QUERY'],
    [`?fromTimestamp=0&toTimestamp=1&now=-1`, 'PRICE_INVALID_QUERY'],
    [`?fromTimestamp=0&toTimestamp=1&sources=1`, 'PRICE_INVALID_QUERY'],
    [`?fromTimestamp=0&toTimestamp=1&moves=false&sources=true`, 'PRICE_INVALID_QUERY'],
    [`?fromTimestamp=0&toTimestamp=1&symbol=BTC&symbols=ETH`, 'PRICE_INVALID_QUERY'],
    [`?fromTimestamp=0&toTimestamp=1&symbols=BTC,,ETH`, 'PRICE_INVALID_SYMBOL'],
    [`?fromTimestamp=0&toTimestamp=100000000&interval=1`, 'PRICE_RANGE_TOO_LARGE'],
  ])('%s answers 400 %s in the documented shape', async (query, code) => {
    const { status, body } = await get(query)
    expect(status).toBe(400)
    expect(body.error.code).toBe(code)
    expect(checkSchema(body, { $ref: '#/components/schemas/ClientErrorBody' }, doc)).toEqual([])
  })

  it('answers 503 on a closed store', async () => {
    const closed = await PriceStore.open(new MemoryLevel() as never, { provider: TEST_PROVIDER })
    await closed.close()
    const down = await startServer({ store: closed })
    try {
      const { status, body } = await get('?fromTimestamp=0&toTimestamp=1', 'GET', down.url)
      expect(status).toBe(503)
      expect(body.error.code).toBe('PRICE_NOT_OPEN')
    } finally {
      await down.close()
    }
  })

  it(`makes at most ${MAX_QUALITY_REPORTS} reports at once (503 HTTP_BUSY past them), and aborts the report of a client that left`, async () => {
    const asked: { signal: AbortSignal; answer: (value: unknown) => void }[] = []
    const stub = {
      query: async () => [],
      quality: (options: { signal: AbortSignal }) => new Promise((resolve) => asked.push({ signal: options.signal, answer: resolve })),
    }
    const held = await startServer({ store: stub as never })
    try {
      const leaving = new AbortController()
      const first = fetch(`${held.url}/prices/quality?fromTimestamp=0&toTimestamp=1`, { signal: leaving.signal }).catch(() => undefined)
      const second = fetch(`${held.url}/prices/quality?fromTimestamp=0&toTimestamp=1`)
      await until(() => asked.length === 2)
      const busy = await fetch(`${held.url}/prices/quality?fromTimestamp=0&toTimestamp=1`)
      expect(busy.status).toBe(503)
      expect(busy.headers.get('retry-after')).toBe('1')
      expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('HTTP_BUSY')
      leaving.abort()
      await first
      await until(() => asked[0]!.signal.aborted)
      asked[0]!.answer({ symbols: [] })
      asked[1]!.answer({ from: 0, to: 1, now: 0, gapThreshold: null, symbols: [] })
      expect((await second).status).toBe(200)
      // Both slots are free again.
      const third = fetch(`${held.url}/prices/quality?fromTimestamp=0&toTimestamp=1`)
      await until(() => asked.length === 3)
      asked[2]!.answer({ symbols: [] })
      expect((await third).status).toBe(200)
    } finally {
      await held.close()
    }
  })
})

describe('feed-age metrics', () => {
  it(`label at most ${FEED_AGE_MAX_SYMBOLS} symbols, count the rest, and take the stalest of all`, async () => {
    const many = await PriceStore.open(new MemoryLevel() as never, { provider: TEST_PROVIDER })
    // 150 symbols S000..S149; S149, past the labelled ones, is the stalest.
    await many.putMany(Array.from({ length: 150 }, (_, i) => rec({ symbol: `S${String(i).padStart(3, '0')}`, timestamp: BASE + (i === 149 ? 0 : 1_000 + i) })))
    const running = await startServer({ store: many, metrics: true })
    try {
      const before = Date.now()
      const text = await (await fetch(`${running.url}/metrics`)).text()
      const after = Date.now()
      const series = text.split('\n').filter((line) => line.startsWith('price_store_feed_age_seconds{'))
      expect(series).toHaveLength(FEED_AGE_MAX_SYMBOLS)
      expect(series[0]).toMatch(/^price_store_feed_age_seconds\{symbol="S000"\} /)
      const age = Number(series[0]!.split(' ')[1])
      expect(age).toBeGreaterThanOrEqual((before - BASE - 1_000) / 1000)
      expect(age).toBeLessThanOrEqual((after - BASE - 1_000) / 1000)
      expect(text).toMatch(/^price_store_feed_age_unlabelled_symbols 50$/m)
      const max = Number(/^price_store_feed_age_max_seconds (\S+)$/m.exec(text)![1])
      expect(max).toBeGreaterThanOrEqual((before - BASE) / 1000)
      expect(max).toBeLessThanOrEqual((after - BASE) / 1000)
    } finally {
      await running.close()
      await many.close()
    }
  })

  it('show nothing for a store that cannot be read, and the scrape still answers', async () => {
    const closed = await PriceStore.open(new MemoryLevel() as never, { provider: TEST_PROVIDER })
    await closed.close()
    const running = await startServer({ store: closed, metrics: true })
    try {
      const response = await fetch(`${running.url}/metrics`)
      expect(response.status).toBe(200)
      const text = await response.text()
      expect(text).not.toMatch(/^price_store_feed_age_seconds\{/m)
      expect(text).toMatch(/^price_store_feed_age_unlabelled_symbols 0$/m)
    } finally {
      await running.close()
    }
  })
})

/** Waits for `condition`, polling; the deadline only bounds a failure. */
async function until(condition: () => boolean, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
