import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../src/adapters/http/node.js'
import type { PriceStore } from '../../src/index.js'
import { openDemoStore, parseRawResponse, rawRequest, serve } from '../support/http/demo-server.js'

// Malformed requests get an answer (or, past Node's own limits, a closed
// connection), never a crash or a hang; and the server keeps serving.

let store: PriceStore
let server: RunningServer
const errors: unknown[] = []

beforeAll(async () => {
  ;({ store } = await openDemoStore())
  server = await serve(store, (err) => errors.push(err))
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

async function raw(text: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { response, timedOut } = await rawRequest(server.url, text)
  expect(timedOut).toBe(false)
  return parseRawResponse(response)
}

async function stillServing(): Promise<void> {
  const response = await fetch(`${server.url}/prices?symbol=BTC`)
  expect(response.status).toBe(200)
  expect(await response.json()).toHaveLength(1)
}

describe('bad percent-encoding is decoded as URLSearchParams does', () => {
  it.each(['symbol=%zz', 'symbol=BTC%', 'symbol=%E0%A4%A', 'symbol=%C0%AF', 'symbols=BTC,%FF%FE', 'symbol=%', 'sym%bol=BTC', 'symbol=BTC&limit=%31'])(
    '%s',
    async (query) => {
      const response = await fetch(`${server.url}/prices?${query}`)
      const body = await response.json()
      let expected: unknown
      let expectedStatus = 200
      try {
        expected = await store.query(new URLSearchParams(query))
      } catch (err) {
        expectedStatus = 400
        expected = { error: { code: (err as { code: string }).code, message: (err as Error).message } }
      }
      expect(response.status).toBe(expectedStatus)
      expect(body).toEqual(expected)
    },
  )

  it('%31 is the digit 1, so limit=%31 works like limit=1', async () => {
    const response = await fetch(`${server.url}/prices?symbol=BTC&limit=%31`)
    expect(await response.json()).toHaveLength(1)
  })
})

describe('oversized requests', () => {
  it('a 100 KB query string gets 431 (or a closed connection), and the server keeps serving', async () => {
    const query = `symbols=${Array.from({ length: 20_000 }, (_, i) => `S${i}`).join(',')}`.slice(0, 100_000)
    const { response, timedOut, error } = await rawRequest(server.url, `GET /prices?${query} HTTP/1.1\r\nHost: x\r\n\r\n`)
    expect(timedOut).toBe(false)
    // The server answers once it has read 16 KiB; a reset can beat the answer while we still write.
    if (response !== '') {
      const { status, body } = parseRawResponse(response)
      expect(status).toBe(431)
      expect(JSON.parse(body)).toEqual({ error: { code: 'HTTP_HEADERS_TOO_LARGE', message: expect.any(String) } })
    } else {
      expect(error).toMatch(/ECONNRESET|EPIPE/)
    }
    await stillServing()
  })

  it('fetch of a 100 KB URL gets 431 too, also on a reused keep-alive connection', async () => {
    await stillServing() // leaves a kept-alive connection for fetch to reuse
    const response = await fetch(`${server.url}/prices?symbol=BTC&pad=${'x'.repeat(100_000)}`).catch((err: Error) => err)
    // As above, a reset may beat the answer while the client still writes; it must not be a hang.
    if (response instanceof Response) {
      expect(response.status).toBe(431)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('HTTP_HEADERS_TOO_LARGE')
    }
    await stillServing()
  })

  it('a query string just under the limit is answered normally', async () => {
    const response = await fetch(`${server.url}/prices?symbol=BTC&pad=${'x'.repeat(12_000)}`)
    expect(response.status).toBe(200)
  })

  it('a large request body on GET is drained and ignored', async () => {
    const body = 'x'.repeat(1_000_000)
    const { status } = await raw(`GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`)
    expect(status).toBe(200)
    await stillServing()
  })
})

describe('odd request lines and methods', () => {
  it('an unknown method gets 400 from the parser, as JSON', async () => {
    const { status, body } = await raw('FOO /prices HTTP/1.1\r\nHost: x\r\n\r\n')
    expect(status).toBe(400)
    expect(JSON.parse(body).error.code).toBe('HTTP_BAD_REQUEST')
  })

  it('CONNECT gets 405 on /prices and 404 elsewhere instead of a silent close', async () => {
    const prices = await raw('CONNECT /prices HTTP/1.1\r\nHost: x\r\n\r\n')
    expect(prices.status).toBe(405)
    expect(prices.headers.allow).toBe('GET, HEAD')
    const tunnel = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    expect(tunnel.status).toBe(404)
  })

  it.each(['TRACE', 'OPTIONS', 'PROPFIND', 'MKCOL', 'PURGE'])('%s /prices gets 405', async (method) => {
    const { status, headers } = await raw(`${method} /prices HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    expect(status).toBe(405)
    expect(headers.allow).toBe('GET, HEAD')
  })

  it('OPTIONS * gets 404', async () => {
    expect((await raw('OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(404)
  })

  it('//prices is another path: 404', async () => {
    expect((await raw('GET //prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(404)
  })

  it('absolute-form targets are served', async () => {
    const { status, body } = await raw('GET http://example.com/prices?symbol=BTC HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n')
    expect(status).toBe(200)
    expect(JSON.parse(body)).toHaveLength(1)
    const other = await raw('GET http://example.com/other HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n')
    expect(other.status).toBe(404)
    // No path is the root path: the chart page (503 until it is built), as for `GET /`.
    const bare = await raw('GET http://example.com HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n')
    const root = await raw('GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n')
    expect([200, 503]).toContain(bare.status)
    expect(bare.status).toBe(root.status)
    expect(bare.headers['content-type']).toBe(root.headers['content-type'])
  })

  it('a fragment is not part of the query', async () => {
    const { status, body } = await raw('GET /prices?symbol=BTC#limit=5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    expect(status).toBe(200)
    expect(JSON.parse(body)).toHaveLength(1)
  })

  it('a websocket upgrade request is answered as a plain GET', async () => {
    const { status } = await raw('GET /prices?symbol=BTC HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\n\r\n')
    expect(status).toBe(200)
  })

  it.each([
    ['a space in the target', 'GET /pri ces HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a control character in the target', 'GET /prices?symbol=\x01 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['garbage', '\x00\x01\x02 not http at all\r\n\r\n'],
    ['a bad header line', 'GET /prices HTTP/1.1\r\nHost x\r\n\r\n'],
    ['a bad HTTP version', 'GET /prices HTTP/9.9\r\nHost: x\r\n\r\n'],
  ])('%s gets 400 JSON', async (_name, text) => {
    const { status, body } = await raw(text)
    expect(status).toBe(400)
    expect(JSON.parse(body)).toEqual({ error: { code: 'HTTP_BAD_REQUEST', message: expect.any(String) } })
  })

  it('HTTP/1.0 without a Host header is served', async () => {
    const { status } = await raw('GET /prices?symbol=BTC HTTP/1.0\r\n\r\n')
    expect(status).toBe(200)
  })

  it('a client that leaves mid-request or mid-answer does not hurt the server', async () => {
    // The client sends half a request and closes its side: the server answers 400 and closes.
    const partial = await rawRequest(server.url, 'GET /prices?symbol=BTC HTTP/1.1\r\nHost')
    expect(partial.timedOut).toBe(false)
    expect(parseRawResponse(partial.response).status).toBe(400)
    await stillServing()
    const controller = new AbortController()
    const pending = fetch(`${server.url}/prices?symbols=BTC,ETH,AR`, { signal: controller.signal })
    controller.abort()
    await expect(pending).rejects.toThrow()
    await stillServing()
  })

  it('reported no unexpected errors along the way', () => {
    expect(errors).toEqual([])
  })
})
