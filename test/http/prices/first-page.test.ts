/**
 * `GET /prices?...&paginate=true`: the first page of a cursor walk without an
 * empty `cursor=`: the same body and next cursor as `cursor=`, and its pages
 * followed to the end give the whole answer once; `paginate` other than
 * `true` is a coded 400, and the cursor's own rules apply to it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../../src/adapters/http/node.js'
import type { PriceStore } from '../../../src/index.js'
import { newestFirst, openDemoStore, serve, type asReturned } from '../../support/http/demo-server.js'

let store: PriceStore
let server: RunningServer
let records: Parameters<typeof asReturned>[0][]

beforeAll(async () => {
  ;({ store, records } = await openDemoStore())
  server = await serve(store)
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

const get = (query: string): Promise<Response> => fetch(`${server.url}/prices?${query}`)

describe('GET /prices with paginate=true', () => {
  it('answers the first page as cursor= does: the same body and the same next cursor and link', async () => {
    const flagged = await get('symbol=ETH&limit=100&paginate=true')
    const empty = await get('symbol=ETH&limit=100&cursor=')
    expect(flagged.status).toBe(200)
    expect(await flagged.text()).toBe(await empty.text())
    expect(flagged.headers.get('x-next-cursor')).toBe(empty.headers.get('x-next-cursor'))
    expect(flagged.headers.get('x-next-cursor')).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(flagged.headers.get('link')).toBe(`<?symbol=ETH&limit=100&paginate=true&cursor=${flagged.headers.get('x-next-cursor')}>; rel="next"`)
    const plain = await get('symbol=ETH&limit=100')
    expect(plain.headers.get('x-next-cursor')).toBeNull()
  })

  it('its pages, followed by their links, give every record of the answer once, newest first', async () => {
    const eth = newestFirst(records, 'ETH') // 720 records: 8 pages of 100
    const ids: string[] = []
    let query: string | undefined = `symbol=ETH&limit=100&toTimestamp=${eth[0]!.timestamp}&paginate=true`
    let pages = 0
    while (query !== undefined) {
      const response = await get(query)
      expect(response.status).toBe(200)
      ids.push(...((await response.json()) as { id: string }[]).map((record) => record.id))
      pages++
      query = /^<\?(.*)>; rel="next"$/.exec(response.headers.get('link') ?? '')?.[1]
    }
    expect(pages).toBe(Math.ceil(eth.length / 100))
    expect(ids).toEqual(eth.map((record) => record.id))
  })

  it('refuses paginate other than true, or repeated, with 400 PRICE_INVALID_QUERY naming it; the cursor rules apply', async () => {
    for (const query of ['symbol=ETH&paginate=false', 'symbol=ETH&paginate=', 'symbol=ETH&paginate=1', 'symbol=ETH&paginate=true&paginate=true']) {
      const response = await get(query)
      expect(response.status, query).toBe(400)
      const { error } = (await response.json()) as { error: { code: string; message: string } }
      expect(error.code, query).toBe('PRICE_INVALID_QUERY')
      expect(error.message, query).toContain('paginate')
    }
    for (const query of ['symbol=ETH&limit=10&offset=5&paginate=true', 'symbols=ETH,BTC&paginate=true']) {
      const response = await get(query)
      expect(response.status, query).toBe(400)
      expect(((await response.json()) as { error: { code: string } }).error.code, query).toBe('PRICE_INVALID_QUERY')
    }
  })
})
