/**
 * GET /prices/stream: the commits of store.watch() as Server-Sent Events,
 * read with a plain fetch so every byte the server sends is seen (the
 * reliability test drives a real EventSource). Expected events are built
 * from the records written, never from the store.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer, type StartServerOptions } from '../../../src/adapters/http/node.js'
import { PriceStore, type PriceStoreOptions } from '../../../src/index.js'
import { toExactJson } from '../../../src/http.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../../src/testing/records.js'
import { openSse, type SentEvent } from '../../support/http/sse-client.js'

const open: { close(): Promise<void> }[] = []

afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

async function setup(
  options: Partial<StartServerOptions> = {},
  storeOptions: Partial<PriceStoreOptions> = {},
): Promise<{ store: PriceStore; server: RunningServer; url: string }> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, ...storeOptions })
  open.push(store)
  const server = await startServer({ store, ...options })
  open.push(server)
  return { store, server, url: `${server.url}/prices/stream` }
}

async function stream(url: string, headers: Record<string, string> = {}) {
  const sse = await openSse(url, headers)
  open.push(sse)
  return sse
}

/** A record as the stream sends it: as written, plus the provider's key. */
function returned(record: InputRecord): Record<string, unknown> {
  return { ...record, providerPublicKey: TEST_PROVIDER.publicKey }
}

/** The exact data of the `prices` event of the commit at `position` holding `records`. */
function pricesData(position: number, records: readonly InputRecord[]): string {
  return `{"position":${position},"records":[${records.map((record) => toExactJson(returned(record))).join(',')}]}`
}

function batch(symbol: string, from: number, count: number): InputRecord[] {
  return Array.from({ length: count }, (_, i) => makeRecord({ symbol, timestamp: T0 + (from + i) * 1000 }))
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (check()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`timed out waiting until ${what}`)
}

/** The next `count` events that are not heartbeats. */
async function take(sse: Awaited<ReturnType<typeof openSse>>, count: number): Promise<SentEvent[]> {
  const events: SentEvent[] = []
  while (events.length < count) {
    const event = await sse.next()
    if (event === undefined) throw new Error(`the stream ended after ${JSON.stringify(events)}`)
    events.push(event)
  }
  return events
}

