/**
 * Mount anywhere (issue 13): `createPricesHandler` served by real Express 5,
 * Fastify 5 and plain `node:http` under a path prefix, with its query gate
 * and time budget, over real sockets on 127.0.0.1.
 */
import { readFile } from 'node:fs/promises'
import { createServer, type RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { isPriceStoreError, type PriceStore } from '../../src/index.js'
import { createPricesHandler, createPricesListener, type PricesHandlerOptions } from '../../src/http.js'
import type { DemoRecord } from '../../src/demo/demo-data.js'
import { expressHost, expressMountedHost, fastifyHost, nodeHost, type Host } from './embedding-hosts.js'
import { heldStore } from '../support/http/held-store.js'
import { END, asReturned, newestFirst, openDemoStore } from '../support/http/demo-server.js'

let store: PriceStore
let records: DemoRecord[]

beforeAll(async () => {
  ;({ store, records } = await openDemoStore())
})

afterAll(async () => {
  await store?.close()
})

const opened: Host[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((host) => host.close()))
})

async function start(make: (store: PriceStore, limits?: PricesHandlerOptions) => Promise<Host>): Promise<Host> {
  const host = await make(store)
  opened.push(host)
  return host
}

async function get(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, init)
  return { status: response.status, headers: response.headers, text: await response.text() }
}

const HOSTS = { express: expressHost, 'express mounted at /v1': expressMountedHost, fastify: fastifyHost, 'node:http': nodeHost }

