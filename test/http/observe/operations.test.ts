/**
 * GET /health, GET /metrics and the access log, against real stores served
 * by startServer (and a stub where a failure must be made to happen).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { AccessLogEntry } from '../../../src/adapters/http/observe/access-log.js'
import { createPricesHandler } from '../../../src/adapters/http/handler.js'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { PriceStore } from '../../../src/index.js'
import type { DemoRecord } from '../../../src/demo/demo-data.js'
import { heldStore } from '../../support/http/held-store.js'
import { newestFirst, openDemoStore, serve } from '../../support/http/demo-server.js'
import { openGet, scrape, until } from '../../support/http/operations-helpers.js'

let store: PriceStore
let records: DemoRecord[]

beforeAll(async () => {
  ;({ store, records } = await openDemoStore())
})

afterAll(async () => {
  await store?.close()
})

/** A fresh record of `symbol` after every demo record, for writes. */
function laterRecords(count: number, symbol = 'BTC'): DemoRecord[] {
  const template = newestFirst(records, symbol)[0]!
  return Array.from({ length: count }, (_, i) => ({ ...template, id: `later-${symbol}-${i}-${Math.random()}`, timestamp: template.timestamp + 1 + i }))
}

describe('GET /health', () => {
  it('200 while the store is open and answering, 503 once it closes; no-store, never gated', async () => {
    const own = await openDemoStore()
    const running = await serve(own.store)
    try {
      const ok = await fetch(`${running.url}/health`)
      expect(ok.status).toBe(200)
      expect(ok.headers.get('cache-control')).toBe('no-store')
      expect(ok.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(await ok.json()).toEqual({ status: 'ok', store: 'open', position: own.store.position })
      expect((await fetch(`${running.url}/health`, { method: 'HEAD' })).status).toBe(200)
      await own.store.close()
      const down = await fetch(`${running.url}/health`)
      expect(down.status).toBe(503)
      expect(down.headers.get('cache-control')).toBe('no-store')
      expect(await down.json()).toEqual({ status: 'unavailable', store: 'closed', reason: 'the store is closed' })
    } finally {
      await running.close()
      await own.store.close()
    }
  })

  it('503 when the read fails or does not answer in time; a stub without status is checked on what it has', async () => {
    const reported: unknown[] = []
    const failing = { status: 'open', query: () => Promise.resolve([]), symbols: () => Promise.resolve(['BTC']), latest: () => Promise.reject(new Error('disk gone')) }
    const stuck = { status: 'open', query: () => Promise.resolve([]), symbols: () => Promise.resolve(['BTC']), latest: () => new Promise(() => {}) }
    const bare = { query: () => Promise.resolve([]) }
    const servers = await Promise.all([failing, stuck, bare].map((stub) => startServer({ store: stub, onError: (err) => reported.push(err) })))
    try {
      const [fails, hangs, plain] = await Promise.all(servers.map((running) => fetch(`${running.url}/health`)))
      expect(fails!.status).toBe(503)
      expect(await fails!.json()).toEqual({ status: 'unavailable', store: 'open', reason: 'a read failed' })
      expect(reported.map((err) => (err as Error).message)).toEqual(['disk gone'])
      expect(hangs!.status).toBe(503)
      expect(((await hangs!.json()) as { reason: string }).reason).toMatch(/did not answer a read within \d+ ms/)
      expect(plain!.status).toBe(200)
      expect(await plain!.json()).toEqual({ status: 'ok' })
    } finally {
      await Promise.all(servers.map((running) => running.close()))
    }
  })

  it('answers while every query slot is taken and the line is full', async () => {
    const held = heldStore()
    const running = await startServer({ store: held.store, maxConcurrentQueries: 1, maxQueuedQueries: 0 })
    try {
      const heavy = fetch(`${running.url}/prices?symbol=BTC&limit=3000`)
      await held.heldCount(1)
      expect((await fetch(`${running.url}/prices?symbol=BTC&limit=3000`)).status).toBe(503)
      expect((await fetch(`${running.url}/health`)).status).toBe(200)
      held.held[0]!([])
      expect((await heavy).status).toBe(200)
    } finally {
      await running.close()
    }
  })
})

/** The module object prom-client requires, whose functions a test can spy on (an ESM namespace is frozen). */
const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof import('node:perf_hooks')

describe('GET /metrics', () => {
  let running: RunningServer
  beforeAll(async () => {
    running = await startServer({ store, metrics: true })
  })
  afterAll(async () => {
    await running?.close()
  })

  it('is off by default: 404, and not named among the endpoints', async () => {
    const plain = await serve(store)
    try {
      const response = await fetch(`${plain.url}/metrics`)
      expect(response.status).toBe(404)
      expect(((await response.json()) as { error: { message: string } }).error.message).not.toContain('/metrics')
    } finally {
      await plain.close()
    }
  })

  it('counts requests by endpoint, form and status, exactly; latency histograms agree with the counts', async () => {
    const eth = newestFirst(records, 'ETH')
    const requests: [string, Record<string, string>, number][] = [
      ['/prices?symbol=BTC', { endpoint: 'prices', form: 'latest', status: '200' }, 3],
      ['/prices?symbol=BTC&limit=5', { endpoint: 'prices', form: 'latest-n', status: '200' }, 2],
      [`/prices?symbol=ETH&toTimestamp=${eth[10]!.timestamp}`, { endpoint: 'prices', form: 'history', status: '200' }, 1],
      ['/prices?symbols=BTC,ETH', { endpoint: 'prices', form: 'several', status: '200' }, 2],
      [`/prices?symbol=ETH&fromTimestamp=${eth.at(-1)!.timestamp}&toTimestamp=${eth[0]!.timestamp}&interval=600000`, { endpoint: 'prices', form: 'range', status: '200' }, 1],
      ['/prices?symbol=BTC&limit=0', { endpoint: 'prices', form: 'none', status: '400' }, 2],
      ['/elsewhere', { endpoint: 'not_found', form: 'none', status: '404' }, 1],
      ['/health', { endpoint: 'health', form: 'none', status: '200' }, 1],
      ['/stats', { endpoint: 'stats', form: 'none', status: '200' }, 1],
    ]
    const before = await scrape(running.url)
    for (const [target, , times] of requests) {
      for (let i = 0; i < times; i++) await (await fetch(`${running.url}${target}`)).arrayBuffer()
    }
    // Counted when each answer's connection reports it done, just after the client has it.
    const metricsBefore = before.value('price_store_http_requests_total', { endpoint: 'metrics', form: 'none', status: '200' })
    let after = await scrape(running.url)
    for (let i = 0; i < 100 && after.value('price_store_http_requests_total', { endpoint: 'stats', form: 'none', status: '200' }) === before.value('price_store_http_requests_total', { endpoint: 'stats', form: 'none', status: '200' }); i++) {
      after = await scrape(running.url)
    }
    expect(after.types.get('price_store_http_requests_total')).toBe('counter')
    expect(after.types.get('price_store_http_request_duration_seconds')).toBe('histogram')
    for (const [target, labels, times] of requests) {
      const moved = after.value('price_store_http_requests_total', labels) - before.value('price_store_http_requests_total', labels)
      expect(moved, target).toBe(times)
    }
    expect(after.value('price_store_http_requests_total', { endpoint: 'metrics', form: 'none', status: '200' })).toBeGreaterThan(metricsBefore)
    // Each (endpoint, form) histogram counts exactly its requests, whatever their status; buckets are cumulative.
    for (const [endpoint, form] of [['prices', 'latest'], ['prices', 'none'], ['not_found', 'none']] as const) {
      const counted = after.samples
        .filter((sample) => sample.name === 'price_store_http_requests_total' && sample.labels.endpoint === endpoint && sample.labels.form === form)
        .reduce((sum, sample) => sum + sample.value, 0)
      const labels = { endpoint, form }
      expect(after.value('price_store_http_request_duration_seconds_count', labels)).toBe(counted)
      const buckets = after.samples.filter((sample) => sample.name === 'price_store_http_request_duration_seconds_bucket' && sample.labels.endpoint === endpoint && sample.labels.form === form)
      expect(buckets.at(-1)!.labels.le).toBe('+Inf')
      expect(buckets.at(-1)!.value).toBe(counted)
      for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value)
      expect(after.value('price_store_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0)
    }
  })

  it('records written and the last write time move with every commit, not only through HTTP', async () => {
    const before = await scrape(running.url)
    const start = Date.now()
    const batch = laterRecords(7)
    await store.putMany(batch.slice(0, 4))
    await store.put(batch[4]!)
    await store.putMany(batch.slice(5))
    const end = Date.now()
    const after = await scrape(running.url)
    expect(after.types.get('price_store_records_written_total')).toBe('counter')
    expect(after.value('price_store_records_written_total') - before.value('price_store_records_written_total')).toBe(7)
    const last = after.value('price_store_last_write_timestamp_seconds') * 1000
    expect(last).toBeGreaterThanOrEqual(start)
    expect(last).toBeLessThanOrEqual(end)
    records.push(...batch)
  })

  it('shows the gate: heavy queries running and waiting, read at scrape time; stream subscribers; process metrics', async () => {
    const held = heldStore()
    const gated = await startServer({ store: held.store, metrics: true, maxConcurrentQueries: 1 })
    try {
      const idle = await scrape(gated.url)
      expect([idle.value('price_store_gate_running'), idle.value('price_store_gate_queued')]).toEqual([0, 0])
      expect(idle.types.get('price_store_gate_running')).toBe('gauge')
      // A stub has no write counters: those metrics are left out rather than shown as 0.
      expect(idle.has('price_store_records_written_total')).toBe(false)
      expect(idle.value('price_store_stream_subscribers')).toBe(0)
      expect(idle.has('process_cpu_user_seconds_total')).toBe(true)
      expect(idle.has('nodejs_heap_size_used_bytes')).toBe(true)
      const heavy = [1, 2, 3].map(() => fetch(`${gated.url}/prices?symbol=BTC&limit=3000`))
      await held.heldCount(1)
      await until(() => gated.queries().queued === 2, 'two queries wait')
      const busy = await scrape(gated.url)
      expect([busy.value('price_store_gate_running'), busy.value('price_store_gate_queued')]).toEqual([1, 2])
      for (let i = 0; i < 3; i++) {
        await held.heldCount(i + 1)
        held.held[i]!([])
      }
      await Promise.all(heavy)
      const done = await scrape(gated.url)
      expect([done.value('price_store_gate_running'), done.value('price_store_gate_queued')]).toEqual([0, 0])
    } finally {
      await gated.close()
    }
  })

  it('counts the exports being sent, read at scrape time', async () => {
    // An export that sends one record and then waits until released.
    let release = (): void => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    const [first] = await store.latest('BTC')
    const exporting = {
      query: () => Promise.resolve([]),
      export: () => ({
        async *[Symbol.asyncIterator]() {
          yield first!
          await released
        },
      }),
    }
    const running = await startServer({ store: exporting, metrics: true })
    try {
      /** Scrapes until the gauge reads `expected` (at most 1,000 times); the last reading. */
      const exportsRunning = async (expected: number): Promise<number> => {
        let reading = (await scrape(running.url)).value('price_store_exports_running')
        for (let i = 0; i < 1_000 && reading !== expected; i++) reading = (await scrape(running.url)).value('price_store_exports_running')
        return reading
      }
      expect((await scrape(running.url)).value('price_store_exports_running')).toBe(0)
      // Its headers go out with the first piece of body, so the response is awaited once it is released.
      const held = openGet(`${running.url}/prices/export`)
      expect(await exportsRunning(1)).toBe(1)
      release()
      const response = await held
      await new Promise((resolve) => response.resume().once('end', resolve))
      expect(await exportsRunning(0)).toBe(0)
    } finally {
      await running.close()
    }
  })

  it('two handlers in one process each have their own registry and counts, and share one set of process metrics', async () => {
    // prom-client's process metrics start an event-loop monitor that runs for good: once per process, not per handler.
    const monitors = vi.spyOn(perfHooks, 'monitorEventLoopDelay')
    const a = createPricesHandler(store, { metrics: true })
    const b = createPricesHandler(store, { metrics: true })
    for (let i = 0; i < 5; i++) createPricesHandler(store, { metrics: true })
    expect(monitors.mock.calls.length).toBeLessThanOrEqual(1)
    monitors.mockRestore()
    const servers = [createServer(a), createServer(b)]
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))))
    const [urlA, urlB] = servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    try {
      for (let i = 0; i < 3; i++) await (await fetch(`${urlA}/prices?symbol=AR`)).arrayBuffer()
      let scrapeA = await scrape(urlA!)
      for (let i = 0; i < 100 && scrapeA.value('price_store_http_requests_total', { endpoint: 'prices', form: 'latest', status: '200' }) < 3; i++) scrapeA = await scrape(urlA!)
      const scrapeB = await scrape(urlB!)
      expect(scrapeA.value('price_store_http_requests_total', { endpoint: 'prices', form: 'latest', status: '200' })).toBe(3)
      expect(scrapeB.value('price_store_http_requests_total', { endpoint: 'prices', form: 'latest', status: '200' })).toBe(0)
      for (const each of [scrapeA, scrapeB]) {
        expect(each.has('nodejs_eventloop_lag_seconds')).toBe(true)
        expect(each.has('process_cpu_user_seconds_total')).toBe(true)
      }
    } finally {
      servers.forEach((server) => server.closeAllConnections())
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
    }
  })
})