describe('GET /prices/stream', () => {
  it('answers an event stream: retry, ready at the newest position, then each commit as one prices event with its position as id', async () => {
    const { store, url } = await setup()
    const first = batch('BTC', 0, 3)
    await store.putMany(first)
    const sse = await stream(url)
    expect(sse.response.status).toBe(200)
    expect(sse.response.headers.get('content-type')).toBe('text/event-stream')
    expect(sse.response.headers.get('cache-control')).toBe('no-cache')
    expect(sse.response.headers.get('x-accel-buffering')).toBe('no')
    const [retry, ready] = await take(sse, 2)
    expect(retry?.retry).toBe('1000')
    expect(ready).toEqual({ event: 'ready', id: '1', data: '{"position":1}' })
    // Exactness: a -0 and extra fields come back as written.
    const second = [makeRecord({ symbol: 'ETH', timestamp: T0, value: 2_000.125, source: { a: -0, b: 1e-7 } }), ...batch('BTC', 10, 2)]
    const third = batch('AR', 0, 1)
    await store.putMany(second)
    await store.putMany(third)
    expect(await take(sse, 2)).toEqual([
      { event: 'prices', id: '2', data: pricesData(2, second) },
      { event: 'prices', id: '3', data: pricesData(3, third) },
    ])
  })

  it('filters by symbols (or symbol); commits without a match send nothing', async () => {
    const { store, url } = await setup()
    const several = await stream(`${url}?symbols=ETH,AR`)
    const one = await stream(`${url}?symbol=AR`)
    await take(several, 2)
    await take(one, 2)
    const mixed = [...batch('BTC', 0, 2), ...batch('ETH', 0, 2), ...batch('AR', 0, 1)]
    await store.putMany(batch('BTC', 100, 3))
    await store.putMany(mixed)
    expect(await take(several, 1)).toEqual([{ event: 'prices', id: '2', data: pricesData(2, mixed.filter((r) => r.symbol !== 'BTC')) }])
    expect(await take(one, 1)).toEqual([{ event: 'prices', id: '2', data: pricesData(2, mixed.filter((r) => r.symbol === 'AR')) }])
  })

  it('replays the commits after `after`, then goes on live; Last-Event-ID takes precedence over after', async () => {
    const { store, url } = await setup()
    const batches = [batch('BTC', 0, 2), batch('ETH', 0, 2), batch('BTC', 2, 1)]
    for (const records of batches) await store.putMany(records)
    const replay = await stream(`${url}?after=1`)
    expect((await take(replay, 4)).slice(1)).toEqual([
      { event: 'ready', id: '1', data: '{"position":1}' },
      { event: 'prices', id: '2', data: pricesData(2, batches[1] as InputRecord[]) },
      { event: 'prices', id: '3', data: pricesData(3, batches[2] as InputRecord[]) },
    ])
    const resumed = await stream(`${url}?after=0`, { 'last-event-id': '2' })
    expect((await take(resumed, 3)).slice(1)).toEqual([
      { event: 'ready', id: '2', data: '{"position":2}' },
      { event: 'prices', id: '3', data: pricesData(3, batches[2] as InputRecord[]) },
    ])
    const live = batch('AR', 0, 1)
    await store.putMany(live)
    expect(await take(replay, 1)).toEqual([{ event: 'prices', id: '4', data: pricesData(4, live) }])
    expect(await take(resumed, 1)).toEqual([{ event: 'prices', id: '4', data: pricesData(4, live) }])
  })

  it('says so in a reset event when the position cannot be replayed: trimmed from the journal, or unknown', async () => {
    const { store, url } = await setup({}, { journal: { commits: 2 } })
    const batches = [batch('BTC', 0, 1), batch('BTC', 1, 1), batch('BTC', 2, 1), batch('BTC', 3, 1)]
    for (const records of batches) await store.putMany(records)
    const trimmed = await stream(`${url}?after=0`)
    expect((await take(trimmed, 5)).slice(2)).toEqual([
      { event: 'reset', id: '2', data: '{"reason":"trimmed","requested":0,"position":2}' },
      { event: 'prices', id: '3', data: pricesData(3, batches[2] as InputRecord[]) },
      { event: 'prices', id: '4', data: pricesData(4, batches[3] as InputRecord[]) },
    ])
    const unknown = await stream(url, { 'last-event-id': '99' })
    expect((await take(unknown, 3)).slice(1)).toEqual([
      { event: 'ready', id: '99', data: '{"position":99}' },
      { event: 'reset', id: '4', data: '{"reason":"unknown","requested":99,"position":4}' },
    ])
    const next = batch('ETH', 0, 1)
    await store.putMany(next)
    expect(await take(unknown, 1)).toEqual([{ event: 'prices', id: '5', data: pricesData(5, next) }])
  })

  it('carries pruned for a replayed commit whose records were pruned since', async () => {
    const { store, url } = await setup()
    const old = [makeRecord({ symbol: 'BTC', timestamp: T0 - 7_200_000 }), makeRecord({ symbol: 'BTC', timestamp: T0 })]
    await store.putMany(old)
    await store.prune({ before: T0 - 3_600_000 })
    const sse = await stream(`${url}?after=0`)
    const events = await take(sse, 3)
    expect(events[2]).toEqual({ event: 'prices', id: '1', data: `{"position":1,"pruned":1,"records":[${toExactJson(returned(old[1] as InputRecord))}]}` })
  })

  it('sends progress events with ids to a filtered stream whose symbols are not written', async () => {
    const { store, url } = await setup()
    for (let i = 0; i < 3; i++) await store.putMany(batch('BTC', i, 1))
    const sse = await stream(`${url}?symbols=ETH&after=0`)
    // The replay ends with the position it reached, so a reconnect starts past the commits without ETH.
    expect((await take(sse, 3)).slice(2)).toEqual([{ event: 'progress', id: '3', data: '{"position":3}' }])
  })

  it('answers HEAD with the headers only', async () => {
    const { server, store } = await setup()
    await store.putMany(batch('BTC', 0, 1))
    const response = await fetch(`${server.url}/prices/stream?symbols=BTC`, { method: 'HEAD' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    expect(await response.text()).toBe('')
  })

  it.each([
    ['after=abc', {}, 'PRICE_INVALID_QUERY', 'after'],
    ['after=-1', {}, 'PRICE_INVALID_QUERY', 'after'],
    ['after=1.5', {}, 'PRICE_INVALID_QUERY', 'after'],
    ['after=99999999999999999999', {}, 'PRICE_INVALID_QUERY', 'after'],
    ['after=1&after=2', {}, 'PRICE_INVALID_QUERY', 'after'],
    ['symbols=BTC,,ETH', {}, 'PRICE_INVALID_SYMBOL', 'symbol'],
    ['symbols=BTC%20USD', {}, 'PRICE_INVALID_SYMBOL', 'BTC USD'],
    ['symbol=BTC&symbols=ETH', {}, 'PRICE_INVALID_QUERY', 'symbols'],
    ['symbols=BTC', { 'last-event-id': 'x7' }, 'PRICE_INVALID_QUERY', 'Last-Event-ID'],
    ['', { 'last-event-id': '-3' }, 'PRICE_INVALID_QUERY', 'Last-Event-ID'],
  ])('answers %s %j with a coded 400 before any event', async (query, headers, code, mentioned) => {
    const { url } = await setup()
    const response = await fetch(`${url}?${query}`, { headers })
    expect(response.status).toBe(400)
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const body = (await response.json()) as { error: { code: string; message: string } }
    expect(body.error.code).toBe(code)
    expect(body.error.message).toContain(mentioned)
  })

  it('answers 503 HTTP_BUSY with retry-after beyond maxStreamSubscribers, and takes a stream again once one closes', async () => {
    const { url } = await setup({ maxStreamSubscribers: 2 })
    const a = await stream(url)
    const b = await stream(url)
    await take(a, 2)
    await take(b, 2)
    const refused = await fetch(url)
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('HTTP_BUSY')
    await a.close()
    // The server learns of the close when the connection ends: ask until it has.
    let again: Response | undefined
    for (let i = 0; i < 500 && again?.status !== 200; i++) {
      await again?.body?.cancel()
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 10))
      again = await fetch(url)
    }
    expect(again?.status).toBe(200)
    await again?.body?.cancel()
  })

  it('sends heartbeat comments while idle', async () => {
    const { url } = await setup({ streamHeartbeatMs: 20 })
    const sse = await stream(url)
    await take(sse, 2)
    // Reading runs in the background while the heartbeats come; nothing else is sent.
    const next = sse.next()
    await until(() => sse.comments() >= 2, 'two heartbeats')
    await sse.close()
    expect(await next).toBeUndefined()
  })

  it('ends every stream with an end event when the server closes, and close() resolves', async () => {
    const { url, server, store } = await setup()
    const a = await stream(url)
    const b = await stream(`${url}?symbols=BTC`)
    await take(a, 2)
    await take(b, 2)
    await store.putMany(batch('BTC', 0, 1))
    await take(a, 1)
    await server.close()
    expect(await a.next()).toEqual({ event: 'end', data: '{"reason":"closing","position":1}' })
    expect(await a.next()).toBeUndefined()
    expect(await b.until('end')).toEqual([{ event: 'prices', id: '1', data: pricesData(1, batch('BTC', 0, 1)) }, { event: 'end', data: '{"reason":"closing","position":1}' }])
    expect(await b.next()).toBeUndefined()
  })

  it('ends a stream with an end event when the store closes', async () => {
    const { url, store } = await setup()
    const sse = await stream(url)
    await take(sse, 2)
    await store.close()
    expect(await sse.until('end')).toEqual([{ event: 'end', data: '{"reason":"closing","position":0}' }])
  })

  it('answers 503 PRICE_NOT_OPEN when the store is closed', async () => {
    const { url, store } = await setup()
    await store.close()
    const response = await fetch(url)
    expect(response.status).toBe(503)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('PRICE_NOT_OPEN')
  })

  it('is not served for a store that cannot be watched', async () => {
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
    open.push(store)
    const server = await startServer({ store: { query: (params) => store.query(params) } })
    open.push(server)
    const response = await fetch(`${server.url}/prices/stream`)
    expect(response.status).toBe(404)
  })
})
