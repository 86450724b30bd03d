/**
 * GET /feeds against a real store served by startServer: each page equals
 * `store.feeds()` for the same options, in the documented shape; pages
 * followed through `next` cover the catalogue with no gap and no repeat;
 * the catalogue is kept between commits (requests read nothing) and read
 * again after one; bad, unknown or repeated parameters answer 400 with the
 * library's code in the documented shape; HEAD sends no body; minPosition
 * is taken; the metrics name the endpoint; a store without `feeds` is not
 * served it.
 */
import { readFile } from 'node:fs/promises'
import { MemoryLevel } from 'memory-level'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { PriceStore } from '../../../src/index.js'
import { feedBuilds } from '../../../src/store/services/feeds.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../../src/testing/records.js'
import { checkSchema } from '../../support/http/schema-check.js'

const HOUR = 3_600_000
// In the store's order (UTF-8 bytes: Ä after z).
const SYMBOLS = ['AR', 'BTC', 'ETH', 'SOL', 'b', 'z', 'ÄÖ']
let doc: Record<string, any>
let store: PriceStore
let server: RunningServer

beforeAll(async () => {
  doc = parse(await readFile(new URL('../../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, any>
  store = await PriceStore.open(new MemoryLevel() as never, { provider: TEST_PROVIDER })
  const records = SYMBOLS.flatMap((symbol, s) =>
    Array.from({ length: 20 }, (_, i) => makeRecord({ symbol, timestamp: T0 + i * 10_000 * (s + 1) + (s === 5 ? -10 * 24 * HOUR : s === 4 ? -HOUR : 0), value: 100 + i / 4 })))
  await store.putMany(records)
  server = await startServer({ store, metrics: true })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

async function get(query: string, method = 'GET', base = server.url): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${base}/feeds${query}`, { method })
  const text = await response.text()
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), headers: response.headers }
}

const NOW = T0 + 200_000

describe('GET /feeds', () => {
  it.each([
    [`?now=${NOW}`, { now: NOW }],
    [`?now=${NOW}&limit=3&status=stale`, { now: NOW, limit: 3, status: 'stale' }],
    [`?now=${new Date(NOW).toISOString()}&staleAfter=2.5&retiredAfter=86400000&cursor=BTC`, { now: NOW, staleAfter: 2.5, retiredAfter: 86_400_000, cursor: 'BTC' }],
    [`?now=${NOW}&cursor=`, { now: NOW }],
  ] as const)('%s answers what store.feeds() gives, in the documented shape', async (query, options) => {
    const { status, body, headers } = await get(query)
    expect(status).toBe(200)
    expect(headers.get('cache-control')).toBe('no-store')
    expect(body).toEqual(JSON.parse(JSON.stringify(await store.feeds(options))))
    expect(checkSchema(body, { $ref: '#/components/schemas/FeedCatalogue' }, doc)).toEqual([])
  })

  it('has every status at some now (the statuses are the model\'s, checked in test/store/feeds.test.ts)', async () => {
    const { body } = await get(`?now=${NOW}`)
    expect(new Set(body.feeds.map((f: { status: string }) => f.status))).toEqual(new Set(['live', 'stale', 'retired']))
  })

  it('pages through the catalogue with next, no feed missed or repeated', async () => {
    const whole = (await get(`?now=${NOW}&limit=1000`)).body.feeds
    expect(whole.map((f: { symbol: string }) => f.symbol)).toEqual(SYMBOLS)
    for (const limit of [1, 2, 3]) {
      const seen: unknown[] = []
      let cursor = ''
      let pages = 0
      for (;;) {
        const { body } = await get(`?now=${NOW}&limit=${limit}&cursor=${encodeURIComponent(cursor)}`)
        seen.push(...body.feeds)
        pages++
        if (body.next === null) break
        cursor = body.next
      }
      expect(seen).toEqual(whole)
      expect(pages).toBe(Math.ceil(SYMBOLS.length / limit))
    }
  })

  it('reads the catalogue once per commit: requests between commits reuse it', async () => {
    await get('')
    const builds = feedBuilds.count
    for (const query of ['', '?limit=2', `?now=${NOW}&status=live`, '?cursor=ETH']) expect((await get(query)).status).toBe(200)
    expect(feedBuilds.count).toBe(builds)
    await store.putMany([makeRecord({ symbol: 'AR', timestamp: T0 + 300_000, value: 1.125 })])
    const { body } = await get(`?now=${NOW}&limit=1`)
    expect(feedBuilds.count).toBe(builds + 1)
    expect(body.position).toBe(store.position)
    expect(body.feeds[0]).toMatchObject({ symbol: 'AR', records: 21, lastTimestamp: T0 + 300_000, decimals: 3 })
  })

  it('sends no body to HEAD, and takes minPosition', async () => {
    const { status, body } = await get('', 'HEAD')
    expect(status).toBe(200)
    expect(body).toBeUndefined()
    expect((await get(`?minPosition=${store.position}`)).status).toBe(200)
  })

  it.each([
    ['?limit=0', 'PRICE_INVALID_QUERY', 'limit'],
    ['?limit=1001', 'PRICE_INVALID_QUERY', 'limit'],
    ['?limit=ten', 'PRICE_INVALID_QUERY', 'limit'],
    ['?limit=1&limit=2', 'PRICE_INVALID_QUERY', 'limit'],
    ['?status=dead', 'PRICE_INVALID_QUERY', 'status'],
    ['?now=soon', 'PRICE_INVALID_QUERY', 'now'],
    ['?staleAfter=0', 'PRICE_INVALID_QUERY', 'staleAfter'],
    ['?staleAfter=-1', 'PRICE_INVALID_QUERY', 'staleAfter'],
    ['?staleAfter=1e3', 'PRICE_INVALID_QUERY', 'staleAfter'],
    ['?retiredAfter=0', 'PRICE_INVALID_QUERY', 'retiredAfter'],
    ['?retiredAfter=1.5', 'PRICE_INVALID_QUERY', 'retiredAfter'],
    ['?after=BTC', 'PRICE_INVALID_QUERY', 'after'],
    ['?symbol=BTC', 'PRICE_INVALID_QUERY', 'symbol'],
  ])('%s answers 400 %s naming %s, in the documented shape', async (query, code, parameter) => {
    const { status, body } = await get(query)
    expect(status).toBe(400)
    expect(body.error.code).toBe(code)
    expect(body.error.message).toContain(parameter)
    expect(checkSchema(body, { $ref: '#/components/schemas/ClientErrorBody' }, doc)).toEqual([])
  })

  it('is named in the metrics', async () => {
    await get('')
    const text = await (await fetch(`${server.url}/metrics`)).text()
    expect(text).toMatch(/endpoint="feeds"/)
  })

  it('is not served for a store without feeds', async () => {
    const held = await startServer({ store: { query: async () => [] } as never })
    try {
      expect((await fetch(`${held.url}/feeds`)).status).toBe(404)
    } finally {
      await held.close()
    }
  })
})
