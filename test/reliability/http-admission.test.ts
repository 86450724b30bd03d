/**
 * Serving at load (issue 12): queries are admitted by their cost, estimated
 * by the store from its own counts, and large answers are streamed with
 * backpressure. A real PriceStore (memory-level, 30 hours of two tokens at
 * 10 s) behind `startServer`; its heavy reads are held by the test where a
 * test needs the gate full. The test waits on the server's own counters,
 * never on a fixed sleep; nothing asserts on how long anything took.
 */
import * as http from 'node:http'
import { connect, type Socket } from 'node:net'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PricesQueryable } from '../../src/adapters/http/prices/answer.js'
import { startServer, type RunningServer, type StartServerOptions } from '../../src/adapters/http/node.js'
import { DEMO_TOKENS, generateDemoRecords } from '../../src/demo/demo-data.js'
import { JSON_PIECE_CHARS } from '../../src/engine/answer-json.js'
import { MAX_QUEUED_CHARS } from '../../src/adapters/http/core/streamed-body.js'
import type { DeferredAnswer } from '../../src/engine/deferred-answer.js'
import type { QueryPlan } from '../../src/engine/query-plan.js'
import { PriceStore, type PriceAnswer } from '../../src/index.js'
import { answerToJson } from '../../src/http.js'
import { PROVIDER } from '../support/http/demo-server.js'

const END = Date.UTC(2024, 5, 1)
const HOURS = 30
const START = END - HOURS * 3_600_000
const TOKENS = DEMO_TOKENS.filter((token) => token.symbol === 'BTC' || token.symbol === 'ETH')
/** 10,000 records of BTC, one every 10 s: the largest range the default cap allows. */
const MAX_RANGE = `symbol=BTC&fromTimestamp=${START}&toTimestamp=${START + 10_000 * 10_000 - 1}&interval=10000`
/** 1,440 records: heavy, but far cheaper than MAX_RANGE. */
const DAY_AT_MINUTES = `symbol=ETH&fromTimestamp=${START}&toTimestamp=${START + 86_400_000 - 1}&interval=60000`

let store: PriceStore

beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
  await store.putMany(generateDemoRecords({ providerId: PROVIDER.id, end: END, durationMs: HOURS * 3_600_000, tokens: TOKENS }))
}, 60_000)

afterAll(async () => {
  await store.close()
})

/** The store, with each heavy read (by its cost, as the gate weighs it) held until the test lets it go. */
function holding(inner: PriceStore) {
  const held: { label: string; go(): void }[] = []
  const queryable: PricesQueryable = {
    plan: (params) => inner.plan(params),
    cost: (plan) => inner.cost(plan),
    run: (plan) => inner.run(plan),
    query: (params) => inner.query(params),
    runDeferred(plan: QueryPlan): Promise<PriceAnswer | DeferredAnswer> {
      if (inner.cost(plan) <= 500) return inner.runDeferred(plan)
      return new Promise((resolve, reject) => {
        held.push({ label: labelOf(plan), go: () => inner.runDeferred(plan).then(resolve, reject) })
      })
    },
  }
  return { queryable, held }
}

/** A short name for a held plan, e.g. `ETH@60000` for a range of ETH at one minute. */
function labelOf(plan: QueryPlan): string {
  const query = plan.query
  return query.kind === 'range' ? `${query.symbol}@${query.interval}` : query.kind
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    if (check()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`timed out waiting until ${what}`)
}

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

function get(server: RunningServer, query: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http.get(`${server.url}/prices?${query}`, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    }).on('error', reject)
  })
}

async function expectedJson(query: string): Promise<string> {
  return answerToJson(await store.query(new URLSearchParams(query)))
}

async function withServer(queryable: PricesQueryable, options: Partial<StartServerOptions>, test: (server: RunningServer) => Promise<void>): Promise<void> {
  const server = await startServer({ store: queryable, ...options })
  try {
    await test(server)
  } finally {
    await server.close()
  }
}