describe.each(Object.entries(HOSTS))('%s', (_name, make) => {
  it('answers /v1/prices: the latest record, and a bad query is the coded 400', async () => {
    const host = await start(make)
    const latest = await get(`${host.url}/v1/prices?symbol=AR`)
    expect(latest.status).toBe(200)
    expect(latest.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(JSON.parse(latest.text)).toEqual([asReturned(newestFirst(records, 'AR')[0]!)])

    const bad = await get(`${host.url}/v1/prices?symbol=AR&limit=0`)
    expect(bad.status).toBe(400)
    expect(JSON.parse(bad.text)).toEqual({ error: { code: 'PRICE_INVALID_QUERY', message: expect.stringContaining('limit') } })
  })

  it('serves the UDF endpoints under the prefix, and HEAD and 405 as at the root', async () => {
    const host = await start(make)
    const to = Math.floor(END / 1000)
    const bars = await get(`${host.url}/v1/udf/history?symbol=ETH&resolution=60&from=${to - 7200}&to=${to}`)
    expect(bars.status).toBe(200)
    expect(JSON.parse(bars.text)).toMatchObject({ s: 'ok', t: [to - 7200, to - 3600], v: [360, 360] })

    const head = await get(`${host.url}/v1/prices?symbol=AR`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.text).toBe('')
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(100)

    const post = await get(`${host.url}/v1/prices?symbol=AR`, { method: 'POST' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD')
  })

  it('leaves every other path to the host', async () => {
    const host = await start(make)
    if (make !== expressMountedHost) expect(await get(`${host.url}/health`)).toMatchObject({ status: 200, text: 'ok' })
    for (const path of ['/prices?symbol=AR', '/v10/prices?symbol=AR', '/v1/nope', '/v1/v1/prices']) {
      const answer = await get(`${host.url}${path}`)
      expect(answer.status, path).toBe(404)
      // The host's own 404, not the handler's coded one; but Fastify's route
      // hands the handler all of /v1/ with no next, so it answers there itself.
      const handlers = make === fastifyHost && path.startsWith('/v1/')
      expect(answer.text.includes('HTTP_NOT_FOUND'), path).toBe(handlers)
    }
  })
})

describe('the gate, through Express', () => {
  it('a heavy query waits for a slot; past the line, 503 HTTP_BUSY; a light one never waits', async () => {
    const stub = heldStore()
    const errors: unknown[] = []
    const host = await expressHost(stub.store, { maxConcurrentQueries: 1, maxQueuedQueries: 1, queryTimeoutMs: 0, onError: (err) => errors.push(err) })
    opened.push(host)
    const heavy = (symbol: string) => `${host.url}/v1/prices?symbol=${symbol}&fromTimestamp=0&toTimestamp=1000&interval=1`

    const a = get(heavy('A'))
    await stub.heldCount(1)
    const b = get(heavy('B'))
    await until(() => host.prices.queries().queued === 1)
    expect(stub.held).toHaveLength(1) // B waits unread

    const c = await get(heavy('C'))
    expect(c.status).toBe(503)
    expect(c.headers.get('retry-after')).toBe('1')
    expect(JSON.parse(c.text).error.code).toBe('HTTP_BUSY')
    expect(host.prices.queries()).toMatchObject({ running: 1, queued: 1, refused: 1 })
    expect(errors).toEqual([expect.objectContaining({ name: 'QueryLimitError', code: 'HTTP_BUSY' })])

    expect((await get(`${host.url}/v1/prices?symbol=A`)).status).toBe(200) // light: past the line

    stub.held[0]!([])
    await stub.heldCount(2)
    stub.held[1]!([])
    expect((await a).status).toBe(200)
    expect((await b).status).toBe(200)
    expect(host.prices.queries()).toMatchObject({ running: 0, queued: 0 })
  })

  it('a query past its time budget gets 503 HTTP_QUERY_TIMEOUT', async () => {
    const stub = heldStore()
    const host = await expressHost(stub.store, { queryTimeoutMs: 50 })
    opened.push(host)
    const late = await get(`${host.url}/v1/prices?symbol=A&fromTimestamp=0&toTimestamp=1000&interval=1`)
    expect(late.status).toBe(503)
    expect(JSON.parse(late.text).error.code).toBe('HTTP_QUERY_TIMEOUT')
    stub.held[0]!([])
  })

  it('each handler has its own gate, shared by all its requests', async () => {
    const stub = heldStore()
    const one = createPricesHandler(stub.store, { basePath: '/one', maxConcurrentQueries: 1, maxQueuedQueries: 0 })
    const two = createPricesHandler(stub.store, { basePath: '/two', maxConcurrentQueries: 1, maxQueuedQueries: 0 })
    const app = express()
    app.use(one, two)
    await withServer(app, async (url) => {
      const query = '/prices?symbol=A&fromTimestamp=0&toTimestamp=1000&interval=1'
      const first = get(`${url}/one${query}`)
      await stub.heldCount(1)
      expect((await get(`${url}/one${query}`)).status).toBe(503) // one's only slot is taken
      const second = get(`${url}/two${query}`) // two's is free
      await stub.heldCount(2)
      expect([one.queries().running, two.queries().running]).toEqual([1, 1])
      for (const settle of stub.held) settle([])
      expect([(await first).status, (await second).status]).toEqual([200, 200])
    })
  })
})

describe('basePath', () => {
  it('is checked: a path from "/", with no query, fragment, escape, white space or "//"', () => {
    for (const bad of ['v1', '/v1?x', '/v1#x', '/v%31', '/v 1', '//v1', '/v1//x', 5, null]) {
      let caught: unknown
      try {
        createPricesHandler(store, { basePath: bad as string })
      } catch (err) {
        caught = err
      }
      expect(isPriceStoreError(caught, 'PRICE_INVALID_OPTIONS'), String(bad)).toBe(true)
    }
  })

  it('"/" is no prefix and a trailing "/" is dropped; without a next, paths not served are the coded 404', async () => {
    const forms = [
      ['/', '/prices?symbol=AR'],
      ['/v1/', '/v1/prices?symbol=AR'],
      ['/a/b', '/a/b/prices/?symbol=AR'],
    ] as const
    for (const [basePath, path] of forms) {
      await withServer(createPricesHandler(store, { basePath }), async (url) => {
        expect((await get(`${url}${path}`)).status, basePath).toBe(200)
        const missing = await get(`${url}/elsewhere/prices`)
        expect(missing.status).toBe(404)
        expect(JSON.parse(missing.text).error.code).toBe('HTTP_NOT_FOUND')
      })
    }
  })

  it('the chart page is served under the prefix too (its script asks below the path it came from), and not at the root', async () => {
    const host = await start(nodeHost)
    // 200 once `npm run build` made the script, else 503 HTTP_PAGE_NOT_BUILT: served either way (chart-page.browser.test.ts draws it).
    for (const path of ['/v1', '/v1/', '/v1/page/chart.js']) expect([200, 503], path).toContain((await get(`${host.url}${path}`)).status)
    expect((await get(`${host.url}/`)).status).toBe(404)
    expect((await get(`${host.url}/page/chart.js`)).status).toBe(404)
  })

  it('createPricesListener takes it too; without it, the listener mounted by Express at a route path answers nothing there', async () => {
    // The failure of issue 13: app.get('/v1/prices', listener) was a 404.
    const app = express()
    app.get('/v1/prices', createPricesListener(store, { basePath: '/v1' }))
    app.get('/v2/prices', createPricesListener(store))
    await withServer(app, async (url) => {
      expect((await get(`${url}/v1/prices?symbol=AR`)).status).toBe(200)
      expect((await get(`${url}/v2/prices?symbol=AR`)).status).toBe(404)
    })
  })
})

describe('docs/http.md', () => {
  it('shows each host as the tests run it', async () => {
    const docs = await readFile(new URL('../../docs/http.md', import.meta.url), 'utf8')
    const source = await readFile(new URL('./embedding-hosts.ts', import.meta.url), 'utf8')
    const regions = [...source.matchAll(/^( *)\/\/ docs:([a-z-]+)\n([\s\S]*?)^ *\/\/ \/docs:\2\n/gm)]
    expect(regions.map((match) => match[2])).toEqual(['express', 'express-mounted', 'fastify', 'node'])
    for (const [, indent, name, body] of regions) {
      const dedented = body!.replace(new RegExp(`^${indent}`, 'gm'), '')
      expect(docs, name).toContain(dedented)
    }
  })
})

/** Serves `listener` on 127.0.0.1 for the length of `use`. */
async function withServer(listener: RequestListener, use: (url: string) => Promise<void>): Promise<void> {
  const server = createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  } finally {
    server.closeAllConnections()
    server.close()
  }
}

/** Polls `done` until it holds (the handler's counters move as requests arrive). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 5))
  expect(done()).toBe(true)
}
