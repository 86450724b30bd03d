/**
 * The live stream's memory bound (issue 11): a client that reads nothing
 * holds at most the socket's bound of events and its watch's `maxPending`
 * records, and is cut after the stall time; a client that falls too far
 * behind gets an `overflow` event after everything up to its position, and
 * resuming from there gives the rest. The store is wrapped only to count
 * what the stream takes from its watch; expected records come from the
 * records written.
 */
import { connect, type Socket } from 'node:net'
import { MemoryLevel } from 'memory-level'
import { afterEach, expect, it } from 'vitest'
import { startServer, type StartServerOptions } from '../../src/adapters/http/node.js'
import { PriceStore, type WatchIterator, type WatchOptions } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../src/testing/records.js'
import { openSse } from '../support/http/sse-client.js'

/** Enough records that their events overflow the kernel's socket buffers on both sides many times (about 28 MB). */
const COMMITS = 40
const PER_COMMIT = 500

const open: { close(): unknown }[] = []

afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close()
})

/** The store, with what the stream takes from each watch counted. */
function counting(store: PriceStore) {
  const seen = { options: [] as WatchOptions[], pulledRecords: 0, returned: 0 }
  const watchable = {
    query: store.query.bind(store),
    get position() {
      return store.position
    },
    watch(options: WatchOptions): WatchIterator {
      seen.options.push(options)
      const inner = store.watch(options)
      const wrapped: WatchIterator = {
        [Symbol.asyncIterator]: () => wrapped,
        async next() {
          const step = await inner.next()
          if (step.done !== true && step.value.type === 'records') seen.pulledRecords += step.value.records.length
          return step
        },
        async return() {
          seen.returned++
          return inner.return()
        },
      }
      return wrapped
    },
  }
  return { watchable, seen }
}

async function setup(options: Partial<StartServerOptions>) {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  open.push(store)
  const { watchable, seen } = counting(store)
  const server = await startServer({ store: watchable, ...options })
  open.push(server)
  return { store, server, seen }
}

function commits(): InputRecord[][] {
  return Array.from({ length: COMMITS }, (_, c) =>
    Array.from({ length: PER_COMMIT }, (_, i) => makeRecord({ symbol: i % 2 === 0 ? 'BTC' : 'ETH', timestamp: T0 + (c * PER_COMMIT + i) * 1000 })),
  )
}

/** Opens a raw connection, sends the stream request, and reads nothing until `read()` is called. */
async function paused(url: string): Promise<{ socket: Socket; read(): Promise<string> }> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  socket.pause()
  socket.write(`GET /prices/stream?after=0 HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\n\r\n`)
  return {
    socket,
    read() {
      const chunks: Buffer[] = []
      return new Promise((resolve) => {
        socket.on('data', (chunk: Buffer) => chunks.push(chunk))
        socket.on('error', () => {})
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
        socket.resume()
      })
    },
  }
}

/** The SSE body of a raw answer, de-chunked when it was sent chunked. */
function eventsOf(raw: string): { event: string; id?: string; data: string }[] {
  const headEnd = raw.indexOf('\r\n\r\n')
  const head = raw.slice(0, headEnd)
  let body = raw.slice(headEnd + 4)
  if (/transfer-encoding: chunked/i.test(head)) {
    let out = ''
    for (let at = 0; ; ) {
      const line = body.indexOf('\r\n', at)
      if (line < 0) break
      const size = parseInt(body.slice(at, line), 16)
      if (!(size > 0)) break
      // Sizes count bytes: slice the bytes, not the characters (the body is ASCII JSON here).
      out += body.slice(line + 2, line + 2 + size)
      at = line + 2 + size + 2
    }
    body = out
  }
  const events: { event: string; id?: string; data: string }[] = []
  for (const block of body.split('\n\n')) {
    const fields = Object.fromEntries(block.split('\n').filter((line) => line !== '' && !line.startsWith(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]))
    if (fields.data !== undefined) events.push({ event: fields.event ?? 'message', ...(fields.id === undefined ? {} : { id: fields.id }), data: fields.data })
  }
  return events
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 6_000; i++) {
    if (check()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`timed out waiting until ${what}`)
}

it('a client that reads nothing holds a bounded share: the stream stops taking commits, then cuts it after the stall time', async () => {
  const { store, server, seen } = await setup({ streamMaxPending: 300, streamMaxQueuedBytes: 64 * 1024, streamStallMs: 300 })
  const client = await paused(server.url)
  open.push({ close: () => client.socket.destroy() })
  await until(() => seen.options.length === 1, 'the stream watches')
  expect(seen.options[0]?.maxPending).toBe(300)
  const written = commits()
  for (const records of written) await store.putMany(records)
  // The stream lets its watch go once it has cut the client.
  await until(() => seen.returned > 0, 'the stream ends')
  const total = COMMITS * PER_COMMIT
  // What it took from the watch is what the sockets' buffers hold, far from all that was written.
  expect(seen.pulledRecords).toBeLessThan(total / 2)
  const events = eventsOf(await client.read())
  // Whatever arrived is whole commits in order, then (if it got through) the final overflow event.
  const prices = events.filter((event) => event.event === 'prices')
  expect(prices.map((event) => Number(event.id))).toEqual(prices.map((_, i) => i + 1))
  const last = events.at(-1)
  // Stalled when the sockets stayed full; pending when the kernel took a little more and the stream found its watch had overflowed.
  if (last?.event === 'overflow') expect([{ reason: 'stalled', position: prices.length }, { reason: 'pending', position: prices.length }]).toContainEqual(JSON.parse(last.data))
}, 60_000)

it('a client too far behind gets every commit up to a position, then an overflow event; resuming there gives the rest', async () => {
  const { store, server, seen } = await setup({ streamMaxPending: 300, streamMaxQueuedBytes: 64 * 1024, streamStallMs: 60_000 })
  const client = await paused(server.url)
  open.push({ close: () => client.socket.destroy() })
  // Live from here: commits written before the stream began would be replayed from the journal, as fast as the client reads.
  await until(() => seen.options.length === 1, 'the stream watches')
  const written = commits()
  for (const records of written) await store.putMany(records)
  const events = eventsOf(await client.read())
  const prices = events.filter((event) => event.event === 'prices')
  const overflow = events.at(-1)
  expect(overflow?.event).toBe('overflow')
  const position = prices.length
  expect(position).toBeLessThan(COMMITS)
  expect(overflow).toEqual({ event: 'overflow', id: String(position), data: `{"reason":"pending","position":${position}}` })
  const returned = (records: readonly InputRecord[]) => records.map((record) => ({ ...record, providerPublicKey: TEST_PROVIDER.publicKey }))
  expect(prices.map((event) => JSON.parse(event.data))).toEqual(written.slice(0, position).map((records, i) => ({ position: i + 1, records: returned(records) })))
  // The rest, replayed from the journal.
  const rest = await openSse(`${server.url}/prices/stream`, { 'last-event-id': String(position) })
  open.push(rest)
  const resumed: unknown[] = []
  while (resumed.length < COMMITS - position) {
    const event = await rest.next()
    if (event?.event === 'prices') resumed.push(JSON.parse(event.data))
    if (event === undefined) break
  }
  expect(resumed).toEqual(written.slice(position).map((records, i) => ({ position: position + i + 1, records: returned(records) })))
}, 60_000)
