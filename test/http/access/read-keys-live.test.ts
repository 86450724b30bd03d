/**
 * Read keys on the live feeds: the Server-Sent-Events stream and WebSocket
 * subscriptions keep a reader to its symbols, fields and delay; a delayed
 * feed holds each commit until its newest record is old enough, on a test
 * clock, never by sleeps.
 */
import { createHash } from 'node:crypto'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ReadKeysOptions } from '../../../src/adapters/http/access/read-keys.js'
import { delayedWatch, type DelayClock } from '../../../src/adapters/http/live/delayed-watch.js'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { WatchItem, WatchIterator } from '../../../src/store/services/watch/watch-options.js'
import { PriceStore, type PriceRecord } from '../../../src/index.js'
import { TEST_PROVIDER, makeRecord } from '../../../src/testing/records.js'
import { openSse, takeEvents } from '../../support/http/sse-client.js'
import { connectWs } from '../ws/ws-client.js'

const sha = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex')
const HOUR = 3_600_000
const now = Date.now()
const KEYS = { carol: 'carol-live-key', dave: 'dave-live-key' }
const readKeys: ReadKeysOptions = {
  anonymous: 'closed',
  keys: [
    { id: 'carol', sha256: sha(KEYS.carol), delaySeconds: 600 },
    { id: 'dave', sha256: sha(KEYS.dave), symbols: ['BTC'], fields: '-signature' },
  ],
}
// One commit each: an old BTC record, an old ETH record, then a fresh BTC record (younger than carol's delay).
const commits = [
  [makeRecord({ symbol: 'BTC', timestamp: now - 2 * HOUR, value: 1 })],
  [makeRecord({ symbol: 'ETH', timestamp: now - 2 * HOUR, value: 2 })],
  [makeRecord({ symbol: 'BTC', timestamp: now, value: 3 })],
]

let store: PriceStore
let server: RunningServer
beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  for (const batch of commits) await store.putMany(batch)
  server = await startServer({ store, readKeys })
})
afterAll(async () => {
  await server?.close()
  await store?.close()
})

const ws = (): string => server.url.replace(/^http/, 'ws') + '/ws'

describe('read keys on the live stream', () => {
  it('replays to a delayed reader the commits whose records are old enough', async () => {
    const sse = await openSse(`${server.url}/prices/stream?symbols=BTC&after=0`, { authorization: `Bearer ${KEYS.carol}` })
    try {
      expect(sse.response.status).toBe(200)
      const [ready, first] = await takeEvents(sse, 2)
      expect(ready?.event).toBe('ready')
      expect(first?.event).toBe('prices')
      expect(JSON.parse(first?.data ?? '{}').records.map((record: PriceRecord) => record.value)).toEqual([1])
    } finally {
      await sse.close()
    }
  })

  it('keeps a reader to its symbols (403 for another) and hides its masked fields', async () => {
    const refused = await openSse(`${server.url}/prices/stream?symbols=ETH`, { 'x-api-key': KEYS.dave })
    expect(refused.response.status).toBe(403)
    await refused.close()
    // Asking for every symbol gives its own: ETH's commit is not sent.
    const sse = await openSse(`${server.url}/prices/stream?after=0`, { 'x-api-key': KEYS.dave })
    try {
      const [, first, second] = await takeEvents(sse, 3)
      const records = [first, second].flatMap((event) => JSON.parse(event?.data ?? '{}').records as PriceRecord[])
      expect(records.map((record) => [record.symbol, record.value])).toEqual([['BTC', 1], ['BTC', 3]])
      for (const record of records) expect(record).not.toHaveProperty('signature')
    } finally {
      await sse.close()
    }
  })

  it('refuses a stream without a key when anonymous readers are closed', async () => {
    const sse = await openSse(`${server.url}/prices/stream`)
    expect(sse.response.status).toBe(401)
    await sse.close()
  })
})

