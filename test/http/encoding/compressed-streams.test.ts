/**
 * Streamed answers compressed as they stream (issue 23) keep what streamed
 * answers promised before: a client that reads slowly holds back its own
 * answer (the compressor stops taking input while the socket is full), one
 * that reads nothing is cut after the stall time, and the answer, once
 * read, decodes to the plain one. The answers are several MB compressed,
 * more than loopback's socket buffers hold for a client that reads nothing.
 */
import * as http from 'node:http'
import * as zlib from 'node:zlib'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { DEMO_TOKENS, generateDemoRecords } from '../../../src/demo/demo-data.js'
import { PriceStore } from '../../../src/index.js'
import { PROVIDER } from '../../support/http/demo-server.js'
import { rawRequest, splitChunked, stalledRequest, until } from './http-exchange.js'

const END = Date.UTC(2024, 5, 1)
const HOURS = 60
const START = END - HOURS * 3_600_000
/** 21,600 records of BTC: about 31 MB of JSON, 8 MB in gzip. */
const RANGE = `/prices?symbol=BTC&fromTimestamp=${START}&toTimestamp=${END}&interval=10000`
const EXPORT = '/prices/export'

let store: PriceStore

beforeAll(async () => {
  store = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER, limits: { maxRangePoints: 30_000 } })
  const tokens = DEMO_TOKENS.filter((token) => token.symbol === 'BTC' || token.symbol === 'ETH')
  // Unsigned: the sizes below are those of records with a random 344-character signature.
  await store.putMany(generateDemoRecords({ providerId: PROVIDER.id, end: END, durationMs: HOURS * 3_600_000, tokens, signed: false }))
}, 120_000)

afterAll(async () => {
  await store?.close()
})

/** A server whose responses are watched from its side; `full` holds each response a write found full (`write()` said false). */
async function watchedServer(options: { sendStallMs?: number; exportStallMs?: number; maxExports?: number }): Promise<{ server: RunningServer; responses: http.ServerResponse[]; full: Set<http.ServerResponse> }> {
  const server = await startServer({ store, ...options })
  const responses: http.ServerResponse[] = []
  const full = new Set<http.ServerResponse>()
  server.server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    responses.push(res)
    // Seen as it happens, not by polling: a response cut after its stall time is no longer full when a poll comes.
    const write = res.write.bind(res) as (...args: unknown[]) => boolean
    res.write = ((...args: unknown[]) => {
      const taken = write(...args)
      if (!taken) full.add(res)
      return taken
    }) as typeof res.write
  })
  return { server, responses, full }
}

describe.each([
  ['a /prices range', RANGE],
  ['an export', EXPORT],
] as const)('%s in gzip', (_name, target) => {
  it('a client that reads slowly holds back its own answer; once read, it decodes to the plain answer', async () => {
    const { server, responses } = await watchedServer({})
    try {
      const plain = await rawRequest(`${server.url}${target}`)
      const whole = (await rawRequest(`${server.url}${target}`, { 'accept-encoding': 'gzip' })).body.length
      const slow = stalledRequest(server.url, target, { 'accept-encoding': 'gzip' })
      await until(() => responses.length === 3 && responses[2]!.writableNeedDrain, 'the response is full')
      const res = responses[2]!
      // Held back: far less than the compressed answer is out or queued, though it could all be made at once.
      expect((res.socket?.bytesWritten ?? 0) + res.writableLength).toBeLessThan(whole * 0.8)
      const { head, body, complete } = splitChunked(await slow.read())
      expect(head).toMatch(/\r\ncontent-encoding: gzip\r\n/)
      expect(complete).toBe(true)
      expect(zlib.gunzipSync(body).equals(plain.body)).toBe(true)
    } finally {
      await server.close()
    }
  }, 60_000)

  it('a client that reads nothing is cut after the stall time, and its place is freed', async () => {
    const { server, responses, full } = await watchedServer({ sendStallMs: 300, exportStallMs: 300, maxExports: 1 })
    try {
      const stalled = stalledRequest(server.url, target, { 'accept-encoding': 'gzip' })
      await until(() => responses.length === 1 && responses[0]!.destroyed, 'the stalled answer is cut')
      // Cut because it stayed full: a write found it full before.
      expect(full.has(responses[0]!)).toBe(true)
      // Its place is free: a query and an export (one at a time here) are answered.
      expect((await rawRequest(`${server.url}/prices?symbol=ETH`, { 'accept-encoding': 'gzip' })).status).toBe(200)
      expect((await rawRequest(`${server.url}${EXPORT}?symbol=ETH&from=${END - 60_000}`, { 'accept-encoding': 'gzip' })).status).toBe(200)
      const { head, complete } = splitChunked(await stalled.read())
      expect(head).toMatch(/^http\/1\.1 200/)
      expect(complete).toBe(false)
    } finally {
      await server.close()
    }
  }, 60_000)
})
