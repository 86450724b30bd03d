/**
 * Cursors over HTTP (issue 24, point 2): `GET /prices?...&cursor=` answers
 * the body the same parameters give without a cursor, plus the next page's
 * cursor in `x-next-cursor` and `link: <?...>; rel="next"` (absent on the
 * last page, and on every answer without `cursor`); following them through
 * any list form with any page size gives the unpaged answer, byte for byte
 * once joined. Bad cursors are 400 `PRICE_INVALID_QUERY`. Fixed fast-check
 * seed (FC_SEED explores others).
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { answerToJson } from '../../src/engine/answer-json.js'
import type { PriceStore } from '../../src/index.js'
import { END, openDemoStore } from '../support/http/demo-server.js'

const HOUR = 3_600_000
let store: PriceStore
let server: RunningServer

beforeAll(async () => {
  ;({ store } = await openDemoStore())
  server = await startServer({ store, cors: { origins: '*' } })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

interface Fetched {
  readonly status: number
  readonly body: string
  readonly next: string | null
  readonly link: string | null
  readonly headers: Headers
}

async function get(query: string, method = 'GET'): Promise<Fetched> {
  const response = await fetch(`${server.url}/prices?${query}`, { method, headers: { origin: 'https://app.example' } })
  return { status: response.status, body: await response.text(), next: response.headers.get('x-next-cursor'), link: response.headers.get('link'), headers: response.headers }
}

/** Every page of `params` with `limit`, following `x-next-cursor` (or the `link`), as JSON items joined, and each page's body. */
async function pages(params: Record<string, string>, limit: number, follow: 'header' | 'link' = 'header'): Promise<{ items: unknown[]; bodies: string[] }> {
  const items: unknown[] = []
  const bodies: string[] = []
  let query = new URLSearchParams({ ...params, limit: String(limit), cursor: '' }).toString()
  for (let turn = 0; turn < 10_000; turn++) {
    const page = await get(query)
    expect(page.status, `${query}: ${page.body}`).toBe(200)
    bodies.push(page.body)
    items.push(...(JSON.parse(page.body) as unknown[]))
    expect(page.link === null).toBe(page.next === null)
    if (page.next === null) return { items, bodies }
    if (follow === 'link') {
      const match = /^<\?(.*)>; rel="next"$/.exec(page.link!)
      query = match![1]!
    } else {
      query = new URLSearchParams({ ...params, limit: String(limit), cursor: page.next }).toString()
    }
  }
  throw new Error('paging did not end')
}

const WINDOW = { fromTimestamp: String(END - 2 * HOUR - 600_000), toTimestamp: String(END + 1_800_000) }
const FORMS: Record<string, string>[] = [
  { symbol: 'AR' },
  { symbol: 'BTC', ...WINDOW },
  { symbol: 'ETH', ...WINDOW, interval: '600000' },
  { symbol: 'ETH', ...WINDOW, interval: '420000', origin: '-60000', fill: 'prev' },
  { symbol: 'ETH', ...WINDOW, interval: '600000', fill: 'none', fields: 'id,value' },
  { symbol: 'AR', ...WINDOW, interval: '900000', aggregate: 'candles' },
  { symbol: 'AR', ...WINDOW, interval: '900000', aggregate: 'candles', fill: 'none' },
  { quote: 'ETH', base: 'BTC', ...WINDOW, interval: '60000' },
  { quote: 'AR', base: 'ETH', ...WINDOW, interval: '120000', origin: '30000', aggregate: 'candles', maxAge: '60000' },
]

