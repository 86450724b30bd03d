/**
 * A writer of the fault tests: POSTs numbered batches of valid `TEST_PROVIDER` records to the nodes
 * of a cluster, as a client behind a load balancer would, and records the outcome of each batch.
 *
 * A batch that fails (the connection refused or cut, a 503 such as `PRICE_LOG_UNAVAILABLE`) is sent
 * again, byte for byte the same, to the next node in turn, until it is acknowledged or its attempts
 * run out: the log recognises a retried batch (its content id) and applies it once. Any other answer
 * (a 400, a 500, an unexpected body) is a bug and fails the test at once.
 *
 * Batch `n`'s records are its own (symbols cycle, timestamps `T0 + (n·size + i) s`), so every
 * record names its batch and a batch can be checked whole or absent on each node.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { T0, makeRecord, type InputRecord } from '../../../src/testing/records.js'
import { WRITE_TOKEN } from './node-process.js'

/** Attempts per batch unless told otherwise: enough to ride out a node restart or a NATS leader election. */
export const DEFAULT_ATTEMPTS = 100

export const WRITER_SYMBOLS = ['BTC', 'ETH', 'AR', 'SOL'] as const

/** What became of one batch. */
export interface BatchOutcome {
  readonly n: number
  /** `acked`: a 200 answered `position`. `failed`: every attempt failed; the batch may or may not be in the log. */
  readonly state: 'acked' | 'failed'
  readonly position?: number
  /** `acked`: the node that answered. */
  readonly url?: string
  readonly attempts: number
  /** Why each failed attempt failed (status and code, or the network error). */
  readonly errors: readonly string[]
  /** When the outcome was known (ms since the epoch): a scenario's recovery time is read from it. */
  readonly at: number
}

export interface ClusterWriterOptions {
  /** Records per batch (default 10). */
  readonly batchSize?: number
  /** Attempts per batch, the first included (default {@link DEFAULT_ATTEMPTS}). */
  readonly attempts?: number
  /** Pause between attempts (ms, default 100): a client's back-off, not a wait for anything. */
  readonly retryPauseMs?: number
  /** Bound of one request (ms, default 30 s): a node that never answers counts as a failed attempt. */
  readonly requestTimeoutMs?: number
}

/** Writes batches through the nodes whose URLs `targets()` gives (in the order tried; read at each attempt). */
/**
 * The 503 codes a client is told to retry: the log unavailable, a write concern not met in time (the batch is in
 * the log: the same batch again waits once more), a node that stopped applying (another node takes it), busy, not open.
 */
const RETRIED: ReadonlySet<string> = new Set(['PRICE_LOG_UNAVAILABLE', 'PRICE_WRITE_CONCERN_TIMEOUT', 'PRICE_REPLICA_FAILED', 'HTTP_BUSY', 'PRICE_NOT_OPEN'])

export class ClusterWriter {
  readonly batchSize: number
  /** The nodes' URLs, in the order tried (read at each attempt); may be replaced between batches. */
  targets: () => readonly string[]
  /** Attempts per batch, the first included; may be changed between batches. */
  attempts: number
  readonly #retryPauseMs: number
  readonly #requestTimeoutMs: number
  readonly #outcomes = new Map<number, BatchOutcome>()
  #next = 0
  #turn = 0

  constructor(targets: () => readonly string[], options: ClusterWriterOptions = {}) {
    this.targets = targets
    this.batchSize = options.batchSize ?? 10
    this.attempts = options.attempts ?? DEFAULT_ATTEMPTS
    this.#retryPauseMs = options.retryPauseMs ?? 100
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000
  }

  /** Batch `n`'s records (the same every time). */
  records(n: number): InputRecord[] {
    return Array.from({ length: this.batchSize }, (_, i) =>
      makeRecord({ symbol: WRITER_SYMBOLS[i % WRITER_SYMBOLS.length]!, timestamp: T0 + (n * this.batchSize + i) * 1000 }))
  }

  /** The batch a record of {@link ClusterWriter.records} belongs to. */
  batchOf(record: { readonly timestamp: number }): number {
    return Math.floor((record.timestamp - T0) / 1000 / this.batchSize)
  }

