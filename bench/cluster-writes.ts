/**
 * Write throughput and time-to-applied-everywhere of the cluster (issue 21).
 *
 * One writer sends the same pre-generated batches, one at a time (as
 * `price-store import` does), to each target:
 * - `putMany`: a fresh store in this process;
 * - `POST plain`: `POST /prices` on one `serve` process without NATS;
 * - `ClusterNode` R1/R3 (library): `putBatch` on the first of 1 or 3 in-process
 *   nodes (each a PriceStore on classic-level + a ClusterNode), on 1 or 3 NATS servers;
 * - `POST --nats` R1/R3: `POST /prices` on the first of 1 or 3 `serve --nats` processes.
 *
 * A write returns once it is acknowledged and (the default) applied on the
 * node that took it; whether the other nodes have applied it is watched
 * beside the writer without holding it back (in-process: `waitForPosition`;
 * over HTTP: a read with `minPosition`, which the node answers once it has
 * applied the position). "Applied everywhere" is the time from the write's
 * start to the last node having applied it; the rate counts from the first
 * write's start to the last batch applied everywhere. HTTP bodies (NDJSON)
 * are serialised before the clock starts, as a client's own work.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { ClusterNode } from '../src/cluster.js'
import { PriceStore } from '../src/index.js'
import { readAtPosition } from './cluster-nats.js'
import { WRITE_TOKEN, startServeNode, type ServeNode } from './cluster-procs.js'
import { BENCH_PROVIDER, type GeneratedRecord } from './generate.js'

/** Where a case's batches go. */
export type WriteTarget = 'putMany' | 'post-plain' | 'node-lib' | 'node-http'

/** The batches of one batch size. */
export interface BatchSet {
  readonly batchSize: number
  readonly batches: readonly GeneratedRecord[][]
  readonly records: number
}

/** A batch as the body of `POST /prices` (NDJSON), as `import --url` sends it. */
export function ndjson(batch: readonly GeneratedRecord[]): string {
  return batch.map((record) => JSON.stringify(record)).join('\n')
}

export interface WriteCaseSpec {
  readonly target: WriteTarget
  readonly set: BatchSet
  /** A folder for this case's stores and logs (removed by the caller). */
  readonly scratch: string
  /** For the cluster targets: the NATS servers, the stream (new, this case's own), its replicas and the number of nodes. */
  readonly nats?: { readonly urls: readonly string[]; readonly stream: string; readonly replicas: number; readonly nodes: number }
}

/** Percentiles of one series, ms. */
export interface Quantiles {
  readonly p50: number
  readonly p99: number
  readonly max: number
}

export interface WriteCaseResult {
  readonly name: string
  readonly target: WriteTarget
  readonly replicas: number
  readonly nodes: number
  readonly batchSize: number
  readonly records: number
  readonly batches: number
  /** First write's start to the last batch applied on every node, s. */
  readonly seconds: number
  readonly recordsPerSecond: number
  /** Each write call: acknowledged (and applied on the node that took it). */
  readonly writeMs: Quantiles
  /** Each write's start to applied on every node. */
  readonly appliedEverywhereMs: Quantiles
}

export function caseName(spec: Pick<WriteCaseSpec, 'target' | 'nats'>): string {
  const n = spec.nats
  switch (spec.target) {
    case 'putMany': return 'putMany, in-process, 1 store'
    case 'post-plain': return 'POST /prices, 1 plain serve process (no NATS)'
    case 'node-lib': return `ClusterNode.putBatch, R${n?.replicas} on ${n?.urls.length} NATS server${n?.urls.length === 1 ? '' : 's'}, ${n?.nodes} in-process node${n?.nodes === 1 ? '' : 's'}`
    case 'node-http': return `POST /prices, R${n?.replicas} on ${n?.urls.length} NATS server${n?.urls.length === 1 ? '' : 's'}, ${n?.nodes} serve --nats process${n?.nodes === 1 ? '' : 'es'}`
  }
}

export function quantiles(values: readonly number[]): Quantiles {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? Number.NaN }
}

/** How one write goes: `write` resolves with the batch's position once the writer's node took it; `everywhere` once all nodes applied it. */
interface Writer {
  write(index: number): Promise<number>
  everywhere(position: number): Promise<void>
  /** Checks every node holds the same, last position. */
  check(last: number): Promise<void>
  close(): Promise<void>
}

const APPLY_TIMEOUT_MS = 120_000

export async function runWriteCase(spec: WriteCaseSpec): Promise<WriteCaseResult> {
  await mkdir(spec.scratch, { recursive: true })
  const writer = await openWriter(spec)
  const writeMs: number[] = []
  const everywhereMs: number[] = []
  const watching: Promise<void>[] = []
  let lastApplied = 0
  let last = 0
  let started = 0
  try {
    started = performance.now()
    for (let index = 0; index < spec.set.batches.length; index++) {
      const t0 = performance.now()
      const position = await writer.write(index)
      writeMs.push(performance.now() - t0)
      last = Math.max(last, position)
      const watched = writer.everywhere(position).then(() => {
        const now = performance.now()
        everywhereMs.push(now - t0)
        lastApplied = Math.max(lastApplied, now)
      })
      // Its failure is reported by the Promise.all below, not as an unhandled rejection in the meantime.
      watched.catch(() => {})
      watching.push(watched)
      // One turn of the event loop before the next write: a watcher that is already done records its time now,
      // not after the next write's synchronous start (validating and encoding a batch takes milliseconds).
      await new Promise((resolve) => setImmediate(resolve))
    }
    await Promise.all(watching)
    await writer.check(last)
  } finally {
    await Promise.allSettled(watching)
    await writer.close()
  }
  const seconds = (lastApplied - started) / 1000
  return {
    name: caseName(spec),
    target: spec.target,
    replicas: spec.nats?.replicas ?? 0,
    nodes: spec.nats?.nodes ?? 1,
    batchSize: spec.set.batchSize,
    records: spec.set.records,
    batches: spec.set.batches.length,
    seconds,
    recordsPerSecond: spec.set.records / seconds,
    writeMs: quantiles(writeMs),
    appliedEverywhereMs: quantiles(everywhereMs),
  }
}

