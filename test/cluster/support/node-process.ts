/**
 * Price-store cluster nodes as real processes for the fault tests: the real CLI,
 * `price-store serve --nats URL,... --nats-stream NAME --port 0 --db DIR --write-token-file FILE`
 * (src/cli/main.ts bundled once per test file with `bundleChild`), serving records of
 * `TEST_PROVIDER`. The port is the one the kernel gave the node, read back from the banner the CLI
 * prints (`  http://127.0.0.1:PORT/prices`), so no port is ever guessed; a restarted node gets a
 * new one (its URL changes).
 *
 * A node is stopped by its own PID only: SIGKILL for a crash, SIGTERM for a clean stop, SIGSTOP and
 * SIGCONT to freeze it. Every node still running is SIGKILLed by a watchdog process when the test
 * process ends, however it ends (a node left running would reconnect to NATS forever).
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { TEST_PROVIDER } from '../../../src/testing/records.js'
import { bundleChild, startChild, type ChildBundle, type RunningChild } from '../../reliability/child-process.js'
import { watchChild } from './watchdog.js'

/** The bearer token of every node's POST /prices. */
export const WRITE_TOKEN = 'cluster-faults-3f9a0c1d5e7b2486a1c0f9e8d7b6a5c4'
/** Bounds a node's start (it connects to NATS and may create the stream) and every wait below; only a failure takes this long. */
export const NODE_DEADLINE_MS = 45_000
const POLL_MS = 25
const BANNER_URL = /^ {2}(http:\/\/127\.0\.0\.1:\d+)\/prices$/

/** The replication part of a node's `/health` (see docs/http.md, Replicated nodes). */
export interface NodeReplication {
  readonly state: 'applying' | 'connecting' | 'isolated' | 'failed' | 'stopped'
  readonly stream: string
  readonly position: number
  readonly streamPosition?: number
  readonly lag?: number
  readonly appliedBatches: number
  readonly appliedRecords: number
  readonly refusedCommits: number
  /** What the node sent to the stream again after the stream lost commits it holds. */
  readonly resent?: { readonly commits: number; readonly records: number; readonly positions: readonly number[] }
  /** True once the node found its store forked from the stream (it is rebuilt from the stream then). */
  readonly forked?: boolean
  readonly error?: { readonly code: string; readonly message: string }
}

/** A node's `/health` answer. */
export interface NodeHealth {
  readonly httpStatus: number
  readonly status: string
  readonly reason?: string
  readonly replication?: NodeReplication
}

/** What every node of one test cluster shares. */
export interface NodeSetup {
  /** The CLI bundle (see {@link bundleCli}). */
  readonly bundle: ChildBundle
  /** A temp folder: each node's database goes to `<dir>/<name>/db`. */
  readonly dir: string
  /** NATS client URLs. */
  readonly nats: readonly string[]
  readonly stream: string
  readonly replicas: number
  /** More `serve` flags for every node (e.g. `--max-lag`, `--apply-wait-ms`). */
  readonly extraArgs?: readonly string[]
}

/** Bundles the real CLI (src/cli/main.ts) for {@link NodeProcess}; `cleanup()` it in afterAll. */
export function bundleCli(): Promise<ChildBundle> {
  return bundleChild('../../src/cli/main.ts')
}

/** Writes the token file every node of `dir` reads; returns its path. */
export async function writeTokenFile(dir: string): Promise<string> {
  const file = join(dir, 'write-token')
  await writeFile(file, WRITE_TOKEN, { mode: 0o600 })
  return file
}

/** One price-store node: a database folder, and the `serve` process on it while it runs. */
export class NodeProcess {
  readonly name: string
  readonly dbDir: string
  readonly #setup: NodeSetup
  readonly #tokenFile: string
  #child: RunningChild | undefined
  #url: string | undefined
  #paused = false
  /** stderr of the earlier runs of this node, for failure messages. */
  #pastOutput = ''

  constructor(setup: NodeSetup, tokenFile: string, name: string) {
    this.#setup = setup
    this.#tokenFile = tokenFile
    this.name = name
    this.dbDir = join(setup.dir, name, 'db')
  }

  /** `http://127.0.0.1:PORT` of the running process (it changes with each start). */
  get url(): string {
    if (this.#url === undefined) throw new Error(`node ${this.name} is not running`)
    return this.#url
  }

  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined
  }

  /** Running and listening: its URL is known. */
  get serving(): boolean {
    return this.#url !== undefined && this.running
  }

