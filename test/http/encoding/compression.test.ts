/**
 * Compressed answers (issue 23): every endpoint whose answer can be large
 * answers in the coding `Accept-Encoding` asks for, checked with clients
 * that decode by themselves (fetch, curl --compressed) and with raw
 * `node:http` requests decoded here, against the same answer uncompressed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { createPricesHandler } from '../../../src/adapters/http/handler.js'
import type { PriceStore } from '../../../src/index.js'
import { END, openDemoStore } from '../../support/http/demo-server.js'
import { curlCompressed, curlPath, decoded, rawRequest, type RawAnswer } from './http-exchange.js'

let store: PriceStore
let server: RunningServer
let curl: string | undefined

const HOUR = 3_600_000
const START = END - 2 * HOUR
/** Streamed: the server below streams answers of more than 50 records. */
const RANGE = `/prices?symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=10000&limit=720`
const SIZED_FORMS = [
  '/prices?symbol=BTC&limit=3',
  '/prices?symbols=BTC,ETH,AR,stETH,USDC.e',
  '/prices?symbol=ETH&limit=40',
  `/udf/history?symbol=BTC&resolution=1&from=${START / 1000}&to=${END / 1000}`,
  '/stats',
  `/prices/quality?symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&now=${END}`,
] as const
/** Negotiated, but small here (every record's signature holds): sent as it is. */
const SMALL_FORMS = ['/prices/verify?symbol=BTC', '/udf/time', '/udf/symbols?symbol=BTC'] as const
const STREAMED_FORMS = [RANGE, '/prices/export?symbol=ETH'] as const

beforeAll(async () => {
  ;({ store } = await openDemoStore())
  // A threshold of 1 KB, so /stats and the quality report of this small store are compressed too (the default is 4 KB).
  server = await startServer({ store, streamAbove: 50, metrics: true, compression: { threshold: 1024 } })
  curl = await curlPath()
})

afterAll(async () => {
  await server?.close()
  await store?.close()
})

function expectNegotiated(answer: RawAnswer, coding: string | undefined, what: string): void {
  expect(answer.status, what).toBe(200)
  expect(answer.headers.vary, what).toMatch(/accept-encoding/i)
  expect(answer.headers['content-encoding'], what).toBe(coding)
}

describe('a client that asks for no coding', () => {
  it('gets every answer as before: no content-encoding, the same bytes, and vary: Accept-Encoding', async () => {
    for (const form of [...SIZED_FORMS, ...STREAMED_FORMS, ...SMALL_FORMS]) {
      const plain = await rawRequest(`${server.url}${form}`)
      expectNegotiated(plain, undefined, form)
      if (plain.headers['content-length'] !== undefined) expect(Number(plain.headers['content-length']), form).toBe(plain.body.length)
    }
    // Byte for byte the answer of a server without compression.
    const off = await startServer({ store, streamAbove: 50, compression: false })
    try {
      for (const form of [...SIZED_FORMS.filter((form) => form !== '/stats'), ...STREAMED_FORMS]) {
        const [on, without] = [await rawRequest(`${server.url}${form}`), await rawRequest(`${off.url}${form}`)]
        expect(on.body.equals(without.body), form).toBe(true)
        expect(without.headers.vary, form).toBeUndefined()
      }
    } finally {
      await off.close()
    }
  })
})