async function openWriter(spec: WriteCaseSpec): Promise<Writer> {
  switch (spec.target) {
    case 'putMany': return storeWriter(spec)
    case 'node-lib': return libraryNodesWriter(spec)
    case 'post-plain':
    case 'node-http': return httpWriter(spec)
  }
}

async function storeWriter(spec: WriteCaseSpec): Promise<Writer> {
  const store = await PriceStore.open(join(spec.scratch, 'store'), { provider: BENCH_PROVIDER })
  let position = 0
  return {
    async write(index) {
      await store.putMany(spec.set.batches[index]!)
      return ++position
    },
    everywhere: async () => {},
    async check() {},
    close: () => store.close(),
  }
}

async function libraryNodesWriter(spec: WriteCaseSpec): Promise<Writer> {
  const nats = spec.nats!
  const stores: PriceStore[] = []
  const nodes: ClusterNode[] = []
  const close = async (): Promise<void> => {
    await Promise.allSettled(nodes.map((node) => node.stop()))
    await Promise.allSettled(stores.map((store) => store.close()))
  }
  try {
    for (let i = 0; i < nats.nodes; i++) {
      const store = await PriceStore.open(join(spec.scratch, `node${i}`), { provider: BENCH_PROVIDER })
      stores.push(store)
      // One after another: the first creates the stream, the others find it.
      nodes.push(await ClusterNode.start(store, { servers: nats.urls, stream: nats.stream, replicas: nats.replicas, name: `bench node ${i}` }))
    }
  } catch (err) {
    await close()
    throw err
  }
  const writer = nodes[0]!
  return {
    async write(index) {
      return (await writer.putBatch(spec.set.batches[index]!)).position
    },
    async everywhere(position) {
      const reached = await Promise.all(nodes.map((node) => node.waitForPosition(position, APPLY_TIMEOUT_MS)))
      if (reached.includes(false)) throw new Error(`a node did not apply position ${position} within ${APPLY_TIMEOUT_MS} ms`)
    },
    async check(last) {
      const positions = stores.map((store) => store.position)
      if (positions.some((p) => p !== last)) throw new Error(`the nodes' positions ${positions.join(', ')} are not all the last commit ${last}`)
      const counts = await Promise.all(stores.map(async (store) => JSON.stringify(await store.latest('BTC', { limit: 5 }))))
      if (new Set(counts).size !== 1) throw new Error('the nodes answer latest BTC differently')
    },
    close,
  }
}

async function httpWriter(spec: WriteCaseSpec): Promise<Writer> {
  const nats = spec.nats
  const tokenFile = join(spec.scratch, 'token')
  await writeFile(tokenFile, WRITE_TOKEN, { mode: 0o600 })
  const nodes: ServeNode[] = []
  const close = async (): Promise<void> => void (await Promise.allSettled(nodes.map((node) => node.stop())))
  try {
    for (let i = 0; i < (nats?.nodes ?? 1); i++) {
      nodes.push(await startServeNode({
        dbDir: join(spec.scratch, `node${i}`),
        tokenFile,
        logFile: join(spec.scratch, `node${i}.log`),
        ...(nats === undefined ? {} : { nats: nats.urls, stream: nats.stream, replicas: nats.replicas }),
      }))
    }
  } catch (err) {
    await close()
    throw err
  }
  // Serialised before the clock starts, as a client's own work (and only for these cases: they are large).
  const bodies = spec.set.batches.map(ndjson)
  const endpoint = `${nodes[0]!.url}/prices`
  const headers = { authorization: `Bearer ${WRITE_TOKEN}`, 'content-type': 'application/x-ndjson' }
  return {
    async write(index) {
      const res = await fetch(endpoint, { method: 'POST', headers, body: bodies[index]! })
      const answer = (await res.json()) as { stored?: number; position?: number }
      if (res.status !== 200 || answer.stored !== spec.set.batches[index]!.length) throw new Error(`POST /prices answered ${res.status}: ${JSON.stringify(answer)}`)
      return answer.position ?? index + 1
    },
    async everywhere(position) {
      // The node that took the write answered once it had applied it; the others are asked.
      await Promise.all(nodes.slice(1).map((node) => readAtPosition(node.url, position, APPLY_TIMEOUT_MS)))
    },
    async check(last) {
      const positions = await Promise.all(nodes.map(async (node) => ((await (await fetch(`${node.url}/health`)).json()) as { position?: number }).position))
      if (positions.some((p) => p !== last)) throw new Error(`the nodes' positions ${positions.join(', ')} are not all the last commit ${last}`)
    },
    close,
  }
}
