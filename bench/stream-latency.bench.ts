/**
 * Stream delivery latency (issue 11): a writer in this process commits 10
 * records every 10 ms (1,000 records/s) into a fresh store on disk served
 * by `startServer`, while a client in another process reads
 * `GET /prices/stream` and notes when each commit's event is whole. Both
 * read the same clock (`performance.timeOrigin + performance.now()`, the
 * wall clock at sub-millisecond precision), so the latency of a commit is
 * its receipt time minus its time in the writer: from the moment `putMany`
 * resolved (acknowledged to the writer) and from the moment it was called.
 */
import { mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { startServer } from '../src/adapters/http/node.js'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER, dataShape, generateBatches } from './generate.js'
import { DATA_DIR } from './load.js'
import { forkWorker } from './spawn.js'

export interface StreamLatencyInput {
  readonly quick: boolean
}

/** Latency percentiles of one case, in ms. */
export interface LatencyMs {
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
}

export interface LiveCaseResult {
  readonly name: string
  /** Records per second asked for, and written (over the measured window). */
  readonly targetRate: number
  readonly achievedRate: number
  /** Commits measured (after the warm-up), and those the client never received. */
  readonly commits: number
  readonly missing: number
  /** From `putMany` resolving to the client holding the event. */
  readonly fromAck: LatencyMs
  /** From `putMany` being called. */
  readonly fromCall: LatencyMs
  /** The writer's own time per commit (`putMany`), p50 / p99. */
  readonly commitMs: { readonly p50: number; readonly p99: number }
  readonly seconds: number
}

/** What the client process sends back: each commit position with the time its event was whole. */
export interface StreamClientReport {
  readonly received: readonly (readonly [position: number, at: number])[]
}

const BATCH = 10
const EVERY_MS = 10

/** The wall clock both processes share, in ms with sub-millisecond precision. */
export function sharedNow(): number {
  return performance.timeOrigin + performance.now()
}

function percentiles(samples: number[]): LatencyMs {
  const sorted = samples.sort((a, b) => a - b)
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

export async function runStreamLatency(input: StreamLatencyInput): Promise<LiveCaseResult> {
  const seconds = input.quick ? 5 : 30
  const warmupSeconds = 1
  const dir = join(DATA_DIR, `stream-latency-${process.pid}`)
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  const store = await PriceStore.open(dir, { provider: BENCH_PROVIDER })
  const server = await startServer({ store })
  const client = forkWorker('stream-client', { url: `${server.url}/prices/stream` })
  try {
    const reported = new Promise<StreamClientReport>((resolve, reject) => {
      client.on('message', (message: { ready?: true } | StreamClientReport) => {
        if ('received' in message) resolve(message)
      })
      client.once('exit', (code) => reject(new Error(`the stream client exited with code ${code}`)))
    })
    await new Promise<void>((resolve) => client.on('message', (message: { ready?: true }) => message.ready === true && resolve()))
    const batches = generateBatches(dataShape(1), BATCH)
    const times = new Map<number, { call: number; ack: number }>()
    const total = Math.round((seconds * 1000) / EVERY_MS)
    const start = sharedNow()
    let measuredFrom = Number.NaN
    for (let i = 0; i < total; i++) {
      // Paced against the start, not the previous commit, so a slow commit does not lower the rate.
      await sleep(start + i * EVERY_MS - sharedNow())
      const batch = batches.next().value as NonNullable<ReturnType<typeof batches.next>['value']>
      const call = sharedNow()
      await store.putMany(batch)
      const ack = sharedNow()
      if (i * EVERY_MS >= warmupSeconds * 1000) {
        if (Number.isNaN(measuredFrom)) measuredFrom = call
        times.set(store.position, { call, ack })
      }
    }
    const elapsed = (sharedNow() - measuredFrom) / 1000
    await sleep(500)
    client.send('report')
    const { received } = await reported
    const at = new Map(received)
    const fromAck: number[] = []
    const fromCall: number[] = []
    const commit: number[] = []
    for (const [position, { call, ack }] of times) {
      commit.push(ack - call)
      const receipt = at.get(position)
      if (receipt === undefined) continue
      fromAck.push(receipt - ack)
      fromCall.push(receipt - call)
    }
    const commitStats = percentiles(commit)
    return {
      name: `stream delivery latency, commit to client, at ${((1000 / EVERY_MS) * BATCH).toLocaleString('en-US')} records/s (${BATCH} every ${EVERY_MS} ms)`,
      targetRate: (1000 / EVERY_MS) * BATCH,
      achievedRate: (times.size * BATCH) / elapsed,
      commits: times.size,
      missing: times.size - fromAck.length,
      fromAck: percentiles(fromAck),
      fromCall: percentiles(fromCall),
      commitMs: { p50: commitStats.p50, p99: commitStats.p99 },
      seconds,
    }
  } finally {
    client.kill()
    await server.close()
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * The client process: reads the stream, noting when each `prices` event is
 * whole, says `ready` once the stream is open, and sends what it noted when
 * asked.
 */
export async function runStreamClient(input: { readonly url: string }): Promise<void> {
  const received: [number, number][] = []
  process.on('message', () => {
    process.send?.({ received } satisfies StreamClientReport, () => process.exit(0))
  })
  const response = await fetch(input.url, { headers: { accept: 'text/event-stream' } })
  if (response.status !== 200 || response.body === null) throw new Error(`the stream answered ${response.status}`)
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true })
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      if (block.includes('event: ready')) process.send?.({ ready: true })
      const position = /^id: (\d+)\nevent: prices\n/.exec(block)?.[1]
      if (position !== undefined) received.push([Number(position), sharedNow()])
    }
  }
}
