/**
 * `/ws` under abuse and at its limits: a client that does not read, huge
 * frames, floods, too many connections, subscriptions or symbols, pages of
 * other origins, and the server closing. Real servers, real `ws` clients.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type StartServerOptions } from '../../../src/adapters/http/node.js'
import type { CoalescerClock } from '../../../src/adapters/http/ws/coalescer.js'
import { createWsEndpoint, type WsEndpoint, type WsEndpointOptions } from '../../../src/adapters/http/ws/ws-endpoint.js'
import { WS_CLOSE_CODES } from '../../../src/adapters/http/ws/ws-options.js'
import { PriceStore } from '../../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../../src/testing/records.js'
import { connectWs, type WsClient } from './ws-client.js'

const open: { close(): Promise<void> }[] = []

afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

async function openStore(): Promise<PriceStore> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  open.push(store)
  return store
}

/** `startServer` with its `/ws`. */
async function served(options: Partial<StartServerOptions> = {}): Promise<{ store: PriceStore; url: string; httpUrl: string }> {
  const store = await openStore()
  const server = await startServer({ store, ...options })
  open.push(server)
  return { store, url: `${server.url.replace('http', 'ws')}/ws`, httpUrl: server.url }
}

/** The endpoint on a plain `node:http` server, so a test can read its load or give it a clock. */
async function endpointServer(store: PriceStore, options: WsEndpointOptions, clock?: CoalescerClock): Promise<{ endpoint: WsEndpoint; url: string }> {
  const endpoint = createWsEndpoint(store, options, clock) as WsEndpoint
  const server: Server = createServer((_req, res) => res.writeHead(404).end())
  server.on('upgrade', (req, socket, head) => {
    if (!endpoint.upgrade(req, socket, head)) socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  open.push({ close: async () => {
    await endpoint.close()
    await new Promise((resolve) => server.close(resolve))
  } })
  return { endpoint, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws` }
}

async function client(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
  const ws = await connectWs(url, { headers })
  open.push(ws)
  return ws
}

function batch(symbol: string, from: number, count: number): InputRecord[] {
  return Array.from({ length: count }, (_, i) => makeRecord({ symbol, timestamp: T0 + (from + i) * 1000 }))
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 4_000; i++) {
    if (check()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`timed out waiting until ${what}`)
}

describe('/ws limits', () => {
  it('closes a client that leaves its socket full with 4000, once it reads again', async () => {
    const store = await openStore()
    const { endpoint, url } = await endpointServer(store, { wsMaxBufferedBytes: 64 * 1024, wsStallMs: 50, wsMaxPending: 1_000_000 })
    const ws = await client(url)
    ws.send({ type: 'subscribe', symbols: ['BTC'] })
    await ws.until('subscribed')
    ws.socket.pause()
    // The kernel's buffers take a few MB before the server's own fills: write until the server gives up on the client.
    for (let i = 0; i < 80 && endpoint.load().slowClosed === 0; i++) await store.putMany(batch('BTC', i * 500, 500))
    await until(() => endpoint.load().slowClosed === 1, 'the server closes the client')
    ws.socket.resume()
    const closed = await ws.closed
    expect(closed.code).toBe(WS_CLOSE_CODES.SLOW_CONSUMER)
    expect(closed.reason).toMatch(/read nothing/)
    await until(() => endpoint.load().connections === 0, 'the connection is gone')
  })

  it('closes a connection that sends a frame over wsMaxPayloadBytes with 1009; the server goes on', async () => {
    const { url } = await served({ wsMaxPayloadBytes: 1_024 })
    const ws = await client(url)
    ws.send(JSON.stringify({ type: 'subscribe', symbols: ['BTC'], id: 'x'.repeat(2_000) }))
    expect((await ws.closed).code).toBe(1009)
    const next = await client(url)
    next.send({ type: 'subscribe', symbols: ['BTC'] })
    expect(await next.next()).toMatchObject({ type: 'subscribed' })
  })

  it('closes a connection past maxWsConnections with 4001; a place freed is taken again', async () => {
    const { url } = await served({ maxWsConnections: 2 })
    const first = await client(url)
    await client(url)
    const third = await client(url)
    expect(await third.closed).toEqual({ code: WS_CLOSE_CODES.SERVER_FULL, reason: expect.stringMatching(/2 connections/) })
    await first.close()
    // The server counts the first one gone once it saw its close: retry until it did.
    let again: WsClient | undefined
    for (let i = 0; i < 200 && again === undefined; i++) {
      const candidate = await client(url)
      candidate.send({ type: 'subscribe', symbols: ['BTC'] })
      again = await candidate.next().then(() => candidate, () => undefined)
    }
    expect(again).toBeDefined()
  })

  it('closes a client that floods with messages with 4002', async () => {
    const { url } = await served({ wsMessageRate: 2 })
    const ws = await client(url)
    for (let i = 0; i < 50; i++) ws.send({ type: 'subscribe', id: 'same', symbols: ['BTC'] })
    expect((await ws.closed).code).toBe(WS_CLOSE_CODES.FLOOD)
  })

  it('refuses subscriptions past wsMaxSubscriptions and symbols past wsMaxSymbols, with coded errors', async () => {
    const { url } = await served({ wsMaxSubscriptions: 2, wsMaxSymbols: 3 })
    const ws = await client(url)
    ws.send({ type: 'subscribe', id: 'a', symbols: ['BTC'] })
    ws.send({ type: 'subscribe', id: 'b', symbols: ['ETH', 'AR'] })
    ws.send({ type: 'subscribe', id: 'c', symbols: ['SOL'] })
    expect((await ws.next()).type).toBe('subscribed')
    expect((await ws.next()).type).toBe('subscribed')
    expect(await ws.next()).toMatchObject({ type: 'error', id: 'c', code: 'PRICE_WS_TOO_MANY_SUBSCRIPTIONS' })
    ws.send({ type: 'subscribe', id: 'a', symbols: ['BTC', 'SOL'] })
    expect(await ws.next()).toMatchObject({ type: 'error', id: 'a', code: 'PRICE_WS_TOO_MANY_SYMBOLS' })
    ws.send({ type: 'subscribe', id: 'a', symbols: ['SOL'] }) // replacing keeps the count
    expect(await ws.next()).toMatchObject({ type: 'subscribed', id: 'a', symbols: ['SOL'] })
  })

  it('lets pages of other origins connect only where cors lets them read', async () => {
    const closed = await served()
    await expect(client(closed.url, { origin: 'https://elsewhere.example' })).rejects.toThrow(/403/)
    await client(closed.url, { origin: closed.httpUrl }) // the server's own pages
    await client(closed.url) // not a page
    const listed = await served({ cors: { origins: ['https://app.example'] } })
    await client(listed.url, { origin: 'https://app.example' })
    await expect(client(listed.url, { origin: 'https://elsewhere.example' })).rejects.toThrow(/403/)
  })

  it('ends each subscription with an end message, then closes with 1001, when the server closes', async () => {
    const store = await openStore()
    const server = await startServer({ store })
    const ws = await client(`${server.url.replace('http', 'ws')}/ws`)
    ws.send({ type: 'subscribe', id: 's', symbols: ['BTC'] })
    await ws.until('subscribed')
    await store.putMany(batch('BTC', 0, 1))
    const update = await ws.next()
    await server.close()
    expect(await ws.next()).toEqual({ type: 'end', id: 's', eventId: update.eventId, reason: 'closing', position: update.position })
    expect((await ws.closed).code).toBe(1001)
  })

  it('fixed_rate@200ms over a connection on a test clock: the first commit at once, the rest coalesced at the interval', async () => {
    const store = await openStore()
    let now = 0
    const timers: { at: number; run: () => void }[] = []
    const clock: CoalescerClock = {
      now: () => now,
      setTimeout: (run, ms) => timers.push({ at: now + ms, run }),
      clearTimeout: () => {},
    }
    const { url } = await endpointServer(store, {}, clock)
    const ws = await client(url)
    ws.send({ type: 'subscribe', id: 'f', symbols: ['BTC', 'ETH'], channel: 'fixed_rate@200ms' })
    await ws.until('subscribed')
    await store.putMany(batch('BTC', 0, 1))
    const first = await ws.next()
    expect(first).toMatchObject({ type: 'prices', position: store.position })
    const newest = [...batch('BTC', 1, 1), ...batch('ETH', 1, 1)]
    await store.putMany(batch('BTC', 5, 1))
    await store.putMany(newest)
    const last = store.position
    // The timer runs when the test says. Once the second commit is taken in, the update carries both; should the
    // timer run before (the subscription had taken only the first), the second goes out at the next interval.
    let update: Record<string, unknown> | undefined
    while (update?.position !== last) {
      await until(() => timers.length === 1, 'an update waits for the interval')
      now += 200
      timers.shift()?.run()
      update = await ws.next()
      expect(update.type).toBe('prices')
    }
    expect(update.records).toEqual([expect.objectContaining({ symbol: 'BTC', timestamp: newest[0]?.timestamp }), expect.objectContaining({ symbol: 'ETH' })])
  })
})
