/**
 * Delivery latency of live commits: WebSocket subscriptions (`/ws`) against
 * the Server-Sent-Events stream (`/prices/stream`), at `--subscribers`
 * clients each (default 1,000), one transport at a time.
 *
 * The server (`startServer` over an in-memory store) runs in this process;
 * the subscribers run in a child process of their own, so the server has its
 * event loop to itself. Every `--interval-ms` (default 50) this process
 * writes one commit of one record of BTC and tells the child when the write
 * began (`performance.timeOrigin + performance.now()`, the same clock in
 * both processes); the child notes when each subscriber received the
 * commit. Latency is receive time minus write start, per subscriber and
 * commit (the commit itself, a fraction of a millisecond, is in both). Printed: p50, p99 and max per transport, and the ratios
 * WS / SSE (below 1: WebSocket delivers sooner).
 *
 * Run it on a quiet machine: `npx tsx bench/ws-delivery.bench.ts [--subscribers 1000] [--commits 200] [--interval-ms 50]`
 * (or `cd bench && node --import tsx ws-delivery.bench.ts ...`).
 */
import { fork } from 'node:child_process'
import { request } from 'node:http'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { MemoryLevel } from 'memory-level'
import { WebSocket } from 'ws'
import { PriceStore } from '../src/index.js'
import { startServer } from '../src/adapters/http/node.js'
import { T0, TEST_PROVIDER, makeRecord } from '../src/testing/records.js'

type Transport = 'ws' | 'sse'

/** Parent to child. */
type Order = { type: 'open'; transport: Transport; base: string; subscribers: number } | { type: 'committed'; position: number; at: number } | { type: 'report' }
/** Child to parent. */
type Answer = { type: 'ready' } | { type: 'report'; latencies: number[]; missing: number }

const now = (): number => performance.timeOrigin + performance.now()

/** The child: opens the subscribers, notes when each commit reaches each one. */
function runClients(): void {
  const received = new Map<number, number[]>()
  const committed = new Map<number, number>()
  let expected = 0
  const note = (position: number): void => {
    const at = now()
    let times = received.get(position)
    if (times === undefined) received.set(position, (times = []))
    times.push(at)
  }
  const openWs = (base: string): Promise<void> => new Promise((resolve, reject) => {
    const socket = new WebSocket(`${base.replace('http', 'ws')}/ws`)
    socket.on('open', () => socket.send(JSON.stringify({ type: 'subscribe', symbols: ['BTC'] })))
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; position: number }
      if (message.type === 'subscribed') resolve()
      else if (message.type === 'prices') note(message.position)
    })
    socket.on('error', reject)
  })
  const openSse = (base: string): Promise<void> => new Promise((resolve, reject) => {
    request(`${base}/prices/stream?symbols=BTC`, (res) => {
      let buffer = ''
      res.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (event.includes('event: ready')) resolve()
          const prices = /event: prices\ndata: \{"position":(\d+)/.exec(event)
          if (prices !== null) note(Number(prices[1]))
        }
      })
    }).on('error', reject).end()
  })
  process.on('message', (order: Order) => {
    if (order.type === 'open') {
      expected = order.subscribers
      const open = order.transport === 'ws' ? openWs : openSse
      void Promise.all(Array.from({ length: order.subscribers }, () => open(order.base))).then(() => process.send?.({ type: 'ready' } satisfies Answer))
    } else if (order.type === 'committed') {
      committed.set(order.position, order.at)
    } else {
      const latencies: number[] = []
      let missing = 0
      for (const [position, at] of committed) {
        const times = received.get(position) ?? []
        missing += expected - times.length
        for (const time of times) latencies.push(time - at)
      }
      process.send?.({ type: 'report', latencies, missing } satisfies Answer)
      setTimeout(() => process.exit(0), 100)
    }
  })
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN
}

/** One transport: a fresh store, server and child; `commits` commits; the latencies. */
async function measure(transport: Transport, subscribers: number, commits: number, intervalMs: number): Promise<{ p50: number; p99: number; max: number; missing: number }> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  const server = await startServer({ store, maxStreamSubscribers: subscribers + 10, maxWsConnections: subscribers + 10 })
  const child = fork(fileURLToPath(import.meta.url), ['--clients'], { execArgv: process.execArgv })
  const answer = (type: Answer['type']): Promise<Answer> => new Promise((resolve) => {
    const listen = (message: Answer): void => {
      if (message.type !== type) return
      child.off('message', listen)
      resolve(message)
    }
    child.on('message', listen)
  })
  const ready = answer('ready')
  child.send({ type: 'open', transport, base: server.url, subscribers } satisfies Order)
  await ready
  for (let i = 0; i < commits; i++) {
    // The write's start: a commit reaches watchers in its own synchronous step, before putMany resolves.
    const at = now()
    await store.putMany([makeRecord({ symbol: 'BTC', timestamp: T0 + i * 1_000 })])
    child.send({ type: 'committed', position: store.position, at } satisfies Order)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
  // Time for the last commits to arrive before the count.
  await new Promise((resolve) => setTimeout(resolve, 1_000))
  const reported = answer('report')
  child.send({ type: 'report' } satisfies Order)
  const report = (await reported) as Extract<Answer, { type: 'report' }>
  await server.close()
  await store.close()
  const sorted = [...report.latencies].sort((a, b) => a - b)
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? Number.NaN, missing: report.missing }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { subscribers: { type: 'string' }, commits: { type: 'string' }, 'interval-ms': { type: 'string' } } })
  const subscribers = Number(values.subscribers ?? 1_000)
  const commits = Number(values.commits ?? 200)
  const intervalMs = Number(values['interval-ms'] ?? 50)
  console.log(`delivery of ${commits} commits to ${subscribers} subscribers, one every ${intervalMs} ms (ms from the write to its receipt)`)
  const results: Record<Transport, Awaited<ReturnType<typeof measure>>> = {
    sse: await measure('sse', subscribers, commits, intervalMs),
    ws: await measure('ws', subscribers, commits, intervalMs),
  }
  for (const transport of ['sse', 'ws'] as const) {
    const { p50, p99, max, missing } = results[transport]
    console.log(`${transport.padEnd(4)} p50 ${p50.toFixed(2)}  p99 ${p99.toFixed(2)}  max ${max.toFixed(2)}  missing ${missing}`)
  }
  console.log(`ws/sse  p50 ${(results.ws.p50 / results.sse.p50).toFixed(2)}  p99 ${(results.ws.p99 / results.sse.p99).toFixed(2)}`)
}

if (process.argv.includes('--clients')) runClients()
else await main()
