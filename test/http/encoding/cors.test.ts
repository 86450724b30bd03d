/**
 * CORS (issue 23): off by default (OPTIONS answers 405 as before, no
 * `access-control-*` header); with `cors`, reads (GET, HEAD and their
 * preflight) are opened to the origins allowed, writes and operator
 * endpoints never. Raw requests and fetch here; a real browser in
 * cors.browser.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPricesHandler } from '../../../src/adapters/http/handler.js'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { PriceStore } from '../../../src/index.js'
import { openDemoStore } from '../../support/http/demo-server.js'
import { rawRequest } from './http-exchange.js'

const APP = 'https://app.example'
const TOKEN = 'cors-test-token-0123456789abcdef'
let store: PriceStore
let plain: RunningServer
let open: RunningServer
let listed: RunningServer

beforeAll(async () => {
  ;({ store } = await openDemoStore())
  plain = await startServer({ store, writeToken: TOKEN })
  open = await startServer({ store, writeToken: TOKEN, metrics: true, cors: { origins: '*' } })
  listed = await startServer({ store, cors: { origins: [APP, 'http://localhost:5173'], maxAgeSeconds: 60 } })
})

afterAll(async () => {
  await Promise.all([plain?.close(), open?.close(), listed?.close()])
  await store?.close()
})

function preflight(url: string, method: string, headers = ''): Promise<Awaited<ReturnType<typeof rawRequest>>> {
  return rawRequest(url, { origin: APP, 'access-control-request-method': method, ...(headers === '' ? {} : { 'access-control-request-headers': headers }) }, 'OPTIONS')
}

describe('without cors (the default)', () => {
  it('OPTIONS answers 405 as before, and reads carry no access-control header', async () => {
    const answer = await preflight(`${plain.url}/prices?symbol=BTC`, 'GET')
    expect(answer.status).toBe(405)
    expect(answer.headers.allow).toBe('GET, HEAD, POST')
    expect(answer.headers['access-control-allow-origin']).toBeUndefined()
    const read = await fetch(`${plain.url}/prices?symbol=BTC`, { headers: { origin: APP } })
    expect(read.status).toBe(200)
    expect(read.headers.get('access-control-allow-origin')).toBeNull()
    expect(read.headers.get('vary')).toBe('Accept-Encoding')
  })
})

describe("cors: { origins: '*' }", () => {
  it('reads: any origin may read, and retry-after is exposed; no vary on Origin', async () => {
    for (const path of ['/prices?symbol=BTC', '/udf/config', '/stats', '/health', '/prices/export?symbol=ETH&from=0&to=1', '/prices?symbol=']) {
      const read = await fetch(`${open.url}${path}`, { headers: { origin: 'https://anyone.example' } })
      expect(read.headers.get('access-control-allow-origin'), path).toBe('*')
      expect(read.headers.get('access-control-expose-headers'), path).toBe('retry-after, x-next-cursor, link, x-price-store-hint')
      expect(read.headers.get('vary') ?? '', path).not.toMatch(/origin/i)
      await read.arrayBuffer()
    }
    // A request without Origin (not from a browser page): nothing to say.
    expect((await rawRequest(`${open.url}/prices?symbol=BTC`)).headers['access-control-allow-origin']).toBeUndefined()
  })

  it('a preflight of a read: 204 with the methods, the allowed request headers asked for, and max-age', async () => {
    const answer = await preflight(`${open.url}/prices/stream?symbols=BTC`, 'GET', 'Last-Event-ID, x-min-position, x-not-allowed')
    expect(answer.status).toBe(204)
    expect(answer.body.length).toBe(0)
    expect(answer.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD',
      'access-control-allow-headers': 'last-event-id, x-min-position',
      'access-control-max-age': '600',
      allow: 'GET, HEAD, OPTIONS',
    })
    const udf = await preflight(`${open.url}/udf/history?symbol=BTC`, 'HEAD')
    expect(udf.headers['access-control-allow-origin']).toBe('*')
    expect(udf.headers['access-control-allow-headers']).toBeUndefined()
  })

  it('a batch as-of reads with POST too: its preflight lets POST and content-type through; /prices keeps POST closed', async () => {
    const batch = await preflight(`${open.url}/prices/batch`, 'POST', 'content-type, authorization')
    expect(batch.status).toBe(204)
    expect(batch.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD, POST',
      'access-control-allow-headers': 'content-type',
      allow: 'GET, HEAD, POST, OPTIONS',
    })
    const posted = await fetch(`${open.url}/prices/batch`, {
      method: 'POST', body: JSON.stringify({ symbols: ['BTC'], times: [0] }), headers: { origin: APP, 'content-type': 'application/json' },
    })
    expect(posted.status).toBe(200)
    expect(posted.headers.get('access-control-allow-origin')).toBe('*')
    expect(await posted.json()).toEqual({ BTC: { 0: null } })
    const write = await preflight(`${open.url}/prices`, 'POST', 'content-type')
    expect(write.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('writes and operator endpoints stay closed: no access-control-allow-origin on their preflight or answer', async () => {
    const write = await preflight(`${open.url}/prices`, 'POST', 'authorization, content-type')
    expect(write.status).toBe(204)
    expect(write.headers.allow).toBe('GET, HEAD, POST, OPTIONS')
    expect(write.headers['access-control-allow-origin']).toBeUndefined()
    expect(write.headers['access-control-allow-methods']).toBeUndefined()
    const posted = await fetch(`${open.url}/prices`, {
      method: 'POST', body: '[]', headers: { origin: APP, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    })
    expect(posted.status).toBe(400) // no records: nothing written either way
    expect(posted.headers.get('access-control-allow-origin')).toBeNull()
    const metrics = await fetch(`${open.url}/metrics`, { headers: { origin: APP } })
    expect(metrics.headers.get('access-control-allow-origin')).toBeNull()
    await metrics.arrayBuffer()
    expect((await preflight(`${open.url}/metrics`, 'GET')).headers['access-control-allow-origin']).toBeUndefined()
    // A preflight asking for another method on a read: not let through.
    expect((await preflight(`${open.url}/prices?symbol=BTC`, 'DELETE')).headers['access-control-allow-origin']).toBeUndefined()
  })

  it('paths not served stay 404, preflight or not', async () => {
    expect((await preflight(`${open.url}/nowhere`, 'GET')).status).toBe(404)
  })
})

describe('cors: { origins: [...] }', () => {
  it('an allowed origin is echoed, every read answer varies on Origin (and on Accept-Encoding)', async () => {
    const read = await rawRequest(`${listed.url}/prices?symbol=BTC&limit=5`, { origin: APP, 'accept-encoding': 'gzip' })
    expect(read.headers['access-control-allow-origin']).toBe(APP)
    expect(read.headers.vary).toBe('Origin, Accept-Encoding')
    expect(read.headers['content-encoding']).toBe('gzip')
    const other = await rawRequest(`${listed.url}/prices?symbol=BTC`, { origin: 'https://evil.example' })
    expect(other.status).toBe(200)
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
    expect(other.headers.vary).toBe('Origin, Accept-Encoding')
  })

  it('preflights: the allowed origin gets through with its max-age, another does not', async () => {
    const allowed = await preflight(`${listed.url}/prices?symbol=BTC`, 'GET', 'x-min-position')
    expect(allowed.status).toBe(204)
    expect(allowed.headers).toMatchObject({ 'access-control-allow-origin': APP, 'access-control-max-age': '60', vary: expect.stringMatching(/^Origin/) })
    const refused = await rawRequest(`${listed.url}/prices?symbol=BTC`, { origin: 'http://localhost:5174', 'access-control-request-method': 'GET' }, 'OPTIONS')
    expect(refused.status).toBe(204)
    expect(refused.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('options are checked: origins must be "*" or a non-empty list of origins', () => {
    for (const origins of [[], ['app.example'], ['https://app.example/path'], 'https://app.example', [42]]) {
      expect(() => createPricesHandler(store, { cors: { origins: origins as never } }), JSON.stringify(origins)).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_OPTIONS' }))
    }
    expect(() => createPricesHandler(store, { cors: { origins: '*', maxAgeSeconds: -1 } })).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_OPTIONS' }))
    expect(() => createPricesHandler(store, { cors: { origins: ['HTTPS://App.Example'] } })).not.toThrow()
  })
})