describe('read keys on WebSocket subscriptions', () => {
  it('refuses a handshake without a known key with its 401', async () => {
    await expect(connectWs(ws())).rejects.toThrow('handshake answered 401')
    await expect(connectWs(ws(), { headers: { 'x-api-key': 'nobody' } })).rejects.toThrow('handshake answered 401')
  })

  it('refuses a subscription to a symbol outside the key, and sends its own without masked fields', async () => {
    const client = await connectWs(ws(), { headers: { 'x-api-key': KEYS.dave } })
    try {
      client.send({ type: 'subscribe', id: 'x', symbols: ['ETH'] })
      const [error] = await client.until('error')
      expect(error).toMatchObject({ type: 'error', id: 'x', code: 'PRICE_WS_FORBIDDEN' })
      client.send({ type: 'subscribe', id: 'y', symbols: ['BTC'], after: 0 })
      await client.until('subscribed')
      const update = await client.next()
      expect(update.type).toBe('prices')
      const records = update.records as PriceRecord[]
      expect(records.map((record) => record.value)).toEqual([1])
      expect(records[0]).not.toHaveProperty('signature')
    } finally {
      await client.close()
    }
  })
})

/** A clock whose time moves only when the test says, running the timers due. */
class TestClock implements DelayClock {
  time = 0
  readonly timers = new Map<number, { at: number; run: () => void }>()
  #next = 0
  now(): number { return this.time }
  setTimeout(run: () => void, ms: number): unknown {
    this.timers.set(++this.#next, { at: this.time + ms, run })
    return this.#next
  }
  clearTimeout(timer: unknown): void { this.timers.delete(timer as number) }
  advance(ms: number): void {
    this.time += ms
    for (const [id, timer] of [...this.timers]) if (timer.at <= this.time) {
      this.timers.delete(id)
      timer.run()
    }
  }
}

/** A watch over fixed items. */
function fixedWatch(items: WatchItem[]): WatchIterator & { returned: boolean } {
  const watch = {
    returned: false,
    next: async () => (items.length === 0 ? { done: true as const, value: undefined } : { done: false as const, value: items.shift() as WatchItem }),
    return: async () => {
      watch.returned = true
      return { done: true as const, value: undefined }
    },
    [Symbol.asyncIterator]: () => watch,
  }
  return watch as never
}

const commit = (position: number, ...timestamps: number[]): WatchItem =>
  ({ type: 'records', position, records: timestamps.map((timestamp) => makeRecord({ symbol: 'BTC', timestamp })) }) as unknown as WatchItem

describe('delayedWatch', () => {
  it('hands on a commit once its newest record is as old as the delay, and those after it in order', async () => {
    const clock = new TestClock()
    clock.time = 10_000
    const watch = delayedWatch(fixedWatch([commit(1, 2_000), commit(2, 9_000, 10_000), commit(3, 1_000)]), 5_000, clock)
    // Old enough already: at once.
    expect(await watch.next()).toMatchObject({ value: { position: 1 } })
    let second: unknown
    const pending = watch.next().then((step) => (second = step))
    await new Promise((resolve) => setImmediate(resolve))
    expect(second).toBeUndefined()
    clock.advance(4_999)
    await new Promise((resolve) => setImmediate(resolve))
    expect(second).toBeUndefined()
    clock.advance(1)
    await pending
    expect(second).toMatchObject({ value: { position: 2 } })
    // The old commit behind it goes at once.
    expect(await watch.next()).toMatchObject({ value: { position: 3 } })
  })

  it('ends a wait at once on return, and returns the watch behind it', async () => {
    const clock = new TestClock()
    const inner = fixedWatch([commit(1, 100)])
    const watch = delayedWatch(inner, 1_000, clock)
    const pending = watch.next()
    await new Promise((resolve) => setImmediate(resolve))
    await watch.return()
    expect(await pending).toEqual({ done: true, value: undefined })
    expect(inner.returned).toBe(true)
    expect(clock.timers.size).toBe(0)
  })
})
