/**
 * Catch-up of a new node (issue 21): the batches are written into a stream
 * through a writer node (which is then stopped and dropped), and a node with
 * an empty store starts on it; the clock runs from its start until it has
 * applied the stream's last commit. Against it, the same batches written
 * into a fresh store with `putMany` (what `price-store import` does), and
 * the same two as processes: `serve --nats` on an empty database from spawn
 * until a read at the last position answers, against `price-store import`
 * of the same records from an NDJSON file, from spawn to exit.
 *
 * The `serve --nats` nodes started here stay up (caught up) for the read
 * cases; the caller stops them.
 */
import { spawn } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { once } from 'node:events'
import { ClusterNode } from '../src/cluster.js'
import { PriceStore } from '../src/index.js'
import { readAtPosition } from './cluster-nats.js'
import { WRITE_TOKEN, spawnServeNode, tail, unlessExited, type ServeNode } from './cluster-procs.js'
import { ndjson, type BatchSet } from './cluster-writes.js'
import { BENCH_PROVIDER } from './generate.js'
import { BENCH_DIR } from './load.js'

export interface CatchUpSpec {
  readonly set: BatchSet
  readonly urls: readonly string[]
  readonly replicas: number
  readonly stream: string
  readonly scratch: string
  /** `serve --nats` nodes to start, one after another, each timed while alone catching up. */
  readonly serveNodes: number
}

/** A timed load of the records. */
export interface Timed {
  readonly seconds: number
  readonly recordsPerSecond: number
}

export interface CatchUpResult {
  readonly records: number
  readonly batchSize: number
  readonly replicas: number
  /** The stream's last commit position once written. */
  readonly lastPosition: number
  /** Filling the stream through one in-process node (acknowledged + applied on it, one batch at a time). */
  readonly fill: Timed
  /** A new in-process ClusterNode on an empty store: start to the last commit applied. */
  readonly libraryNode: Timed
  /** putMany of the same batches into a fresh store, in-process. */
  readonly putMany: Timed
  /** Each `serve --nats` on an empty database: spawn to a read at the last position answered. */
  readonly serveNodes: readonly Timed[]
  /** `price-store import --batch-size B FILE` into a fresh database: spawn to exit. */
  readonly importCli: Timed
}

const CLI = join(BENCH_DIR, '..', 'src', 'cli', 'main.ts')
const CATCH_UP_TIMEOUT_MS = 15 * 60_000

function timed(records: number, ms: number): Timed {
  return { seconds: ms / 1000, recordsPerSecond: records / (ms / 1000) }
}

/** Runs the catch-up cases; returns the results and the caught-up `serve --nats` nodes (the caller stops them). */
export async function runCatchUp(spec: CatchUpSpec, log: (text: string) => void): Promise<{ result: CatchUpResult; nodes: ServeNode[] }> {
  const { set, urls, stream } = spec
  await mkdir(spec.scratch, { recursive: true })

  log(`  filling stream ${stream} with ${set.records.toLocaleString('en-US')} records ...`)
  const writerStore = await PriceStore.open(join(spec.scratch, 'writer'), { provider: BENCH_PROVIDER })
  let lastPosition = 0
  let fillMs: number
  try {
    const writer = await ClusterNode.start(writerStore, { servers: urls, stream, replicas: spec.replicas, name: 'bench writer' })
    try {
      const t0 = performance.now()
      for (const batch of set.batches) lastPosition = (await writer.putBatch(batch)).position
      fillMs = performance.now() - t0
    } finally {
      await writer.stop()
    }
  } finally {
    await writerStore.close()
    await rm(join(spec.scratch, 'writer'), { recursive: true, force: true })
  }

  log('  a new in-process node catching up ...')
  const fresh = await PriceStore.open(join(spec.scratch, 'fresh'), { provider: BENCH_PROVIDER })
  let libraryMs: number
  try {
    const t0 = performance.now()
    const node = await ClusterNode.start(fresh, { servers: urls, stream, name: 'bench new node' })
    try {
      if (!(await node.waitForPosition(lastPosition, CATCH_UP_TIMEOUT_MS))) throw new Error(`the new node did not reach ${lastPosition}`)
      libraryMs = performance.now() - t0
    } finally {
      await node.stop()
    }
    if (fresh.position !== lastPosition) throw new Error(`the new node is at ${fresh.position}, not ${lastPosition}`)
  } finally {
    await fresh.close()
    await rm(join(spec.scratch, 'fresh'), { recursive: true, force: true })
  }

  log('  putMany of the same batches into a fresh store ...')
  const plain = await PriceStore.open(join(spec.scratch, 'plain'), { provider: BENCH_PROVIDER })
  let putManyMs: number
  try {
    const t0 = performance.now()
    for (const batch of set.batches) await plain.putMany(batch)
    putManyMs = performance.now() - t0
  } finally {
    await plain.close()
    await rm(join(spec.scratch, 'plain'), { recursive: true, force: true })
  }

  log('  price-store import of the same records (a process) ...')
  const importMs = await timeImportCli(spec)

  const tokenFile = join(spec.scratch, 'token')
  await writeFile(tokenFile, WRITE_TOKEN, { mode: 0o600 })
  const nodes: ServeNode[] = []
  const serveTimes: Timed[] = []
  try {
    for (let i = 0; i < spec.serveNodes; i++) {
      log(`  serve --nats node ${i + 1} of ${spec.serveNodes} catching up ...`)
      const t0 = performance.now()
      const node = await spawnServeNode({ dbDir: join(spec.scratch, `serve${i}`), tokenFile, logFile: join(spec.scratch, `serve${i}.log`), nats: urls, stream, replicas: spec.replicas })
      nodes.push(node)
      try {
        await unlessExited(node, readAtPosition(node.url, lastPosition, CATCH_UP_TIMEOUT_MS))
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${tail(node.logFile)}`)
      }
      serveTimes.push(timed(set.records, performance.now() - t0))
    }
  } catch (err) {
    await Promise.allSettled(nodes.map((node) => node.stop()))
    throw err
  }
  return {
    result: {
      records: set.records,
      batchSize: set.batchSize,
      replicas: spec.replicas,
      lastPosition,
      fill: timed(set.records, fillMs),
      libraryNode: timed(set.records, libraryMs),
      putMany: timed(set.records, putManyMs),
      serveNodes: serveTimes,
      importCli: timed(set.records, importMs),
    },
    nodes,
  }
}

/** Writes the records as NDJSON (not timed), then times `price-store import` of it into a fresh database. */
async function timeImportCli(spec: CatchUpSpec): Promise<number> {
  const file = join(spec.scratch, 'records.ndjson')
  const out = createWriteStream(file)
  for (const batch of spec.set.batches) if (!out.write(`${ndjson(batch)}\n`)) await once(out, 'drain')
  out.end()
  await once(out, 'finish')
  const db = join(spec.scratch, 'imported')
  const args = [
    ...process.execArgv, CLI, 'import', '--db', db, '--batch-size', String(spec.set.batchSize),
    '--provider-name', BENCH_PROVIDER.name, '--provider-id', BENCH_PROVIDER.id, '--provider-public-key', BENCH_PROVIDER.publicKey, file,
  ]
  const t0 = performance.now()
  const child = spawn(process.execPath, args, { cwd: BENCH_DIR, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)))
  const [code] = (await once(child, 'exit')) as [number | null]
  const ms = performance.now() - t0
  await rm(file, { force: true })
  await rm(db, { recursive: true, force: true })
  if (code !== 0) throw new Error(`price-store import exited with ${code}:\n${stderr}`)
  return ms
}
