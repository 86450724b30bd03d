/** `GET`/`POST /prices/batch` through a real server on the demo data: the library's answer, NDJSON, bad input, the gate. */
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkSchema, resolveRef } from '../../support/http/schema-check.js'
import { toExactJson } from '../../../src/rules/exact-json.js'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { PriceStore } from '../../../src/index.js'
import { END, openDemoStore } from '../../support/http/demo-server.js'

let store: PriceStore
let server: RunningServer
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))
const START = END - 2 * 3_600_000
const TIMES = [START - 5_000, START + 12_345, END - 3_600_000, END - 1, END + 60_000]

beforeAll(async () => {
  ;({ store } = await openDemoStore())
  server = await startServer({ store, cors: { origins: '*' } })
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

const get = (query: string, headers: Record<string, string> = {}) => fetch(`${server.url}/prices/batch?${query}`, { headers })
const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/prices/batch`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } })

describe('/prices/batch', () => {
  it('GET answers what store.batchAsOf answers (times listed, every direction, tolerance)', async () => {
    for (const direction of ['before', 'after', 'nearest'] as const) {
      for (const tolerance of [undefined, 0, 4_000]) {
        const query = `symbols=BTC,ETH,NOPE&times=${TIMES.join(',')}&direction=${direction}${tolerance === undefined ? '' : `&tolerance=${tolerance}`}`
        const response = await get(query)
        expect(response.status, query).toBe(200)
        expect(response.headers.get('content-type')).toMatch(/^application\/json/)
        const expected = await store.batchAsOf({ symbols: ['BTC', 'ETH', 'NOPE'], times: TIMES, direction, ...(tolerance === undefined ? {} : { tolerance }) })
        expect(await response.json(), query).toEqual(plain(expected))
      }
    }
  })

  it('a JSON answer over streamAbove entries is streamed, byte for byte the whole answer (integer-like symbols included)', async () => {
    const times = Array.from({ length: 400 }, (_, i) => START + i * 9_000)
    const response = await post({ symbols: ['ETH', '42', 'BTC'], times, direction: 'nearest' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-length')).toBeNull()
    const expected = await store.batchAsOf({ symbols: ['ETH', '42', 'BTC'], times, direction: 'nearest' })
    expect(await response.text()).toBe(toExactJson(expected))
    const small = await get(`symbols=ETH,42&times=${TIMES.join(',')}`)
    expect(small.headers.get('content-length')).not.toBeNull()
    expect(await small.text()).toBe(toExactJson(await store.batchAsOf({ symbols: ['ETH', '42'], times: TIMES })))
  })

  it('GET with a grid answers as its times listed; POST answers as GET', async () => {
    const grid = await (await get(`symbols=AR&fromTimestamp=${START}&toTimestamp=${END}&interval=600000`)).json()
    const listed = Array.from({ length: 13 }, (_, i) => START + i * 600_000)
    expect(grid).toEqual(await (await get(`symbols=AR&times=${listed.join(',')}`)).json())
    expect(await (await post({ symbols: ['AR'], grid: { from: START, to: END, interval: 600_000 } })).json()).toEqual(grid)
    expect(await (await post({ symbols: ['AR'], times: listed })).json()).toEqual(grid)
  })

  it('streams NDJSON, one line per entry, symbols in order, times ascending, null where none', async () => {
    const response = await post({ symbols: ['ETH', 'NOPE'], times: [...TIMES].reverse(), direction: 'nearest' }, { accept: 'application/x-ndjson' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const lines = (await response.text()).trimEnd().split('\n').map((line) => JSON.parse(line) as { symbol: string; time: number; record: unknown; age: number | null })
    const expected = await store.batchAsOf({ symbols: ['ETH', 'NOPE'], times: TIMES, direction: 'nearest' })
    const sorted = [...TIMES].sort((a, b) => a - b)
    expect(lines.map((l) => [l.symbol, l.time])).toEqual(['ETH', 'NOPE'].flatMap((s) => sorted.map((t) => [s, t])))
    for (const line of lines) {
      const entry = expected[line.symbol]![String(line.time)]
      expect(line.record).toEqual(entry === null ? null : plain(entry!.record))
      expect(line.age).toEqual(entry === null ? null : entry!.age)
    }
  })

  it('a large NDJSON batch is sent in pieces and parses whole', async () => {
    const times = Array.from({ length: 2_000 }, (_, i) => START + i * 3_600)
    const response = await post({ symbols: ['BTC', 'ETH', 'AR'], times }, { accept: 'application/x-ndjson' })
    const lines = (await response.text()).trimEnd().split('\n')
    expect(lines).toHaveLength(6_000)
    expect(JSON.parse(lines[5_999]!)).toMatchObject({ symbol: 'AR', time: times[1_999] })
  })

  it('answers as docs/openapi.yaml documents (JSON and NDJSON)', async () => {
    const doc = parse(await readFile(new URL('../../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, any>
    expect(doc.paths['/prices/batch'].get.operationId).toBe('getBatch')
    const json = await (await get(`symbols=BTC,NOPE&times=${TIMES.join(',')}&direction=nearest`)).json()
    expect(checkSchema(json, resolveRef(doc, '#/components/schemas/BatchAnswer'), doc)).toEqual([])
    const text = await (await get(`symbols=BTC,NOPE&times=${TIMES.join(',')}`, { accept: 'application/x-ndjson' })).text()
    for (const line of text.trimEnd().split('\n')) expect(checkSchema(JSON.parse(line), resolveRef(doc, '#/components/schemas/BatchLine'), doc)).toEqual([])
  })

  const bad: readonly [string, () => Promise<Response>, string][] = [
    ['times not integers', () => get('symbols=BTC&times=1.5'), 'times'],
    ['negative time', () => get('symbols=BTC&times=-1'), 'times'],
    ['no symbols', () => get('times=1'), 'symbols'],
    ['times and a grid', () => get('symbols=BTC&times=1&fromTimestamp=0&toTimestamp=10&interval=1'), 'times'],
    ['grid without interval', () => get('symbols=BTC&fromTimestamp=0&toTimestamp=10'), 'interval'],
    ['bad direction', () => get('symbols=BTC&times=1&direction=sideways'), 'direction'],
    ['bad tolerance', () => get('symbols=BTC&times=1&tolerance=x'), 'tolerance'],
    ['too many times', () => post({ symbols: ['BTC'], times: Array.from({ length: 10_001 }, (_, i) => i) }), 'times'],
    ['too many entries', () => post({ symbols: Array.from({ length: 11 }, (_, i) => `S${i}`), times: Array.from({ length: 10_000 }, (_, i) => i) }), 'symbols'],
    ['body not JSON', () => post('{nope'), 'body'],
    ['body not an object', () => post([1]), 'body'],
    ['times as text in the body', () => post({ symbols: ['BTC'], times: ['1'] }), 'times'],
  ]
  it.each(bad)('%s → 400 PRICE_INVALID_QUERY naming the parameter', async (_, send, parameter) => {
    const response = await send()
    expect(response.status).toBe(400)
    const { error } = (await response.json()) as { error: { code: string; message: string } }
    expect(error.code).toBe('PRICE_INVALID_QUERY')
    expect(error.message).toContain(parameter)
  })

  it('refuses other methods with 405 and Allow: GET, HEAD, POST; HEAD sends no body', async () => {
    const response = await fetch(`${server.url}/prices/batch`, { method: 'PUT' })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST')
    const head = await fetch(`${server.url}/prices/batch?symbols=BTC&times=${END}`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })

  it('is a CORS read (GET and POST without a write token)', async () => {
    // A page of another origin posts as text/plain (a simple request: no preflight); the body is read as JSON.
    const response = await post({ symbols: ['BTC'], times: [END] }, { origin: 'https://example.org', 'content-type': 'text/plain' })
    expect(response.status).toBe(200)
    expect(response.headers.get('access-control-allow-origin')).toBe('*')
  })
})

describe('/prices/batch through the gate', () => {
  it('weighs a batch as symbols × times seeks: a heavy one takes the slot, another heavy one is refused, a light one passes', async () => {
    const pending: (() => void)[] = []
    const stub = {
      query: async () => [],
      batchAsOf: () => new Promise<Record<string, never>>((resolve) => pending.push(() => resolve({}))),
    }
    const busy = await startServer({ store: stub as never, maxConcurrentQueries: 1, maxQueuedQueries: 0, lightQueryCost: 5 })
    try {
      // 2 symbols × 3 times = 6 seeks > lightQueryCost: heavy, it takes the only slot and holds it until answered.
      const first = fetch(`${busy.url}/prices/batch?symbols=A,B&times=1,2,3`)
      const deadline = Date.now() + 10_000
      while (pending.length === 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve))
      expect(pending).toHaveLength(1)
      const refused = await fetch(`${busy.url}/prices/batch?symbols=A,B&times=1,2,3`)
      expect(refused.status).toBe(503)
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('HTTP_BUSY')
      // 1 symbol × 1 time: light, never waits for a slot.
      const light = fetch(`${busy.url}/prices/batch?symbols=A&times=1`)
      while (pending.length < 2 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve))
      pending.splice(0).forEach((resolve) => resolve())
      expect((await light).status).toBe(200)
      expect((await first).status).toBe(200)
    } finally {
      await busy.close()
    }
  })
})
