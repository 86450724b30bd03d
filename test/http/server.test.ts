import { Agent, get as httpGet } from 'node:http'
import type { Socket } from 'node:net'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { DEFAULT_STREAM_MAX_PENDING } from '../../src/adapters/http/live/stream-endpoint.js'
import { DEFAULT_MAX_PENDING } from '../../src/store/services/watch/watch-options.js'
import { PriceStore, PriceStoreError, type PriceAnswer } from '../../src/index.js'
import type { DemoRecord } from '../../src/demo/demo-data.js'
import { PROVIDER, asReturned, newestFirst, openDemoStore, serve } from '../support/http/demo-server.js'

let store: PriceStore
let records: DemoRecord[]
let server: RunningServer
let prices: string

beforeAll(async () => {
  ;({ store, records } = await openDemoStore())
  server = await serve(store)
  prices = `${server.url}/prices`
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

async function getJson(query: string, path = '/prices'): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  // Uncompressed (fetch asks for gzip): content-length is then the text's (compression: test/http/encoding/).
  const response = await fetch(`${server.url}${path}${query}`, { headers: { 'accept-encoding': 'identity' } })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: JSON.parse(text), text }
}

describe('GET /prices answers every query form', () => {
  it('latest: the newest record of a symbol, with providerPublicKey and JSON headers', async () => {
    const { status, headers, body, text } = await getJson('?symbol=BTC')
    expect(status).toBe(200)
    expect(headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(headers.get('content-length')).toBe(String(Buffer.byteLength(text)))
    expect(body).toEqual([asReturned(newestFirst(records, 'BTC')[0]!)])
    expect(Object.keys(body[0])).toEqual([
      'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'providerPublicKey',
    ])
  })

  it('latest with limit: the N newest, newest first', async () => {
    const { body } = await getJson('?symbol=ETH&limit=5')
    expect(body).toEqual(newestFirst(records, 'ETH').slice(0, 5).map(asReturned))
  })

  it('history as-of: the record at or before toTimestamp', async () => {
    const eth = newestFirst(records, 'ETH')
    const target = eth[100]!
    const { body: exact } = await getJson(`?symbol=ETH&toTimestamp=${target.timestamp}`)
    expect(exact).toEqual([asReturned(target)])
    const { body: between } = await getJson(`?symbol=ETH&toTimestamp=${target.timestamp + 1}`)
    expect(between).toEqual([asReturned(target)])
    const { body: window } = await getJson(`?symbol=ETH&fromTimestamp=${eth[10]!.timestamp}&toTimestamp=${eth[5]!.timestamp}&limit=100`)
    expect(window).toEqual(eth.slice(5, 11).map(asReturned))
  })

  it('several named symbols: keyed by symbol in request order, unknown ones left out, duplicates once', async () => {
    const { status, body, text } = await getJson('?symbols=ETH,NOPE,BTC,ETH')
    expect(status).toBe(200)
    expect(Object.keys(body)).toEqual(['ETH', 'BTC'])
    expect(body.BTC).toEqual(asReturned(newestFirst(records, 'BTC')[0]!))
    expect(body.ETH).toEqual(asReturned(newestFirst(records, 'ETH')[0]!))
    expect(text.startsWith('{"ETH":')).toBe(true)
  })

  it('several as of a time: the latest record of each at or before toTimestamp', async () => {
    const target = newestFirst(records, 'AR')[50]!
    const { body } = await getJson(`?symbols=AR,stETH&toTimestamp=${target.timestamp}`)
    expect(body.AR).toEqual(asReturned(target))
    expect(body.stETH.timestamp).toBe(target.timestamp) // one fetch: same timestamp for every token
  })

  it('all symbols: no parameters at all, in UTF-8 byte order', async () => {
    const { body } = await getJson('')
    expect(Object.keys(body)).toEqual(['AR', 'BTC', 'ETH', 'USDC.e', 'stETH'])
    for (const symbol of Object.keys(body)) expect(body[symbol]).toEqual(asReturned(newestFirst(records, symbol)[0]!))
  })

  it('range with interval: one record per bucket, the bucket latest, oldest first, with minutes', async () => {
    const btc = newestFirst(records, 'BTC').reverse()
    const from = btc[0]!.timestamp
    const to = btc[btc.length - 1]!.timestamp
    const { body } = await getJson(`?symbol=BTC&fromTimestamp=${from}&toTimestamp=${to}&interval=600000`)
    const expected = new Map<number, DemoRecord>()
    for (const record of btc) expected.set(Math.floor(record.timestamp / 600_000), record)
    expect(body).toEqual(
      [...expected.values()].map((record) => ({ ...asReturned(record), minutes: Math.floor(record.timestamp / 60_000) % 60 })),
    )
    expect(body.length).toBe(12) // 2 hours of 10-minute buckets (the data starts on a bucket edge)
    expect(Object.keys(body[0]).at(-1)).toBe('minutes')
  })

  it('range with offset and limit: applied to the sampled output', async () => {
    const btc = newestFirst(records, 'BTC').reverse()
    const query = `?symbol=BTC&fromTimestamp=${btc[0]!.timestamp}&toTimestamp=${btc.at(-1)!.timestamp}&interval=60000`
    const { body: all } = await getJson(query)
    const { body: page } = await getJson(`${query}&offset=10&limit=5`)
    expect(page).toEqual(all.slice(10, 15))
  })

  it('an unknown symbol is an empty answer, not an error', async () => {
    expect((await getJson('?symbol=NOPE')).body).toEqual([])
    expect((await getJson('?symbols=NOPE')).body).toEqual({})
  })

  it('answers exactly what store.query answers', async () => {
    for (const query of ['symbol=AR&limit=3', 'symbols=BTC,AR', '', `symbol=BTC&fromTimestamp=0&toTimestamp=${2 ** 53 - 1}&interval=3600000`]) {
      const expected: PriceAnswer = await store.query(new URLSearchParams(query))
      expect((await getJson(`?${query}`)).body).toEqual(expected)
    }
  })

  it('accepts the provider by name or by id', async () => {
    const expected = (await getJson('?symbol=BTC')).body
    expect((await getJson(`?symbol=BTC&provider=${PROVIDER.name}`)).body).toEqual(expected)
    expect((await getJson(`?symbol=BTC&provider=${PROVIDER.id}`)).body).toEqual(expected)
  })
})

describe('paths and methods', () => {
  it('/prices/ is the same endpoint as /prices', async () => {
    const plain = await getJson('?symbols=BTC,ETH')
    const slash = await getJson('?symbols=BTC,ETH', '/prices/')
    expect(slash.status).toBe(200)
    expect(slash.text).toBe(plain.text)
  })

  it('HEAD answers the status and headers GET would, without a body', async () => {
    for (const query of ['?symbol=BTC', '?symbol=', '?limit=x&symbol=BTC']) {
      const get = await fetch(`${prices}${query}`, { headers: { 'accept-encoding': 'identity' } })
      const getText = await get.text()
      const head = await fetch(`${prices}${query}`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } })
      expect(head.status).toBe(get.status)
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'))
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(getText)))
      expect(await head.text()).toBe('')
    }
    const missing = await fetch(`${server.url}/nope`, { method: 'HEAD' })
    expect(missing.status).toBe(404)
    expect(await missing.text()).toBe('')
  })

  it.each(['/price', '/pricesx', '/prices/x', '//prices', '/PRICES', '/%70rices', '/udf', '/udf/', '/udf/nope', '/UDF/config', '/index.html', '/page/'])('404 with a JSON error for %s', async (path) => {
    const { status, body, headers } = await getJson('', path)
    expect(status).toBe(404)
    expect(headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(body).toEqual({ error: { code: 'HTTP_NOT_FOUND', message: expect.any(String) } })
  })

  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND'])('405 with Allow: GET, HEAD for %s /prices', async (method) => {
    const response = await fetch(`${prices}?symbol=BTC`, { method, ...(method === 'POST' || method === 'PUT' ? { body: '{"x":1}' } : {}) })
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET, HEAD')
    expect(await response.json()).toEqual({ error: { code: 'HTTP_METHOD_NOT_ALLOWED', message: expect.stringContaining(method) } })
  })

  it('405 on /prices/ too, 404 for other methods elsewhere', async () => {
    expect((await fetch(`${prices}/`, { method: 'DELETE' })).status).toBe(405)
    expect((await fetch(`${server.url}/other`, { method: 'DELETE' })).status).toBe(404)
  })

  it('ignores a request body on GET', async () => {
    const response = await fetch(`${prices}?symbol=BTC`, { method: 'GET', headers: { 'content-type': 'text/plain' } })
    expect(response.status).toBe(200)
  })
})

