/**
 * `/ws`: WebSocket subscriptions to the store's commits, with a real server
 * and a real `ws` client. Expected updates are built from the records
 * written, never from the store.
 */
import { request } from 'node:http'
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer, type StartServerOptions } from '../../../src/adapters/http/node.js'
import { PriceStore } from '../../../src/index.js'
import { toExactJson } from '../../../src/http.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../../src/testing/records.js'
import { connectWs, type ServerMessage, type WsClient } from './ws-client.js'

const open: { close(): Promise<void> }[] = []

afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

async function setup(options: Partial<StartServerOptions> = {}): Promise<{ store: PriceStore; server: RunningServer; url: string }> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  open.push(store)
  const server = await startServer({ store, ...options })
  open.push(server)
  return { store, server, url: `${server.url.replace('http', 'ws')}${options.basePath ?? ''}/ws` }
}

async function client(url: string): Promise<WsClient> {
  const ws = await connectWs(url)
  open.push(ws)
  return ws
}

function batch(symbol: string, from: number, count: number): InputRecord[] {
  return Array.from({ length: count }, (_, i) => makeRecord({ symbol, timestamp: T0 + (from + i) * 1000 }))
}

/** The records as an update carries them: as written, plus the provider's key, exactly as `/prices` serialises them. */
function sent(records: readonly InputRecord[]): unknown {
  return JSON.parse(`[${records.map((record) => toExactJson({ ...record, providerPublicKey: TEST_PROVIDER.publicKey })).join(',')}]`)
}

/** A request over `node:http` (fetch refuses `Upgrade` headers): GET, or POST with `body`. */
function plainRequest(url: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: body === undefined ? 'GET' : 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on('error', reject).end(body)
  })
}

/** Writes `records` and gives the commit's position. */
async function write(store: PriceStore, records: InputRecord[]): Promise<number> {
  await store.putMany(records)
  return store.position
}