  get running(): boolean {
    const child = this.#child?.child
    return child !== undefined && child.exitCode === null && child.signalCode === null
  }

  /** Starts `serve` on this node's database; resolves with its URL once it printed its banner (it then listens). */
  async start(): Promise<string> {
    if (this.running) throw new Error(`node ${this.name} is already running`)
    const setup = this.#setup
    const args = [
      'serve', '--port', '0', '--db', this.dbDir, '--write-token-file', this.#tokenFile,
      '--provider-name', TEST_PROVIDER.name, '--provider-id', TEST_PROVIDER.id, '--provider-public-key', TEST_PROVIDER.publicKey,
      '--nats', setup.nats.join(','), '--nats-stream', setup.stream, '--nats-replicas', String(setup.replicas),
      ...(setup.extraArgs ?? []),
    ]
    const child = startChild(setup.bundle, args)
    this.#child = child
    this.#paused = false
    watchChild(child.child)
    const timeout = delay(NODE_DEADLINE_MS, 'timeout' as const, { ref: false })
    const match = await Promise.race([child.waitForLine(BANNER_URL), timeout]).catch((err: Error) => err)
    if (match === 'timeout' || match instanceof Error) {
      child.kill()
      await child.ended
      throw new Error(`node ${this.name} did not start (${match === 'timeout' ? `no banner within ${NODE_DEADLINE_MS} ms` : match.message})\n${this.output()}`)
    }
    this.#url = match[1]
    return this.#url!
  }

  /** kill -9 by PID; resolves once the process has exited. */
  async kill(): Promise<void> {
    await this.#end('SIGKILL')
  }

  /** SIGTERM (a graceful stop); resolves once it exited, and checks it exited with 0. */
  async stop(): Promise<void> {
    const ended = await this.#end('SIGTERM')
    if (ended !== 0 && ended !== undefined) throw new Error(`node ${this.name} exited with ${ended} on SIGTERM\n${this.output()}`)
  }

  /** SIGSTOP: the process stays, frozen, until {@link NodeProcess.resume}. */
  pause(): void {
    this.#signal('SIGSTOP')
    this.#paused = true
  }

  /** SIGCONT after {@link NodeProcess.pause}. */
  resume(): void {
    this.#signal('SIGCONT')
    this.#paused = false
  }

  /** The node's stderr (this run and earlier ones), for failure messages. */
  output(): string {
    return `--- node ${this.name} stderr:\n${this.#pastOutput}${this.#child?.stderr() ?? ''}`
  }

  /** `GET /health` (200 or 503 both answer a report). */
  async health(): Promise<NodeHealth> {
    const res = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(5_000) })
    const body = (await res.json()) as Omit<NodeHealth, 'httpStatus'>
    return { httpStatus: res.status, ...body }
  }

  /** The replication status `/health` reports. */
  async replication(): Promise<NodeReplication> {
    const { replication } = await this.health()
    if (replication === undefined) throw new Error(`node ${this.name}'s /health has no replication`)
    return replication
  }

  /** `GET path` on this node: status and body text. */
  async get(path: string): Promise<{ status: number; body: string }> {
    const res = await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(NODE_DEADLINE_MS) })
    return { status: res.status, body: await res.text() }
  }

  #signal(signal: NodeJS.Signals): void {
    const pid = this.pid
    if (pid === undefined) throw new Error(`node ${this.name} is not running`)
    process.kill(pid, signal)
  }

  async #end(signal: NodeJS.Signals): Promise<number | string | undefined> {
    const child = this.#child
    if (child === undefined) return undefined
    if (this.running) {
      process.kill(child.pid, signal)
      // A frozen process acts on SIGTERM only once it runs again (SIGKILL needs no help).
      if (this.#paused) process.kill(child.pid, 'SIGCONT')
    }
    const ended = await child.ended
    this.#pastOutput += child.stderr()
    this.#child = undefined
    this.#url = undefined
    this.#paused = false
    return ended
  }
}

/**
 * Resolves once `check` returns a value other than undefined (polling); throws with `what`, the last
 * reason and `context()` at the deadline, which only a failure reaches.
 */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, context: () => string = () => '', deadlineMs = NODE_DEADLINE_MS): Promise<T> {
  const deadline = Date.now() + deadlineMs
  let last = 'no attempt'
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
      last = 'not yet'
    } catch (err) {
      last = (err as Error).message
    }
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${deadlineMs} ms (last: ${last})\n${context()}`)
    await delay(POLL_MS)
  }
}