describe('error answers', () => {
  const cases: [string, string][] = [
    ['symbol=', 'PRICE_INVALID_SYMBOL'],
    ['symbol=BTC%20USD', 'PRICE_INVALID_SYMBOL'],
    ['symbols=BTC,,ETH', 'PRICE_INVALID_SYMBOL'],
    ['symbol=BTC&limit=abc', 'PRICE_INVALID_QUERY'],
    ['symbol=BTC&limit=0', 'PRICE_INVALID_QUERY'],
    ['symbol=BTC&limit=3001', 'PRICE_INVALID_QUERY'],
    ['symbol=BTC&offset=-1', 'PRICE_INVALID_QUERY'],
    ['symbol=BTC&symbols=ETH', 'PRICE_INVALID_QUERY'],
    ['symbol=BTC&symbol=ETH', 'PRICE_INVALID_QUERY'],
    ['provider=', 'PRICE_INVALID_QUERY'],
    ['symbol=BTC&fromTimestamp=1.5', 'PRICE_INVALID_RANGE'],
    ['symbol=BTC&fromTimestamp=10&toTimestamp=5', 'PRICE_INVALID_RANGE'],
    ['symbol=BTC&interval=60000', 'PRICE_INVALID_RANGE'],
    ['symbol=BTC&fromTimestamp=0&toTimestamp=1&interval=0', 'PRICE_INVALID_INTERVAL'],
    ['interval=60000', 'PRICE_INVALID_INTERVAL'],
    ['symbol=BTC&provider=someone-else', 'PRICE_UNSUPPORTED_PROVIDER'],
  ]

  it.each(cases)('400 for %s: %s', async (query, code) => {
    const { status, body } = await getJson(`?${query}`)
    expect(status).toBe(400)
    expect(body).toEqual({ error: { code, message: expect.any(String) } })
    expect(body.error.message.length).toBeGreaterThan(0)
  })

  it('400 PRICE_RANGE_TOO_LARGE says how many records (at least) and the cap', async () => {
    const { store: capped } = await openDemoStore({ maxRangePoints: 100 })
    const running = await serve(capped)
    try {
      const response = await fetch(`${running.url}/prices?symbol=BTC&fromTimestamp=0&toTimestamp=9007199254740991&interval=1`)
      expect(response.status).toBe(400)
      const { error } = (await response.json()) as { error: { code: string; message: string } }
      expect(error.code).toBe('PRICE_RANGE_TOO_LARGE')
      // Refused before its read: the buckets its sealed hours' key columns and open hours' heads prove, over the
      // cap of 100 and at most the 720 records the range holds.
      const proven = Number(/at least (\d+) records/.exec(error.message)?.[1])
      expect(proven).toBeGreaterThan(100)
      expect(proven).toBeLessThanOrEqual(720)
      expect(error.message).toContain('cap of 100')
    } finally {
      await running.close()
      await capped.close()
    }
  })

  it('a 400 message names the parameter and the value received', async () => {
    const { body } = await getJson('?symbol=BTC&limit=abc')
    expect(body.error.message).toContain('limit')
    expect(body.error.message).toContain('abc')
  })

  it('503 while the store is not open', async () => {
    const closed = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
    const running = await serve(closed)
    try {
      await closed.close()
      const response = await fetch(`${running.url}/prices?symbol=BTC`)
      expect(response.status).toBe(503)
      expect(await response.json()).toEqual({ error: { code: 'PRICE_NOT_OPEN', message: expect.any(String) } })
    } finally {
      await running.close()
    }
  })

  it('500 without internals when the store throws a plain Error', async () => {
    const secret = 'disk exploded at /var/secret/path/db.ldb'
    const seen: unknown[] = []
    const running = await serve({ query: async () => Promise.reject(new Error(secret)) }, (err) => seen.push(err))
    try {
      const response = await fetch(`${running.url}/prices?symbol=BTC`)
      const text = await response.text()
      expect(response.status).toBe(500)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(JSON.parse(text)).toEqual({ error: { code: 'HTTP_INTERNAL_ERROR', message: expect.any(String) } })
      expect(text).not.toContain('exploded')
      expect(text).not.toContain('/var/secret')
      expect(text).not.toMatch(/\bat .*:\d+:\d+/) // no stack frames
      expect(seen).toHaveLength(1)
      expect((seen[0] as Error).message).toBe(secret)
    } finally {
      await running.close()
    }
  })

  it('500 keeps a storage error code but hides its message', async () => {
    const running = await serve({
      query: async () => Promise.reject(new PriceStoreError('PRICE_STORAGE_ERROR', 'IO error: /data/prices/000123.ldb: No space left')),
    })
    try {
      const response = await fetch(`${running.url}/prices`)
      const text = await response.text()
      expect(response.status).toBe(500)
      expect(JSON.parse(text).error.code).toBe('PRICE_STORAGE_ERROR')
      expect(text).not.toContain('ldb')
    } finally {
      await running.close()
    }
  })

  it('500 when a store hands back something JSON cannot hold, and the server keeps serving', async () => {
    const running = await serve({ query: async () => [{ value: 1n }] as never })
    try {
      expect((await fetch(`${running.url}/prices`)).status).toBe(500)
      expect((await fetch(`${running.url}/prices`)).status).toBe(500)
    } finally {
      await running.close()
    }
  })
})