describe('access log', () => {
  it('one entry per request, when it is done, with the documented fields and never a header', async () => {
    const entries: AccessLogEntry[] = []
    const running = await startServer({ store, accessLog: (entry) => entries.push(entry) })
    const secret = 'tok-SECRET-0123456789'
    try {
      const headers = { authorization: `Bearer ${secret}`, cookie: `session=${secret}`, 'x-api-key': secret }
      const latest = await fetch(`${running.url}/prices?symbol=BTC`, { headers })
      const size = Number(latest.headers.get('content-length'))
      await latest.arrayBuffer()
      await (await fetch(`${running.url}/stats`, { method: 'HEAD', headers })).arrayBuffer()
      await (await fetch(`${running.url}/nowhere?x=1`, { headers })).arrayBuffer()
      await (await fetch(`${running.url}/prices`, { method: 'DELETE', headers })).arrayBuffer()
      await until(() => entries.length >= 4, 'four entries')
      const [prices, stats, missing, deleted] = entries
      for (const entry of entries) {
        // As a JSON line: every field that applies survives the round trip; the ones that do not are left out.
        const line = JSON.parse(JSON.stringify(entry)) as Record<string, unknown>
        expect(line).toEqual(Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined)))
        expect(Object.keys(line)).not.toContain('aborted')
        expect(Date.parse(entry.time)).not.toBeNaN()
        expect(entry.remoteAddress).toBe('127.0.0.1')
        expect(entry.durationMs).toBeGreaterThanOrEqual(0)
        expect(entry.bytes).toBeGreaterThan(0)
        expect(entry.aborted).toBeUndefined()
      }
      expect(prices).toMatchObject({ method: 'GET', path: '/prices', query: 'symbol=BTC', endpoint: 'prices', form: 'latest', status: 200 })
      expect(prices!.bytes).toBeGreaterThan(size) // the body and the status line and headers
      expect(stats).toMatchObject({ method: 'HEAD', path: '/stats', query: '', endpoint: 'stats', status: 200 })
      expect(stats!.form).toBeUndefined()
      expect(missing).toMatchObject({ method: 'GET', path: '/nowhere', query: 'x=1', endpoint: 'not_found', status: 404 })
      expect(deleted).toMatchObject({ method: 'DELETE', path: '/prices', endpoint: 'method_not_allowed', status: 405 })
      const text = JSON.stringify(entries)
      expect(text).not.toContain(secret)
      expect(text.toLowerCase()).not.toContain('authorization')
      expect(text.toLowerCase()).not.toContain('bearer')

      // One each: a fifth request gives exactly one more entry.
      await (await fetch(`${running.url}/health`)).arrayBuffer()
      await until(() => entries.length >= 5, 'a fifth entry')
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(entries).toHaveLength(5)
      expect(entries[4]).toMatchObject({ path: '/health', endpoint: 'health', status: 200 })
    } finally {
      await running.close()
    }
  })

  it('a request whose client leaves is logged once, as aborted', async () => {
    const entries: AccessLogEntry[] = []
    const big = await openDemoStore()
    const running = await startServer({ store: big.store, accessLog: (entry) => entries.push(entry) })
    try {
      const response = await openGet(`${running.url}/prices/export`)
      await new Promise((resolve) => response.once('data', resolve))
      response.destroy()
      await until(() => entries.length >= 1, 'the entry')
      expect(entries).toHaveLength(1)
      expect(entries[0]).toMatchObject({ endpoint: 'export', status: 200, aborted: true })
    } finally {
      await running.close()
      await big.store.close()
    }
  })

  it('a logger that throws breaks no answer: its error goes to onError', async () => {
    const reported: unknown[] = []
    const running = await startServer({ store, accessLog: () => { throw new Error('log full') }, onError: (err) => reported.push(err) })
    try {
      const response = await fetch(`${running.url}/prices?symbol=BTC`)
      expect(response.status).toBe(200)
      await response.arrayBuffer()
      await until(() => reported.length >= 1, 'the report')
      expect((reported[0] as Error).message).toBe('log full')
      expect((await fetch(`${running.url}/health`)).status).toBe(200)
    } finally {
      await running.close()
    }
  })
})
