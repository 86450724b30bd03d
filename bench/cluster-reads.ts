/**
 * Read throughput of 1, 2 and 3 `serve --nats` nodes on loopback (issue 21),
 * all holding the same caught-up records. The load comes from one client
 * process (http-client.ts's keep-alive GET loop, one loop per node run side
 * by side) with the same total connections whatever the node count, split
 * evenly, so the cases differ only in how many servers share the work.
 * This machine has 2 cores shared by the servers, the client and the NATS
 * servers: more nodes cannot add CPU here, and the figures say so.
 *
 * `node --import tsx cluster-reads.ts` run as a child (see {@link forkLoadClient}) is the client.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { runLoad, type LoadResult } from './http-client.js'
import { Random, STEP_MS, SYMBOLS, START_TIMESTAMP } from './generate.js'

/** A job for the client: the same paths against each port, side by side. */
interface SplitJob {
  readonly ports: readonly number[]
  readonly paths: readonly string[]
  readonly concurrencyPerPort: number
  readonly durationMs: number
}

export interface ReadCaseResult {
  readonly query: string
  readonly nodes: number
  readonly connections: number
  readonly requestsPerSecond: number
  /** Of each node's loop, the median and p90 latency weighted by requests, µs. */
  readonly medianUs: number
  readonly p90Us: number
  readonly errors: number
  readonly bytesPerAnswer: number
}

/** Total client connections of every case (split over 1, 2 or 3 nodes). */
export const READ_CONNECTIONS = 12

/** The queries: latest-1 (the newest record of a symbol) and a 1 h range at 1 min (60 records). */
export function readQueries(ticks: number, seed: number): { name: string; paths: string[] }[] {
  const random = new Random(seed)
  const symbol = (): string => encodeURIComponent(SYMBOLS[random.int(SYMBOLS.length)]!)
  const hour = 3_600_000
  const span = Math.min(hour, ticks * STEP_MS)
  const lastFrom = START_TIMESTAMP + Math.max(0, ticks * STEP_MS - span)
  return [
    { name: 'latest-1', paths: Array.from({ length: 256 }, () => `/prices?symbol=${symbol()}&provider=redstone`) },
    {
      name: `range ${span === hour ? '1 h' : `${(span / 60_000).toFixed(0)} min`} at 1 min`,
      paths: Array.from({ length: 256 }, () => {
        const from = START_TIMESTAMP + Math.floor((random.next() * (lastFrom - START_TIMESTAMP + 1)) / STEP_MS) * STEP_MS
        return `/prices?symbol=${symbol()}&fromTimestamp=${from}&toTimestamp=${from + span - 1}&interval=60000&provider=redstone`
      }),
    },
  ]
}

/** The load client process; `run` sends it one job and resolves with each port's result. */
export interface LoadClient {
  run(job: SplitJob): Promise<LoadResult[]>
  close(): void
}

export function forkLoadClient(): LoadClient {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['load-client'], { execArgv: process.execArgv, stdio: ['ignore', 2, 2, 'ipc'] })
  let failed: Error | undefined
  child.on('error', (err) => (failed = err))
  child.on('exit', (code) => (failed ??= new Error(`the load client exited with code ${code}`)))
  return {
    run: (job) =>
      new Promise((resolve, reject) => {
        if (failed !== undefined) return reject(failed)
        const onExit = (): void => reject(failed)
        child.once('exit', onExit)
        child.once('message', (result) => {
          child.off('exit', onExit)
          resolve(result as LoadResult[])
        })
        child.send(job)
      }),
    close: () => {
      if (child.connected) child.disconnect()
    },
  }
}

/** Runs each query against the first 1, 2, …, `ports.length` nodes: a warm-up, then `rounds` rounds of the counts in turn. */
export async function runReads(
  client: LoadClient, ports: readonly number[], queries: readonly { name: string; paths: string[] }[], secondsPerRound: number, rounds: number,
  log: (text: string) => void,
): Promise<ReadCaseResult[]> {
  const out: ReadCaseResult[] = []
  for (const query of queries) {
    const runs = new Map<number, LoadResult[][]>()
    for (let nodes = 1; nodes <= ports.length; nodes++) {
      await client.run(job(ports.slice(0, nodes), query.paths, 300))
      runs.set(nodes, [])
    }
    // Rounds alternate the node counts, so a drift of the machine touches each count alike.
    for (let round = 0; round < rounds; round++) {
      for (let nodes = 1; nodes <= ports.length; nodes++) {
        log(`  ${query.name}, ${nodes} node${nodes === 1 ? '' : 's'}, round ${round + 1} of ${rounds} ...`)
        runs.get(nodes)!.push(await client.run(job(ports.slice(0, nodes), query.paths, secondsPerRound * 1000)))
      }
    }
    for (const [nodes, results] of runs) out.push(summarise(query.name, nodes, results))
  }
  return out
}

function job(ports: readonly number[], paths: readonly string[], durationMs: number): SplitJob {
  return { ports, paths, concurrencyPerPort: READ_CONNECTIONS / ports.length, durationMs }
}

/** The median round (by rate) of a node count, its latencies weighted over the nodes. */
function summarise(query: string, nodes: number, rounds: readonly LoadResult[][]): ReadCaseResult {
  const totals = rounds.map((perPort) => {
    const requests = perPort.reduce((a, r) => a + r.requests, 0)
    const weighted = (pick: (r: LoadResult) => number): number => perPort.reduce((a, r) => a + pick(r) * r.requests, 0) / Math.max(1, requests)
    return {
      requestsPerSecond: perPort.reduce((a, r) => a + r.requestsPerSecond, 0),
      medianUs: weighted((r) => r.medianUs),
      p90Us: weighted((r) => r.p90Us),
      errors: perPort.reduce((a, r) => a + r.errors, 0),
      bytesPerAnswer: weighted((r) => r.bytesPerAnswer),
    }
  })
  totals.sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
  const median = totals[Math.floor(totals.length / 2)]!
  return { query, nodes, connections: READ_CONNECTIONS, ...median, errors: totals.reduce((a, t) => a + t.errors, 0) }
}

// The client process: one job at a time, each port's loop side by side.
if (process.argv[2] === 'load-client' && process.send !== undefined) {
  process.on('message', (message) => {
    const { ports, paths, concurrencyPerPort, durationMs } = message as SplitJob
    Promise.all(ports.map((port) => runLoad({ port, paths, concurrency: concurrencyPerPort, durationMs }))).then(
      (results) => process.send?.(results),
      (err: unknown) => {
        process.stderr.write(`load client failed: ${String(err)}\n`)
        process.exit(1)
      },
    )
  })
  process.on('disconnect', () => process.exit(0))
}