describe('GET /prices with cursor', () => {
  it('pages every list form with any page size: joined, the pages are the unpaged answer; each body is store.page\'s', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FORMS), fc.integer({ min: 1, max: 400 }), fc.constantFrom<'header' | 'link'>('header', 'link'), async (params, limit, follow) => {
        const whole = await store.query({ ...params, limit: '3000' })
        const { items, bodies } = await pages(params, limit, follow)
        expect(items).toEqual(JSON.parse(answerToJson(whole)))
        expect(bodies[0]).toBe(answerToJson(await store.query({ ...params, limit: String(limit) })))
      }),
      { numRuns: 25 },
    )
  }, 120_000)

  it('adds the headers only with cursor, and only when a page follows; HEAD answers them too; CORS exposes them', async () => {
    const plain = await get('symbol=AR&limit=5')
    expect(plain.next).toBeNull()
    const first = await get('symbol=AR&limit=5&cursor=')
    expect(first.body).toBe(plain.body)
    expect(first.next).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    expect(first.link).toBe(`<?symbol=AR&limit=5&cursor=${first.next}>; rel="next"`)
    expect(first.headers.get('access-control-expose-headers')).toBe('retry-after, x-next-cursor, link, x-price-store-hint')
    const head = await get('symbol=AR&limit=5&cursor=', 'HEAD')
    expect(head.next).toBe(first.next)
    const last = await get(`symbol=AR&fromTimestamp=${END - 25_000}&toTimestamp=${END}&limit=5&cursor=`)
    expect(JSON.parse(last.body).length).toBeLessThan(5)
    expect(last.next).toBeNull()
    expect(last.link).toBeNull()
  })

  it('while records are written between pages, nothing that existed throughout is lost or repeated', async () => {
    const params = { symbol: 'stETH', fromTimestamp: String(END - HOUR), toTimestamp: String(END) }
    const before = (await store.query({ ...params, limit: '3000' })) as { id: string; timestamp: number }[]
    const template = before[0] as unknown as Record<string, unknown>
    const key = (item: { id: string; timestamp: number }) => `${item.timestamp}/${item.id}`
    const seen: string[] = []
    let query = new URLSearchParams({ ...params, limit: '37', cursor: '' }).toString()
    for (let turn = 0; ; turn++) {
      const page = await get(query)
      expect(page.status).toBe(200)
      const items = JSON.parse(page.body) as { id: string; timestamp: number }[]
      seen.push(...items.map(key))
      if (page.next === null) break
      const last = items[items.length - 1]!
      // Newer than the first page, older than the last item, at its very millisecond (a smaller and a greater id), and a rewrite.
      if (turn < 6) {
        await store.putMany([
          { ...template, id: `newer-${turn}`, timestamp: END - 1000 + turn, value: 1 },
          { ...template, id: `older-${turn}`, timestamp: last.timestamp - 1, value: 2 },
          { ...template, id: `0-tie-${turn}`, timestamp: last.timestamp, value: 3 },
          { ...template, id: `~-tie-${turn}`, timestamp: last.timestamp, value: 4 },
          { ...template, ...before[turn * 3], value: 5 },
        ] as never)
      }
      query = new URLSearchParams({ ...params, limit: '37', cursor: page.next }).toString()
    }
    expect(new Set(seen).size).toBe(seen.length)
    for (const item of before) expect(seen).toContain(key(item))
    // Written older than the page being read: returned; newer, or above the last item at its millisecond: not.
    for (let turn = 0; turn < 6; turn++) {
      expect(seen.some((k) => k.endsWith(`/older-${turn}`))).toBe(true)
      expect(seen.some((k) => k.endsWith(`/0-tie-${turn}`))).toBe(true)
      expect(seen.some((k) => k.endsWith(`/~-tie-${turn}`) || k.endsWith(`/newer-${turn}`))).toBe(false)
    }
  })

  it('streams a large page with its cursor', async () => {
    const page = await get('symbol=BTC&limit=600&cursor=')
    expect(page.headers.get('transfer-encoding')).toBe('chunked')
    expect(page.next).not.toBeNull()
    expect(page.body).toBe(answerToJson(await store.query({ symbol: 'BTC', limit: '600' })))
  })

  it('answers a bad cursor with 400 PRICE_INVALID_QUERY and a cursor with offset too', async () => {
    const { next } = await get('symbol=AR&limit=5&cursor=')
    const flipped = Buffer.from(next!, 'base64url')
    flipped[flipped.length - 1] = flipped[flipped.length - 1]! ^ 0x80
    for (const query of ['symbol=AR&cursor=garbage', `symbol=AR&cursor=${flipped.toString('base64url')}`, `symbol=ETH&limit=5&cursor=${next}`, 'symbol=AR&offset=5&cursor=', 'symbols=AR,BTC&cursor=', `symbol=AR&limit=5&cursor=${next}&cursor=${next}`]) {
      const answer = await get(query)
      expect(answer.status, query).toBe(400)
      expect(JSON.parse(answer.body).error.code, query).toBe('PRICE_INVALID_QUERY')
      expect(answer.next).toBeNull()
    }
  })

  it('answers errors as store.query does (the fuzz oracle\'s rule), except that a later page resumes only here', async () => {
    const { next } = await get('symbol=AR&limit=5&cursor=')
    const queries = [
      'symbol=AR&cursor=garbage', 'symbol=AR&limit=0&cursor=garbage', 'symbol=AR&fromTimestamp=9&toTimestamp=1&cursor=garbage',
      `symbol=AR&fromTimestamp=9&toTimestamp=1&cursor=${next}`, `symbol=AR&offset=5&cursor=${next}`, `symbols=AR&cursor=${next}`, 'symbol=AR&limit=5&cursor=',
    ]
    for (const query of queries) {
      const answer = await get(query)
      const expected = await store.query(new URLSearchParams(query)).then(answerToJson, (err: { code: string; message: string }) => JSON.stringify({ error: { code: err.code, message: err.message } }))
      expect(answer.body, query).toBe(expected)
    }
    // A cursor of this layout: store.query refuses it (use store.page or HTTP); HTTP checks it and resumes.
    await expect(store.query({ symbol: 'AR', limit: '5', cursor: next! })).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY', details: { parameter: 'cursor' } })
    const resumed = await get(`symbol=AR&limit=5&cursor=${next}`)
    expect(resumed.status).toBe(200)
    expect(resumed.body).toBe(answerToJson(await store.query({ symbol: 'AR', limit: '5', offset: '5' })))
  })
})
