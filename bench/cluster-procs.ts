/**
 * `price-store serve` processes for the cluster bench (issue 21): a node
 * behind HTTP, plain or with `--nats`, run from the source through tsx
 * (the same code the in-process cases run), on a loopback port chosen here,
 * with its output in a log file. Each is stopped by its own PID (SIGTERM,
 * then SIGKILL if it does not exit); an exit hook SIGKILLs any the bench
 * leaves behind (an error, Ctrl-C).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { BENCH_PROVIDER } from './generate.js'
import { BENCH_DIR } from './load.js'

const CLI = join(BENCH_DIR, '..', 'src', 'cli', 'main.ts')
/** The bearer token of every node's POST /prices. */
export const WRITE_TOKEN = 'bench-cluster-token-0123456789abcdef'
/** A 10,000-record batch is ≈ 14 MB of NDJSON: over serve's 16 MB default with little room. */
const MAX_WRITE_BYTES = 64 * 1024 * 1024
const START_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 15_000

const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) if (child.pid !== undefined) signal(child.pid, 'SIGKILL')
})

/** A running `serve` process. */
export interface ServeNode {
  readonly pid: number
  readonly port: number
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  readonly logFile: string
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>
  /** SIGTERM by PID, SIGKILL after a while; resolves once it exited. Safe to call twice. */
  stop(): Promise<void>
}

export interface ServeNodeSpec {
  /** The node's database folder. */
  readonly dbDir: string
  /** A file holding {@link WRITE_TOKEN}. */
  readonly tokenFile: string
  readonly logFile: string
  /** NATS server URLs: a cluster node; absent: a plain node. */
  readonly nats?: readonly string[]
  readonly stream?: string
  readonly replicas?: number
}

/** A free loopback port (the kernel's choice, released for the child to take). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return address.port
}

/** Spawns `price-store serve` for `spec` and returns at once (see {@link waitListening}). */
export async function spawnServeNode(spec: ServeNodeSpec): Promise<ServeNode> {
  const port = await freePort()
  const args = [
    CLI, 'serve', '--db', spec.dbDir, '--port', String(port), '--write-token-file', spec.tokenFile, '--max-write-bytes', String(MAX_WRITE_BYTES),
    '--provider-name', BENCH_PROVIDER.name, '--provider-id', BENCH_PROVIDER.id, '--provider-public-key', BENCH_PROVIDER.publicKey,
    ...(spec.nats === undefined ? [] : ['--nats', spec.nats.join(','), '--nats-stream', spec.stream ?? 'PRICES', '--nats-replicas', String(spec.replicas ?? 1)]),
  ]
  const log = openSync(spec.logFile, 'a')
  let child: ChildProcess
  try {
    // cwd: the bench folder, whose node_modules holds the tsx loader of --import tsx.
    child = spawn(process.execPath, [...process.execArgv, ...args], { cwd: BENCH_DIR, stdio: ['ignore', log, log] })
  } finally {
    closeSync(log)
  }
  const pid = child.pid
  if (pid === undefined) throw new Error('could not start price-store serve')
  live.add(child)
  let running = true
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    running = false
    live.delete(child)
    resolve()
  }))
  let stopping: Promise<void> | undefined
  const stop = (): Promise<void> => (stopping ??= (async () => {
    if (!running) return
    signal(pid, 'SIGTERM')
    const outcome = await Promise.race([exited.then(() => 'exited' as const), delay(STOP_TIMEOUT_MS, 'timeout' as const, { ref: false })])
    if (outcome === 'timeout' && running) {
      signal(pid, 'SIGKILL')
      await exited
    }
  })())
  return { pid, port, url: `http://127.0.0.1:${port}`, logFile: spec.logFile, exited, stop }
}

/** Signals a process by its PID, unless it exited meanwhile. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // exited between the check and the signal
  }
}

/** Rejects when the node exits before `work` settles (a node that dies must not leave the bench waiting). */
export function unlessExited<T>(node: ServeNode, work: Promise<T>): Promise<T> {
  const onExit: Promise<never> = node.exited.then(() => {
    throw new Error(`price-store serve (pid ${node.pid}) exited:\n${tail(node.logFile)}`)
  })
  onExit.catch(() => {})
  return Promise.race([work, onExit])
}

/** Resolves once the node answers `GET /health` (any status); throws with its log if it exits or takes too long. */
export async function waitListening(node: ServeNode): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS
  let exited = false
  void node.exited.then(() => (exited = true))
  for (;;) {
    if (exited) throw new Error(`price-store serve (pid ${node.pid}) exited while starting:\n${tail(node.logFile)}`)
    try {
      const res = await fetch(`${node.url}/health`, { signal: AbortSignal.timeout(2_000) })
      await res.arrayBuffer()
      return
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`price-store serve (pid ${node.pid}) not listening after ${START_TIMEOUT_MS} ms:\n${tail(node.logFile)}`)
    await delay(20)
  }
}

/** Spawns a node and waits until it listens. */
export async function startServeNode(spec: ServeNodeSpec): Promise<ServeNode> {
  const node = await spawnServeNode(spec)
  try {
    await waitListening(node)
    return node
  } catch (err) {
    await node.stop()
    throw err
  }
}

/** The last lines of a node's log, for error messages. */
export function tail(logFile: string, lines = 20): string {
  try {
    return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
  } catch (err) {
    return `(no log: ${(err as Error).message})`
  }
}