describe.each(['gzip', 'br'] as const)('Accept-Encoding: %s', (coding) => {
  it('sized answers: compressed, with the compressed content-length, decoding to the plain answer', async () => {
    for (const form of SIZED_FORMS) {
      const plain = await rawRequest(`${server.url}${form}`)
      expect(plain.body.length, `${form} is worth compressing`).toBeGreaterThanOrEqual(1024)
      const packed = await rawRequest(`${server.url}${form}`, { 'accept-encoding': coding })
      expectNegotiated(packed, coding, form)
      expect(Number(packed.headers['content-length']), form).toBe(packed.body.length)
      expect(packed.body.length, form).toBeLessThan(plain.body.length)
      expect(decoded(packed), form).toBe(plain.body.toString('utf8'))
    }
  })

  it('streamed answers (a range past streamAbove, an export): compressed as they stream, chunked', async () => {
    for (const form of STREAMED_FORMS) {
      const plain = await rawRequest(`${server.url}${form}`)
      expect(plain.headers['transfer-encoding'], form).toBe('chunked')
      const packed = await rawRequest(`${server.url}${form}`, { 'accept-encoding': coding })
      expectNegotiated(packed, coding, form)
      expect(packed.headers['transfer-encoding'], form).toBe('chunked')
      expect(packed.headers['content-length'], form).toBeUndefined()
      expect(decoded(packed), form).toBe(plain.body.toString('utf8'))
      expect(packed.body.length * 2, form).toBeLessThan(plain.body.length)
    }
  })

  it('/metrics: compressed, decoding to the Prometheus text', async () => {
    const packed = await rawRequest(`${server.url}/metrics`, { 'accept-encoding': coding })
    expectNegotiated(packed, coding, '/metrics')
    expect(decoded(packed)).toMatch(/^# HELP /m)
  })

  it('HEAD sends the headers GET sends: the coding, vary and the compressed content-length', async () => {
    for (const form of [...SIZED_FORMS.filter((form) => !form.startsWith('/stats')), ...STREAMED_FORMS]) {
      const get = await rawRequest(`${server.url}${form}`, { 'accept-encoding': coding })
      const head = await rawRequest(`${server.url}${form}`, { 'accept-encoding': coding }, 'HEAD')
      expect(head.body.length, form).toBe(0)
      for (const name of ['content-type', 'content-encoding', 'content-length', 'vary']) {
        expect(head.headers[name], `${form} ${name}`).toBe(get.headers[name])
      }
    }
  })
})

describe('what is not compressed', () => {
  it('bodies under the threshold (4 KB: a latest-1 answer): vary, but no coding; unless identity is refused', async () => {
    for (const form of SMALL_FORMS) {
      const small = await rawRequest(`${server.url}${form}`, { 'accept-encoding': 'gzip, br' })
      expectNegotiated(small, undefined, form)
      expect(small.body.length, form).toBeLessThan(1024)
    }
    const defaults = await startServer({ store })
    try {
      for (const form of ['/prices?symbol=BTC', '/stats']) {
        const small = await rawRequest(`${defaults.url}${form}`, { 'accept-encoding': 'gzip, br' })
        expectNegotiated(small, undefined, form)
        expect(small.body.length, form).toBeLessThan(4096)
      }
      expectNegotiated(await rawRequest(`${defaults.url}/prices?symbol=BTC&limit=3`, { 'accept-encoding': 'gzip, br' }), 'br', 'latest-3')
    } finally {
      await defaults.close()
    }
    const forced = await rawRequest(`${server.url}/udf/config`, { 'accept-encoding': 'gzip;q=0.5, identity;q=0' })
    expectNegotiated(forced, 'gzip', '/udf/config')
    expect(decoded(forced)).toBe((await rawRequest(`${server.url}/udf/config`)).body.toString('utf8'))
  })

  it('error answers are sent as they are', async () => {
    const refused = await rawRequest(`${server.url}/prices?symbol=`, { 'accept-encoding': 'gzip' })
    expect(refused.status).toBe(400)
    expect(refused.headers['content-encoding']).toBeUndefined()
    expect(refused.headers.vary).toBeUndefined()
    expect(JSON.parse(refused.body.toString('utf8')).error.code).toMatch(/^PRICE_INVALID_/)
  })

  it('the live stream (SSE): never compressed, so each event leaves at once', async () => {
    const controller = new AbortController()
    const response = await fetch(`${server.url}/prices/stream?symbols=BTC`, { headers: { 'accept-encoding': 'gzip, br' }, signal: controller.signal })
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(response.headers.get('content-encoding')).toBeNull()
    controller.abort()
  })

  it('a request accepting no offered coding gets the answer as it is (the header is disregarded, not answered 406)', async () => {
    for (const header of ['deflate', 'identity;q=0', '*;q=0']) {
      const answer = await rawRequest(`${server.url}/prices?symbol=BTC&limit=5`, { 'accept-encoding': header })
      expectNegotiated(answer, undefined, header)
    }
  })

  it('compression: false: no coding and no vary, whatever is asked', async () => {
    const off = await startServer({ store, compression: false })
    try {
      const answer = await rawRequest(`${off.url}/prices?symbols=BTC,ETH`, { 'accept-encoding': 'gzip, br' })
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(answer.headers.vary).toBeUndefined()
    } finally {
      await off.close()
    }
  })

  it('options: a threshold of 0 compresses small bodies; out-of-range settings are refused', async () => {
    const eager = await startServer({ store, compression: { threshold: 0, gzipLevel: 1, brotliQuality: 11 } })
    try {
      expectNegotiated(await rawRequest(`${eager.url}/udf/time`, { 'accept-encoding': 'gzip' }), 'gzip', '/udf/time')
      const best = await rawRequest(`${eager.url}/udf/time`, { 'accept-encoding': 'br' })
      expect(decoded(best)).toMatch(/^[0-9]+$/)
    } finally {
      await eager.close()
    }
    for (const compression of [{ gzipLevel: 0 }, { brotliQuality: 12 }, { threshold: -1 }, { threshold: 1.5 }]) {
      expect(() => createPricesHandler(store, { compression }), JSON.stringify(compression)).toThrow(expect.objectContaining({ code: 'PRICE_INVALID_OPTIONS' }))
    }
  })
})

describe('real clients decode what they asked for', () => {
  it('fetch (undici asks for gzip, deflate): the text of the plain answer; the server did send gzip', async () => {
    for (const form of [...SIZED_FORMS.filter((form) => form !== '/stats'), ...STREAMED_FORMS]) {
      const plain = await rawRequest(`${server.url}${form}`)
      const response = await fetch(`${server.url}${form}`)
      expect(await response.text(), form).toBe(plain.body.toString('utf8'))
      expect(response.headers.get('content-encoding'), form).toBe('gzip')
    }
  })

  it('curl --compressed (brotli): the text of the plain answer', async (context) => {
    // CI installs only chromium and nats-server: without curl there is no curl to test.
    if (curl === undefined) return context.skip('curl is not installed on this machine')
    for (const form of [SIZED_FORMS[1], RANGE, '/prices/export?symbol=ETH']) {
      const plain = await rawRequest(`${server.url}${form}`)
      const { head, body } = await curlCompressed(curl, `${server.url}${form}`)
      expect(head, form).toMatch(/\r\ncontent-encoding: br\r\n/)
      expect(body, form).toBe(plain.body.toString('utf8'))
    }
  })
})