describe('admission by cost', () => {
  it('answers cheap queries at once while the gate is full of expensive ones, then the expensive ones', async () => {
    const { queryable, held } = holding(store)
    await withServer(queryable, { maxConcurrentQueries: 1, maxQueuedQueries: 3 }, async (server) => {
      const expensive = [MAX_RANGE, MAX_RANGE, DAY_AT_MINUTES, MAX_RANGE].map((query) => get(server, query))
      await until(() => held.length === 1 && server.queries().queued === 3, 'one expensive query runs and three wait')
      // Each of these waited behind the 10,000-record ranges before costs were known:
      // "all symbols" (plan cost unbounded) and ranges of a day at 10 min and 1 h (no limit).
      const cheap = [
        'symbol=BTC', 'symbol=ETH&limit=100', `symbol=BTC&toTimestamp=${START + 3_600_000}`, '', 'symbols=BTC,ETH',
        `symbol=BTC&fromTimestamp=${START}&toTimestamp=${START + 86_400_000 - 1}&interval=600000`,
        `symbol=ETH&fromTimestamp=${START}&toTimestamp=${START + 86_400_000 - 1}&interval=3600000`,
      ]
      for (const query of cheap) {
        const answer = await get(server, query)
        expect(answer.status, query).toBe(200)
        expect(answer.body, query).toBe(await expectedJson(query))
      }
      expect(server.queries()).toMatchObject({ running: 1, queued: 3, refused: 0 })
      // The line is ordered by cost as time: the day at one minute passes the 10,000-record range queued before it.
      held[0]!.go()
      await until(() => held.length === 2, 'the next query starts')
      expect(held[1]!.label).toBe('ETH@60000')
      for (let next = 1; next < 4; next++) {
        held[next]!.go()
        if (next < 3) await until(() => held.length === next + 2, 'the next query starts')
      }
      const answers = await Promise.all(expensive)
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200])
      expect(answers[2]!.body).toBe(await expectedJson(DAY_AT_MINUTES))
      expect(answers[0]!.body).toBe(await expectedJson(MAX_RANGE))
    })
  }, 60_000)

  it('refuses a range sure to be over the cap at once, even when the line is full', async () => {
    // A cap of 100 records, so that the heads the store knows of (six an hour) already pass it.
    const capped = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER, limits: { maxRangePoints: 100 } })
    try {
      const records = [...generateDemoRecords({ providerId: PROVIDER.id, end: END, durationMs: HOURS * 3_600_000, tokens: TOKENS })]
      await capped.putMany(records)
      const { queryable, held } = holding(capped)
      // Heavy (a day of records read) but within the cap (100 returned).
      const heavy = `${DAY_AT_MINUTES}&limit=100`
      await withServer(queryable, { maxConcurrentQueries: 1, maxQueuedQueries: 0 }, async (server) => {
        const running = get(server, heavy)
        await until(() => held.length === 1, 'the gate is full')
        // 30 hours at 1 s: at least 180 ten-minute heads, each in a bucket of its own (the sealed hours' key columns
        // count every record's bucket), and at most the records the range holds.
        const range = `symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=1000`
        const refused = await get(server, range)
        expect(refused.status).toBe(400)
        const error = JSON.parse(refused.body).error as { code: string; message: string }
        expect(error.code).toBe('PRICE_RANGE_TOO_LARGE')
        const proven = Number(/at least (\d+) records/.exec(error.message)?.[1])
        expect(proven).toBeGreaterThanOrEqual(180)
        expect(proven).toBeLessThanOrEqual(records.filter((r) => r.symbol === 'BTC' && r.timestamp >= START && r.timestamp <= END).length)
        // A heavy query that fits the cap waits for the full gate instead: 503, not 400.
        const busy = await get(server, heavy)
        expect(busy.status).toBe(503)
        expect(held).toHaveLength(1)
        held[0]!.go()
        const answer = await running
        expect(answer.status).toBe(200)
        expect(answer.body).toBe(answerToJson(await capped.query(new URLSearchParams(heavy))))
      })
    } finally {
      await capped.close()
    }
  }, 60_000)
})