describe('values come back bit for bit', () => {
  it('a -0 price is written as -0 and extra fields are kept', async () => {
    const own = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
    const running = await serve(own)
    try {
      const record = {
        id: 'neg-zero', symbol: 'ZERO', provider: PROVIDER.id, value: -0, signature: 's', permawebTx: 'tx',
        version: '0.4', source: { a: 2, b: 1e-7 }, timestamp: 1, evmSignature: '0xabc',
      }
      await own.put(record)
      const text = await (await fetch(`${running.url}/prices?symbol=ZERO`)).text()
      expect(text).toContain('"value":-0')
      const [back] = JSON.parse(text)
      expect(Object.is(back.value, -0)).toBe(true)
      expect(back.source).toEqual({ a: 2, b: 1e-7 })
      expect(back.evmSignature).toBe('0xabc')
    } finally {
      await running.close()
      await own.close()
    }
  })
})

describe('graceful close', () => {
  it('finishes a request in flight, refuses new connections, then resolves', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let entered!: () => void
    const started = new Promise<void>((resolve) => {
      entered = resolve
    })
    const running = await serve({
      query: async () => {
        entered()
        await gate
        return []
      },
    })
    const inFlight = fetch(`${running.url}/prices?symbol=BTC`)
    await started
    let closed = false
    const closing = running.close().then(() => {
      closed = true
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(closed).toBe(false)
    await expect(fetch(`${running.url}/prices`)).rejects.toThrow()
    release()
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual([])
    await closing
    expect(closed).toBe(true)
  })

  it('does not wait for idle keep-alive connections: close() cuts them at once', async () => {
    // Ten minutes of keep-alive and of grace: only closing idle connections at once lets close() end here.
    const running = await startServer({ store: { query: async () => [] }, graceMs: 600_000 })
    running.server.keepAliveTimeout = 600_000
    const serverSockets: Socket[] = []
    running.server.on('connection', (socket: Socket) => serverSockets.push(socket))
    const agent = new Agent({ keepAlive: true })
    try {
      let clientClosed: Promise<void> | undefined
      const body = await new Promise<string>((resolve, reject) => {
        const req = httpGet(`${running.url}/prices`, { agent }, (res) => {
          let text = ''
          res.setEncoding('utf8')
          res.on('data', (chunk: string) => (text += chunk))
          res.on('end', () => resolve(text))
        })
        req.on('socket', (socket) => (clientClosed = new Promise((closed) => socket.once('close', () => closed()))))
        req.on('error', reject)
      })
      expect(body).toBe('[]')
      // The answer is read: the one connection is idle, and would be kept for ten minutes.
      expect(serverSockets).toHaveLength(1)
      expect(serverSockets[0]!.destroyed).toBe(false)
      const closing = running.close()
      // Cut in close() itself, not after keepAliveTimeout or graceMs: a server that kept it fails here, without waiting.
      expect(serverSockets[0]!.destroyed).toBe(true)
      await closing
      await clientClosed // the client sees its kept-alive connection closed
    } finally {
      agent.destroy()
    }
  })
})

describe('defaults kept beside the adapter', () => {
  it('the live stream\'s default streamMaxPending is the watch\'s own default maxPending (adapters take no values from the store)', () => {
    expect(DEFAULT_STREAM_MAX_PENDING).toBe(DEFAULT_MAX_PENDING)
  })
})
