/**
 * The apply loop of a node: follows the log's commits from the store's own
 * position and writes each batch with `putBatch(records, { position })`, so
 * the batch and its position land in one atomic LevelDB write. A node killed
 * at any moment reopens at the position of the last batch it stored and
 * follows the log from the next one: nothing is applied twice (a commit at or
 * below the position is passed over) and nothing is skipped (the log
 * delivers every commit after it, in order).
 *
 * Losing the connection is not an error here: the loop waits and follows
 * again from where the store stands. Whatever means the store cannot follow
 * this log (the provider differs, a part is gone, a record does not decode
 * or is refused, the disk fails) stops the loop with a coded error an
 * operator must handle.
 */
import { PriceStoreError, isPriceStoreError } from '../errors.js'
import type { PriceStore } from '../store/price-store.js'
import type { PriceRecord } from '../types.js'
import { decodeCommit, decodeEntry, type DecodedCommit } from './batch-codec.js'
import type { PositionWaiters } from './position-waiters.js'
import { checkHistory } from './history-check.js'
import type { CommitMessage, ReplicationLog } from './replication-log.js'

/** First and longest wait before following the log again after it failed (ms). */
const RETRY_FIRST_MS = 100
const RETRY_LONGEST_MS = 2_000

/** What the loop reports, read by the node's status. */
export interface ApplyCounters {
  batches: number
  records: number
  /** The newest commit position the log delivered (the stream is at least there). */
  delivered: number
}

/** Follows a log into a store until stopped or failed. */
export class Applier {
  readonly #store: PriceStore
  readonly #log: ReplicationLog
  readonly #waiters: PositionWaiters
  readonly #stop = new AbortController()
  readonly counters: ApplyCounters = { batches: 0, records: 0, delivered: 0 }
  #failure: PriceStoreError | undefined
  #done: Promise<void> | undefined
  /** Ends the current following of the log (it starts again from the store's position). */
  #iteration: AbortController | undefined

  readonly #onError: (err: unknown) => void

  constructor(store: PriceStore, log: ReplicationLog, waiters: PositionWaiters, onError: (err: unknown) => void) {
    this.#store = store
    this.#log = log
    this.#waiters = waiters
    this.#onError = onError
  }

  /** The error that stopped the loop, if one did. */
  get failure(): PriceStoreError | undefined {
    return this.#failure
  }

  /** Whether the loop was stopped (by {@link Applier.stop}, a failure or its store closing). */
  get stopped(): boolean {
    return this.#stop.signal.aborted
  }

  /** Starts the loop (once). */
  start(): void {
    this.#done ??= this.#run()
  }

  /**
   * Ends the current following of the log and starts it again from the store's position: for a node that knows
   * the log is ahead and has been given nothing for a while (a consumer lost with its server, not yet noticed).
   */
  refollow(): void {
    this.#iteration?.abort()
  }