describe('/ws subscriptions', () => {
  it('subscribes, lists unknown symbols, and sends each commit with its position as eventId', async () => {
    const { store, url } = await setup()
    await write(store, batch('BTC', 0, 2))
    const start = store.position
    const ws = await client(url)
    ws.send({ type: 'subscribe', id: 'a', symbols: ['BTC', 'NOPE'] })
    expect(await ws.next()).toEqual({
      type: 'subscribed', id: 'a', symbols: ['BTC', 'NOPE'], unknown: ['NOPE'], channel: 'real_time', eventId: String(start), position: start,
    })
    const btc = batch('BTC', 2, 3)
    const first = await write(store, btc)
    await write(store, batch('ETH', 0, 2)) // not followed
    const eth = batch('BTC', 5, 1)
    const second = await write(store, eth)
    expect(await ws.next()).toEqual({ type: 'prices', id: 'a', eventId: String(first), position: first, records: sent(btc) })
    expect(await ws.next()).toEqual({ type: 'prices', id: 'a', eventId: String(second), position: second, records: sent(eth) })
  })

  it('changes what it follows without reconnecting: a second subscription, then unsubscribing a symbol ends the first', async () => {
    const { store, url } = await setup()
    const ws = await client(url)
    ws.send({ type: 'subscribe', id: 1, symbols: ['BTC'] })
    await ws.until('subscribed')
    ws.send({ type: 'subscribe', id: 2, symbols: ['ETH'], fields: ['symbol', 'value'] })
    await ws.until('subscribed')
    const eth = batch('ETH', 0, 1)
    const position = await write(store, [...batch('BTC', 0, 1), ...eth])
    const updates = [await ws.next(), await ws.next()].sort((a, b) => Number(a.id) - Number(b.id))
    expect(updates.map((update) => [update.id, update.position])).toEqual([[1, position], [2, position]])
    expect(updates[1]?.records).toEqual([{ symbol: 'ETH', value: eth[0]?.value }])
    ws.send({ type: 'unsubscribe', symbols: ['BTC'] })
    expect(await ws.next()).toEqual({ type: 'unsubscribed', id: null, symbols: ['BTC'], ended: [1] })
    const later = await write(store, [...batch('BTC', 1, 1), ...batch('ETH', 1, 1)])
    const update = await ws.next()
    expect([update.id, update.position]).toEqual([2, later])
    ws.send({ type: 'unsubscribe', id: 2 })
    expect(await ws.next()).toEqual({ type: 'unsubscribed', id: 2, ended: [2] })
  })

  it('replaces a subscription of the same id, going on after its last position: no gap, no duplicate', async () => {
    const { store, url } = await setup()
    const ws = await client(url)
    ws.send({ type: 'subscribe', symbols: ['BTC'] })
    await ws.until('subscribed')
    const p1 = await write(store, batch('BTC', 0, 1))
    expect((await ws.next()).position).toBe(p1)
    // Written before the replacement is asked for: it reaches the new subscription, once.
    const before = batch('BTC', 1, 1)
    const p2 = await write(store, before)
    expect((await ws.next()).position).toBe(p2)
    ws.send({ type: 'subscribe', symbols: ['BTC', 'ETH'] })
    const subscribed = await ws.next()
    expect(subscribed).toMatchObject({ type: 'subscribed', id: null, eventId: String(p2), position: p2 })
    const both = [...batch('BTC', 2, 1), ...batch('ETH', 0, 1)]
    const p3 = await write(store, both)
    expect(await ws.next()).toEqual({ type: 'prices', id: null, eventId: String(p3), position: p3, records: sent(both) })
  })

  it('resumes after an eventId: exactly the records written since, then the live ones', async () => {
    const { store, url } = await setup()
    const written: { position: number; records: InputRecord[] }[] = []
    for (let i = 0; i < 6; i++) {
      const records = [...batch('BTC', i * 2, 2), ...batch('ETH', i, 1)]
      written.push({ position: await write(store, records), records })
    }
    const resumeAfter = written[2]!.position
    const ws = await client(url)
    ws.send({ type: 'subscribe', id: 'r', symbols: ['BTC'], after: String(resumeAfter) })
    expect(await ws.next()).toMatchObject({ type: 'subscribed', eventId: String(resumeAfter), position: resumeAfter })
    const live = batch('BTC', 100, 1)
    written.push({ position: await write(store, live), records: live })
    const expected = written.filter(({ position }) => position > resumeAfter)
      .map(({ position, records }) => ({ type: 'prices', id: 'r', eventId: String(position), position, records: sent(records.filter((r) => r.symbol === 'BTC')) }))
    const got: ServerMessage[] = []
    while (got.length < expected.length) {
      const message = await ws.next()
      if (message.type !== 'progress') got.push(message)
    }
    expect(got).toEqual(expected)
  })

  it('tells a reset the way the stream does: a position past the newest commit is unknown', async () => {
    const { store, url } = await setup()
    const head = await write(store, batch('BTC', 0, 1))
    const ws = await client(url)
    ws.send({ type: 'subscribe', id: 'x', symbols: ['BTC'], after: head + 50 })
    await ws.until('subscribed')
    expect(await ws.next()).toEqual({ type: 'reset', id: 'x', eventId: String(head), reason: 'unknown', requested: head + 50, position: head })
  })

  it('answers bad messages with coded errors and keeps the connection', async () => {
    const { url } = await setup()
    const ws = await client(url)
    const errors: [unknown, string][] = [
      ['{not json', 'PRICE_WS_BAD_MESSAGE'],
      ['[1,2]', 'PRICE_WS_BAD_MESSAGE'],
      [{ type: 'dance' }, 'PRICE_WS_BAD_MESSAGE'],
      [{ type: 'subscribe' }, 'PRICE_WS_BAD_MESSAGE'],
      [{ type: 'subscribe', symbols: ['BTC'], channel: 'fixed_rate@5ms' }, 'PRICE_WS_BAD_MESSAGE'],
      [{ type: 'subscribe', symbols: ['BTC'], fields: ['nope'] }, 'PRICE_INVALID_QUERY'],
      [{ type: 'subscribe', symbols: ['BTC'], after: 'soon' }, 'PRICE_INVALID_QUERY'],
      [{ type: 'subscribe', id: 'bad', symbols: ['no spaces allowed ?'] }, 'PRICE_INVALID_SYMBOL'],
      [{ type: 'unsubscribe' }, 'PRICE_WS_BAD_MESSAGE'],
    ]
    for (const [message, code] of errors) {
      ws.send(message)
      const reply = await ws.next()
      expect(reply, JSON.stringify(message)).toMatchObject({ type: 'error', code })
      expect(typeof reply.message).toBe('string')
    }
    ws.socket.send(Buffer.from('{}'), { binary: true })
    expect(await ws.next()).toMatchObject({ type: 'error', code: 'PRICE_WS_BAD_MESSAGE' })
    ws.send({ type: 'subscribe', id: 'ok', symbols: ['BTC'] })
    expect(await ws.next()).toMatchObject({ type: 'subscribed', id: 'ok' })
  })

  it('serves under the base path, and answers other upgrades as plain requests', async () => {
    const { store, server, url } = await setup({ basePath: '/v1' })
    await write(store, batch('BTC', 0, 1))
    const ws = await client(url)
    ws.send({ type: 'subscribe', symbols: ['BTC'] })
    expect(await ws.next()).toMatchObject({ type: 'subscribed' })
    // An h2c upgrade (curl --http2 on http://) is answered over HTTP/1.1 as before.
    const upgrade = { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': '' }
    const answer = await plainRequest(`${server.url}/v1/prices?symbol=BTC`, upgrade)
    expect(answer.status).toBe(200)
    expect((JSON.parse(answer.body) as unknown[]).length).toBe(1)
    // With a body: read as without the upgrade.
    const body = JSON.stringify({ symbols: ['BTC'], times: [T0 + 5_000] })
    const batchAnswer = await plainRequest(`${server.url}/v1/prices/batch`, { ...upgrade, 'content-type': 'application/json' }, body)
    expect(batchAnswer.status).toBe(200)
    expect(batchAnswer.body).toContain('"BTC"')
    await expect(connectWs(`${server.url.replace('http', 'ws')}/ws`)).rejects.toThrow(/404/)
  })
})