  /**
   * Sends the next batch until acknowledged or out of attempts; resolves with its outcome. `only` sends this one
   * batch to other nodes and with other attempts than the writer's (other batches in flight are not affected).
   */
  async writeNext(only: { readonly targets?: () => readonly string[]; readonly attempts?: number } = {}): Promise<BatchOutcome> {
    const n = this.#next++
    const body = JSON.stringify(this.records(n))
    const errors: string[] = []
    const attempts = only.attempts ?? this.attempts
    for (let attempt = 1; ; attempt++) {
      const targets = (only.targets ?? this.targets)()
      const url = targets[this.#turn++ % targets.length]
      const answer = await this.#post(url, body)
      if (answer.ok) {
        if (answer.stored !== this.batchSize) throw new Error(`batch ${n}: ${url} answered stored ${answer.stored}, not ${this.batchSize}`)
        return this.#record({ n, state: 'acked', position: answer.position, url: url!, attempts: attempt, errors, at: Date.now() })
      }
      errors.push(`${url}: ${answer.error}`)
      if (attempt >= attempts) return this.#record({ n, state: 'failed', attempts: attempt, errors, at: Date.now() })
      await delay(this.#retryPauseMs)
    }
  }

  /** Writes `count` batches, `concurrency` at a time. */
  async writeMany(count: number, concurrency = 1): Promise<void> {
    let left = count
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left--
        await this.writeNext()
      }
    }))
  }

  /** Writes batches, `concurrency` at a time, until `done()` is true (checked before each batch). */
  async writeUntil(done: () => boolean, concurrency = 1): Promise<void> {
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (!done()) await this.writeNext()
    }))
  }

  /** Every outcome so far, by batch number. */
  get outcomes(): ReadonlyMap<number, BatchOutcome> {
    return this.#outcomes
  }

  /** Batches sent so far (acknowledged, failed, or in flight). */
  get sent(): number {
    return this.#next
  }

  acked(): BatchOutcome[] {
    return [...this.#outcomes.values()].filter((outcome) => outcome.state === 'acked')
  }

  failed(): BatchOutcome[] {
    return [...this.#outcomes.values()].filter((outcome) => outcome.state === 'failed')
  }

  /**
   * Milliseconds from `since` to the first batch acknowledged at or after it (by the node at `url`, when given): the
   * cluster, or that node, taking a write again. Undefined while none was.
   */
  firstAckAfter(since: number, url?: string): number | undefined {
    const times = this.acked().filter((outcome) => url === undefined || outcome.url === url).map((outcome) => outcome.at).filter((at) => at >= since)
    return times.length === 0 ? undefined : Math.min(...times) - since
  }

  /** The newest position acknowledged so far (0: none). */
  newestAckedPosition(): number {
    return Math.max(0, ...this.acked().map((outcome) => outcome.position!))
  }

  #record(outcome: BatchOutcome): BatchOutcome {
    this.#outcomes.set(outcome.n, outcome)
    return outcome
  }

  async #post(url: string | undefined, body: string): Promise<{ ok: true; stored: number; position: number } | { ok: false; error: string }> {
    if (url === undefined) return { ok: false, error: 'no node to write to' }
    let res: Response
    let text: string
    try {
      res = await fetch(`${url}/prices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${WRITE_TOKEN}`, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.#requestTimeoutMs),
      })
      text = await res.text()
    } catch (err) {
      // Refused, reset or cut (a node killed or stopping), or no answer in time.
      return { ok: false, error: `${(err as Error).message} (${String((err as { cause?: { code?: string } }).cause?.code ?? '')})` }
    }
    if (res.status === 200) {
      const answer = JSON.parse(text) as { stored: number; position: number }
      return { ok: true, ...answer }
    }
    if (res.status === 503) {
      const code = (JSON.parse(text) as { error?: { code?: string } }).error?.code
      // Only the answers a client is told to retry; anything else must fail the test.
      if (code !== undefined && RETRIED.has(code)) return { ok: false, error: `503 ${code}` }
    }
    throw new Error(`POST ${url}/prices answered ${res.status}: ${text.slice(0, 500)}`)
  }
}