describe('streamed answers', () => {
  /** Sends a request on a raw socket and reads nothing until told to. */
  function stalledRequest(server: RunningServer, query: string): { socket: Socket; read(): Promise<string> } {
    const { port } = new URL(server.url)
    const socket = connect(Number(port), '127.0.0.1')
    socket.pause()
    socket.write(`GET /prices?${query} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    return {
      socket,
      read: () =>
        new Promise((resolve, reject) => {
          const chunks: Buffer[] = []
          socket.on('data', (chunk: Buffer) => chunks.push(chunk))
          socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')))
          socket.on('error', reject)
          socket.resume()
        }),
    }
  }

  it('a slow reader holds back its own answer, not the server: a bounded buffer, its slot given to the next query', async () => {
    const responses: http.ServerResponse[] = []
    const server = await startServer({ store, maxConcurrentQueries: 1 })
    // Watch the server's side of each connection: what it has queued and not yet handed to the kernel.
    server.server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => responses.push(res))
    try {
      const slow = stalledRequest(server, MAX_RANGE)
      await until(() => server.queries().sending === 1, 'the answer waits for its client')
      const res = responses[0]!
      const whole = Buffer.byteLength(await expectedJson(MAX_RANGE))
      // Held back: the server queues at most a few pieces, and has sent far less than the answer.
      expect(res.writableLength).toBeLessThan(MAX_QUEUED_CHARS + JSON_PIECE_CHARS + 1024)
      expect((res.socket?.bytesWritten ?? 0) + res.writableLength).toBeLessThan(whole)
      // Its slot went to the next heavy query, which is answered while the slow one waits.
      expect(server.queries().running).toBe(0)
      const next = await get(server, DAY_AT_MINUTES)
      expect(next.status).toBe(200)
      expect(server.queries().sending).toBe(1)
      // Once read, the answer is whole and exact.
      const raw = await slow.read()
      const [head, ...rest] = raw.split('\r\n\r\n')
      expect(head).toMatch(/^HTTP\/1\.1 200/)
      expect(head).toMatch(/transfer-encoding: chunked/i)
      expect(dechunk(Buffer.from(rest.join('\r\n\r\n'), 'latin1')).toString('utf8')).toBe(await expectedJson(MAX_RANGE))
      await until(() => server.queries().sending === 0, 'the answer is done')
    } finally {
      await server.close()
    }
  }, 60_000)

  it('cuts a client that reads nothing for sendStallMs, and frees its place', async () => {
    const server = await startServer({ store, sendStallMs: 200 })
    try {
      const stalled = stalledRequest(server, MAX_RANGE)
      const closed = new Promise<void>((resolve) => stalled.socket.on('close', () => resolve()))
      await until(() => server.queries().sending === 1, 'the answer waits for its client')
      await until(() => server.queries().sending === 0, 'the stalled answer is dropped')
      stalled.socket.resume()
      await closed
      expect((await get(server, 'symbol=BTC')).status).toBe(200)
    } finally {
      await server.close()
    }
  }, 60_000)

  it('streams large answers chunked and small ones whole, with the same text as the library', async () => {
    await withServer(store, {}, async (server) => {
      for (const query of [MAX_RANGE, DAY_AT_MINUTES, 'symbol=BTC&limit=3000']) {
        const answer = await get(server, query)
        expect(answer.headers['transfer-encoding'], query).toBe('chunked')
        expect(answer.headers['content-length'], query).toBeUndefined()
        expect(answer.body, query).toBe(await expectedJson(query))
      }
      const small = await get(server, 'symbol=BTC&limit=256')
      expect(small.headers['content-length']).toBe(String(Buffer.byteLength(small.body)))
      expect(small.body).toBe(await expectedJson('symbol=BTC&limit=256'))
    })
  }, 60_000)
})

/** The body of a chunked HTTP/1.1 message. */
function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at)
    const size = parseInt(bytes.toString('latin1', at, lineEnd), 16)
    if (size === 0) return Buffer.concat(parts)
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}
