/**
 * The live stream resumes with no gap and no duplicate (issue 11): a writer
 * commits batches into a store served by startServer while real
 * `EventSource` clients (the `eventsource` package, which reconnects by
 * itself with `Last-Event-ID`) are disconnected at random points: closed
 * and reopened with `after=` or with the header, or cut on the server side,
 * also in the middle of a large event. Each client's events, joined, must
 * be exactly the commits written (filtered by its symbols), in commit
 * order, each once, as the model of what was written says.
 */
import type { Socket } from 'node:net'
import { EventSource } from 'eventsource'
import { MemoryLevel } from 'memory-level'
import { afterEach, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { PriceStore } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../src/testing/records.js'
import { prng } from './crash-plan.js'

const SYMBOLS = ['BTC', 'ETH', 'AR'] as const
const COMMITS = 160

const open: { close(): unknown }[] = []

afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

interface Commit {
  readonly position: number
  readonly records: readonly Record<string, unknown>[]
}

/** One client: an EventSource it replaces now and then, and every prices event it took, in order. */
class ResumingClient {
  readonly received: Commit[] = []
  readonly unexpected: string[] = []
  reconnects = 0
  #lastId: string | undefined
  #source: EventSource | undefined
  readonly #url: string

  constructor(
    base: string,
    readonly tag: string,
    readonly symbols: readonly string[] | undefined,
  ) {
    // after=0 stays in the URL: every reconnect by the EventSource itself must be carried by its Last-Event-ID.
    this.#url = `${base}/prices/stream?after=0&client=${tag}${symbols === undefined ? '' : `&symbols=${symbols.join(',')}`}`
    this.#connect(this.#url)
  }

  /** Closes the stream and opens a new one after the last event taken: with `after=`, or with the header. */
  reopen(how: 'after' | 'header'): void {
    this.#source?.close()
    this.reconnects++
    if (how === 'after') {
      this.#connect(this.#url.replace('after=0', `after=${this.#lastId ?? 0}`))
      return
    }
    const lastId = this.#lastId
    // Once the source has an id of its own (it took an event), its own header, sent on its reconnects, wins.
    this.#connect(this.#url, lastId === undefined ? undefined : (input, init) => fetch(input, { ...init, headers: { 'Last-Event-ID': lastId, ...init?.headers } }))
  }

  close(): void {
    this.#source?.close()
  }

  #connect(url: string, fetchWith?: typeof fetch): void {
    const source = new EventSource(url, fetchWith === undefined ? {} : { fetch: fetchWith })
    this.#source = source
    // Events the replaced source still dispatches are not taken: the next connection replays them.
    const current = (): boolean => this.#source === source
    source.addEventListener('prices', (event) => {
      if (!current()) return
      const data = JSON.parse(event.data) as { position: number; records: Record<string, unknown>[] }
      if (String(data.position) !== event.lastEventId) this.unexpected.push(`prices ${data.position} with id ${event.lastEventId}`)
      this.received.push({ position: data.position, records: data.records })
      this.#lastId = event.lastEventId
    })
    for (const name of ['ready', 'progress']) {
      source.addEventListener(name, (event) => {
        if (current()) this.#lastId = event.lastEventId
      })
    }
    for (const name of ['reset', 'overflow', 'end', 'message']) {
      source.addEventListener(name, (event) => {
        if (current()) this.unexpected.push(`${name}: ${event.data}`)
      })
    }
  }
}

it('every client receives exactly the commits written for its symbols, whatever the disconnects', async () => {
  const seed = Number(process.env.STREAM_SEED ?? Date.now() % 1_000_000)
  const draw = prng(seed)
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  open.push(store)
  const server: RunningServer = await startServer({ store, streamRetryMs: 5 })
  open.push(server)
  // Each client's current connection, found by the tag in its URL (an unknown parameter the stream ignores).
  const sockets = new Map<string, Socket>()
  server.server.on('request', (req) => {
    const tag = new URL(req.url ?? '', 'http://x').searchParams.get('client')
    if (tag !== null) sockets.set(tag, req.socket)
  })
  const clients = [new ResumingClient(server.url, 'all', undefined), new ResumingClient(server.url, 'eth', ['ETH']), new ResumingClient(server.url, 'btc-ar', ['BTC', 'AR'])]
  open.push(...clients)

  const model: Commit[] = []
  let timestamp = 0
  let cuts = 0
  // Disconnects come every few commits, each a random 0-10 ms later, so they fall at random points between and
  // inside commits; their number and kinds depend on the commits, not on how fast this machine writes them.
  const disconnects: Promise<void>[] = []
  const disconnect = (client: ResumingClient, kind: number): void => {
    if (kind === 0) client.reopen('after')
    else if (kind === 1) client.reopen('header')
    else {
      const socket = sockets.get(client.tag)
      if (socket !== undefined && !socket.destroyed) cuts++
      socket?.destroy()
    }
  }
  for (let i = 0; i < COMMITS; i++) {
    // Mostly small batches; now and then one large enough to be written in many pieces, so cuts fall inside events.
    const size = draw() < 0.1 ? 300 + Math.floor(draw() * 300) : 1 + Math.floor(draw() * 20)
    const records: InputRecord[] = Array.from({ length: size }, () =>
      makeRecord({ symbol: SYMBOLS[Math.floor(draw() * SYMBOLS.length)] as string, timestamp: T0 + 1000 * timestamp++ }),
    )
    await store.putMany(records)
    model.push({ position: store.position, records: records.map((record) => ({ ...record, providerPublicKey: TEST_PROVIDER.publicKey })) })
    if (i % 5 === 2) {
      const client = clients[Math.floor(draw() * clients.length)] as ResumingClient
      const kind = Math.floor(i / 5) % 3
      const delay = draw() * 10
      disconnects.push(new Promise((resolve) => setTimeout(() => resolve(disconnect(client, kind)), delay)))
    }
    if (draw() < 0.5) await new Promise((resolve) => setTimeout(resolve, draw() * 4))
  }
  await Promise.all(disconnects)

  for (const client of clients) {
    const expected = model
      .map(({ position, records }) => ({ position, records: records.filter((record) => client.symbols === undefined || client.symbols.includes(record.symbol as string)) }))
      .filter(({ records }) => records.length > 0)
    const last = expected.at(-1)?.position
    for (let i = 0; i < 4_000 && client.received.at(-1)?.position !== last; i++) await new Promise((resolve) => setTimeout(resolve, 5))
    const context = `seed ${seed}, client ${client.tag}`
    expect(client.unexpected, context).toEqual([])
    expect(client.received.map((commit) => commit.position), context).toEqual(expected.map((commit) => commit.position))
    expect(client.received, context).toEqual(expected)
  }
  // The run did disconnect the clients, in every way.
  expect(clients.reduce((sum, client) => sum + client.reconnects, 0)).toBeGreaterThan(5)
  expect(cuts).toBeGreaterThan(2)
}, 60_000)
