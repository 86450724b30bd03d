import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { cursorBytes, cursorText } from '../../../src/engine/cursor.js'

// The batch endpoint's page wiring against a stub store (what it asks the store, the headers it sends); the pages
// themselves against the reference model: test/property/batch-pages.prop.test.ts.
const NEXT = cursorText(cursorBytes({ kind: 'time', time: 2 }, 7), new Uint8Array(16))
const asked: Record<string, unknown>[] = []
let next: string | undefined
const stub = {
  query: async () => [],
  batchAsOf: async (options: Record<string, unknown>) => {
    asked.push(options)
    const times = (options['times'] as number[]).slice(0, (options['pageSize'] as number | undefined) ?? Infinity)
    const answer = Object.fromEntries((options['symbols'] as string[]).map((s) => [s, Object.fromEntries(times.map((t) => [String(t), null]))]))
    return options['pageSize'] === undefined ? answer : { answer, ...(next === undefined ? {} : { next }) }
  },
}
let server: RunningServer

beforeAll(async () => {
  server = await startServer({ store: stub as never })
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  asked.length = 0
  next = NEXT
})

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/prices/batch`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } })

describe('/prices/batch pages (stub store)', () => {
  it('GET with limit asks the store for a page and sends x-next-cursor and link to the next page', async () => {
    const response = await fetch(`${server.url}/prices/batch?symbols=A,B&times=3,1,2&limit=2`)
    expect(response.status).toBe(200)
    expect(asked).toEqual([{ symbols: ['A', 'B'], times: [1, 2, 3], direction: 'before', pageSize: 2, cursor: '' }])
    expect(await response.json()).toEqual({ A: { 1: null, 2: null }, B: { 1: null, 2: null } })
    expect(response.headers.get('x-next-cursor')).toBe(NEXT)
    expect(response.headers.get('link')).toBe(`<?symbols=A%2CB&times=3%2C1%2C2&limit=2&cursor=${NEXT}>; rel="next"`)
  })

  it('GET with cursor alone: 100 times a page, the cursor handed to the store; the last page has no cursor headers', async () => {
    next = undefined
    const response = await fetch(`${server.url}/prices/batch?symbols=A&times=1,2&cursor=${NEXT}`)
    expect(response.status).toBe(200)
    expect(asked).toEqual([{ symbols: ['A'], times: [1, 2], direction: 'before', pageSize: 100, cursor: NEXT }])
    expect([response.headers.get('x-next-cursor'), response.headers.get('link')]).toEqual([null, null])
  })

  it('POST takes limit and cursor from the body and sends x-next-cursor (no link: the next page is a POST too)', async () => {
    const response = await post({ symbols: ['A'], times: [1, 2, 3], limit: 1, cursor: NEXT })
    expect(response.status).toBe(200)
    expect(asked).toEqual([{ symbols: ['A'], times: [1, 2, 3], direction: 'before', pageSize: 1, cursor: NEXT }])
    expect([response.headers.get('x-next-cursor'), response.headers.get('link')]).toEqual([NEXT, null])
  })

  it('NDJSON pages hold the lines of the page\'s times', async () => {
    const response = await post({ symbols: ['A', 'B'], times: [1, 2, 3], limit: 2 }, { accept: 'application/x-ndjson' })
    expect(response.headers.get('x-next-cursor')).toBe(NEXT)
    expect((await response.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      { symbol: 'A', time: 1, record: null, age: null }, { symbol: 'A', time: 2, record: null, age: null },
      { symbol: 'B', time: 1, record: null, age: null }, { symbol: 'B', time: 2, record: null, age: null },
    ])
  })

  it('without limit and cursor the store is asked the whole batch and no cursor header is sent', async () => {
    const response = await fetch(`${server.url}/prices/batch?symbols=A&times=1,2`)
    expect(asked).toEqual([{ symbols: ['A'], times: [1, 2], direction: 'before' }])
    expect([response.headers.get('x-next-cursor'), response.headers.get('link')]).toEqual([null, null])
  })

  const bad: readonly [string, () => Promise<Response>, string][] = [
    ['a malformed cursor (GET)', () => fetch(`${server.url}/prices/batch?symbols=A&times=1&cursor=nope`), 'cursor'],
    ['a malformed cursor (POST)', () => post({ symbols: ['A'], times: [1], cursor: 'AAAA' }), 'cursor'],
    ['a cursor that is not a string', () => post({ symbols: ['A'], times: [1], cursor: 5 }), 'cursor'],
    ['limit 0', () => fetch(`${server.url}/prices/batch?symbols=A&times=1&limit=0`), 'limit'],
    ['limit not an integer (POST)', () => post({ symbols: ['A'], times: [1], limit: 1.5 }), 'limit'],
    ['limit repeated', () => fetch(`${server.url}/prices/batch?symbols=A&times=1&limit=1&limit=2`), 'limit'],
  ]
  it.each(bad)('%s → 400 PRICE_INVALID_QUERY naming the parameter, the store not asked', async (_, send, parameter) => {
    const response = await send()
    expect(response.status).toBe(400)
    const { error } = (await response.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('PRICE_INVALID_QUERY')
    expect(error.message).toContain(parameter)
    expect(asked).toEqual([])
  })
})