  /** Stops the loop for good on an error an operator must handle (found outside the loop: the log was trimmed past it). */
  fail(error: PriceStoreError): void {
    if (this.#stop.signal.aborted) return
    this.#failure = error
    this.#stop.abort()
    this.#waiters.cancelAll()
  }

  /** Stops the loop and waits for the batch being applied, if any. */
  async stop(): Promise<void> {
    this.#stop.abort()
    await this.#done
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal
    let wait = RETRY_FIRST_MS
    while (!signal.aborted) {
      const iteration = new AbortController()
      this.#iteration = iteration
      const stop = (): void => iteration.abort()
      signal.addEventListener('abort', stop, { once: true })
      try {
        for await (const commit of this.#log.commits(this.#store.position, iteration.signal)) {
          await this.#apply(commit)
          wait = RETRY_FIRST_MS
        }
      } catch (err) {
        if (signal.aborted) return
        if (iteration.signal.aborted) continue
        if (isPriceStoreError(err, 'PRICE_NOT_OPEN')) {
          this.#stop.abort()
          return
        }
        if (isPriceStoreError(err)) {
          this.fail(err)
          return
        }
        // The log could not be read (connection lost, leader moving): follow it again from where the store stands.
        this.#onError(err)
        await pause(wait, signal)
        wait = Math.min(wait * 2, RETRY_LONGEST_MS)
      } finally {
        signal.removeEventListener('abort', stop)
      }
    }
  }

  async #apply(commit: CommitMessage): Promise<void> {
    this.counters.delivered = Math.max(this.counters.delivered, commit.position)
    const store = this.#store
    // Delivered again (a redelivery after a reconnect): the store already holds it.
    if (commit.position <= store.position) return
    // A commit past the next position: the messages between were parts, or the log dropped them (retention)
    // while this node was away, and a consumer asked for them starts at the log's first message instead. The log's
    // start only moves forward, so if it still holds the next position now, nothing was skipped.
    // No question to ask when the messages between are exactly this commit's own parts (one writer's large batch).
    const decoded = this.#decode(commit)
    if (commit.position > store.position + 1 && !coversGap(decoded, store.position, commit.position)) {
      const { first } = await this.#log.bounds()
      if (first > store.position + 1) throw trimmedPast(this.#log.name, store.position, first)
    }
    if (commit.provider !== store.provider.id) {
      throw diverged(`the commit at position ${commit.position} of ${this.#log.name} carries records of provider ${JSON.stringify(commit.provider)}, and this store serves ${JSON.stringify(store.provider.id)}`, store.position)
    }
    // Before a commit goes on top of the store's newest one, the log must still hold that one where the store has
    // it: a log that lost acknowledged messages and reused their positions may show it only now (history-check.ts).
    // Asked while the commit's parts are read.
    const [records] = await Promise.all([this.#recordsOf(commit, decoded), checkHistory(store, this.#log)])
    await store.putBatch(records, commit.id === undefined ? { position: commit.position } : { position: commit.position, commitId: commit.id })
    this.counters.batches++
    this.counters.records += records.length
    this.#waiters.reached(commit.position)
  }

  #decode(commit: CommitMessage): DecodedCommit {
    try {
      return decodeCommit(commit.data)
    } catch (err) {
      throw corrupt(`commit ${commit.position} of ${this.#log.name}`, err)
    }
  }

  async #recordsOf(commit: CommitMessage, decoded: DecodedCommit): Promise<PriceRecord[]> {
    const provider = this.#store.provider
    const where = `commit ${commit.position} of ${this.#log.name}`
    if (decoded.kind === 'inline') {
      try {
        return decodeEntry(decoded.entry, provider, where)
      } catch (err) {
        throw corrupt(where, err)
      }
    }
    // Asked for at once: each is a round trip to the stream's leader.
    const parts = await Promise.all(decoded.parts.map((position) => this.#log.readPart(position)))
    const records: PriceRecord[] = []
    for (const [index, position] of decoded.parts.entries()) {
      const part = parts[index]
      if (part === undefined) {
        throw diverged(`part ${position} of the commit at position ${commit.position} is no longer in ${this.#log.name}: re-seed this node from a backup of a node that is up to date`, this.#store.position)
      }
      try {
        records.push(...decodeEntry(part, provider, `part ${position} of ${where}`))
      } catch (err) {
        throw corrupt(`part ${position} of ${where}`, err)
      }
    }
    return records
  }
}

/** Whether the positions strictly between `position` and `commit` are exactly the commit's own parts. */
function coversGap(decoded: DecodedCommit, position: number, commit: number): boolean {
  if (decoded.kind !== 'parts' || decoded.parts.length !== commit - position - 1) return false
  return decoded.parts.every((part, index) => part === position + 1 + index)
}

/** The log no longer holds the messages after a store's position. */
export function trimmedPast(log: string, position: number, first: number): PriceStoreError {
  return diverged(
    `this store is at position ${position} and the stream ${log} now starts at ${first}: the commits between are gone (retention). Re-seed this node from a backup of a node that is up to date (price-store backup), then start it again`,
    position,
  )
}

function diverged(message: string, position: number): PriceStoreError {
  return new PriceStoreError('PRICE_REPLICA_DIVERGED', message, { details: { position } })
}

function corrupt(where: string, cause: unknown): PriceStoreError {
  if (isPriceStoreError(cause)) return cause
  return new PriceStoreError('PRICE_CORRUPT_VALUE', `the ${where} does not decode as a batch of records`, { cause })
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
