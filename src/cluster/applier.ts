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
 * again from where the store stands.
 *
 * A commit this node cannot apply because of what it holds (it does not
 * decode, names another provider, its bytes do not hash to its id, its parts
 * are not its own, a record is refused) is **refused**: passed over, counted
 * and reported, and the loop goes on. The verdict is a function of the
 * message's bytes alone, so every node refuses the same commits and stays
 * identical to the others; one poison message never stops a cluster.
 * What means the store cannot follow this log at all (a part or commit
 * retention removed, a stream that rewrote the store's position, the disk
 * fails) stops the loop with a coded error an operator must handle.
 */
import { PriceStoreError, isPriceStoreError } from '../errors.js'
import type { PriceStore } from '../store/price-store.js'
import { parseSignatureRule, type SignatureOptions } from '../store/signatures/signature-options.js'
import type { PriceRecord } from '../types.js'
import { batchIdOf, decodeCommit, decodeEntry, partsChunks, type DecodedCommit } from './batch-codec.js'
import type { PositionWaiters } from './position-waiters.js'
import { checkHistory } from './history-check.js'
import type { CommitMessage, ReplicationLog } from './replication-log.js'
import type { RefusedCommit } from './replication-status.js'

/** First and longest wait before following the log again after it failed (ms). */
const RETRY_FIRST_MS = 100
const RETRY_LONGEST_MS = 2_000

/** What the loop reports, read by the node's status. */
export interface ApplyCounters {
  batches: number
  records: number
  /** The newest commit position the log delivered (the stream is at least there). */
  delivered: number
  /** Commits refused since the loop started (each one again after a restart: the verdict is the same). */
  refused: number
}

/**
 * Why a commit is refused: thrown inside the loop only, caught by it. Its verdict depends on the commit's bytes (and
 * the provider every node of a cluster serves), never on this node's state.
 */
class Refusal extends Error {
  constructor(readonly code: string, message: string, options?: ErrorOptions) {
    super(message, options)
  }
}

/**
 * Store errors that say a record of the commit is refused (the same on every node with the same options). Any other
 * error of the write (the disk, this store's own data) is this node's, and stops it.
 */
const RECORD_REFUSALS: ReadonlySet<string> = new Set(['PRICE_INVALID_RECORD', 'PRICE_INVALID_SIGNATURE'])

/**
 * The signature options a commit's writer verified it under, which every node applies it under (so that nodes with
 * other options of their own keep the same verdicts); `undefined` for a commit that carries none (a follower's copy
 * of a primary's events) or the store's own: the node's own options then.
 * @throws Refusal PRICE_CORRUPT_VALUE when they do not read as signature options (the same on every node)
 */
function signaturesOf(commit: CommitMessage, log: string, own: string): SignatureOptions | undefined {
  // The same text as the store's own options (every commit, when the nodes share them): nothing to read.
  if (commit.signatures === undefined || commit.signatures === own) return undefined
  try {
    return parseSignatureRule(commit.signatures)
  } catch (err) {
    throw new Refusal('PRICE_CORRUPT_VALUE', `the commit at position ${commit.position} of ${log} carries signature options that do not read: ${(err as Error).message}`, { cause: err })
  }
}

/** Where the loop reports what an operator should hear of (see `ClusterOptions`). */
export interface ApplierReports {
  /** An error that interrupted following the log, which the loop retries. */
  readonly onError: (err: unknown) => void
  /** The error that stopped the loop for good (once). */
  readonly onFailure: (err: PriceStoreError) => void
  /** A commit the loop refused and passed over. */
  readonly onRefused: (refused: RefusedCommit) => void
  /** A commit applied: the store is at `position` now. */
  readonly onApplied: (position: number) => void
}

/** Follows a log into a store until stopped or failed. */
export class Applier {
  readonly #store: PriceStore
  readonly #log: ReplicationLog
  readonly #waiters: PositionWaiters
  #stop = new AbortController()
  readonly counters: ApplyCounters = { batches: 0, records: 0, delivered: 0, refused: 0 }
  #failure: PriceStoreError | undefined
  #lastRefused: RefusedCommit | undefined
  /** The newest commit position passed over as refused (the store's position does not move for it). */
  #refusedThrough = 0
  #done: Promise<void> | undefined
  /** Ends the current following of the log (it starts again from the store's position). */
  #iteration: AbortController | undefined

  readonly #reports: ApplierReports
  /** When the log last delivered a commit (ms since the epoch; 0 before the first). */
  #deliveredAt = 0

  constructor(store: PriceStore, log: ReplicationLog, waiters: PositionWaiters, reports: ApplierReports) {
    this.#store = store
    this.#log = log
    this.#waiters = waiters
    this.#reports = reports
  }

  /** When the log last delivered a commit (ms since the epoch; 0 before the first). */
  get deliveredAt(): number {
    return this.#deliveredAt
  }

  /** The error that stopped the loop, if one did. */
  get failure(): PriceStoreError | undefined {
    return this.#failure
  }

  /** The newest commit the loop refused, if it refused one. */
  get lastRefused(): RefusedCommit | undefined {
    return this.#lastRefused
  }

  /** The newest position the loop has dealt with: applied (the store's position) or refused. */
  get passed(): number {
    return Math.max(this.#store.position, this.#refusedThrough)
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
    this.#reports.onFailure(error)
  }

  /**
   * Starts the loop again after a failure that no longer holds (the log holds the store's commit at its position
   * again, once the commits it lost were sent again: lost-commits.ts).
   */
  async resume(): Promise<void> {
    if (this.#failure === undefined) return
    await this.#done
    this.#failure = undefined
    this.#stop = new AbortController()
    this.#done = this.#run()
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
          try {
            await this.#apply(commit)
          } catch (err) {
            if (!(err instanceof Refusal)) throw err
            this.#refuse(commit.position, err)
          }
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
        this.#reports.onError(err)
        await pause(wait, signal)
        wait = Math.min(wait * 2, RETRY_LONGEST_MS)
      } finally {
        signal.removeEventListener('abort', stop)
      }
    }
  }

  /** Passes over a refused commit: counted, reported, and waiters on its position let go (it will never be applied). */
  #refuse(position: number, refusal: Refusal): void {
    if (position <= this.#refusedThrough) return
    this.#refusedThrough = position
    this.counters.refused++
    this.#lastRefused = { position, code: refusal.code, message: refusal.message }
    this.#reports.onRefused(this.#lastRefused)
    this.#waiters.reached(position)
  }

  async #apply(commit: CommitMessage): Promise<void> {
    this.#deliveredAt = Date.now()
    this.counters.delivered = Math.max(this.counters.delivered, commit.position)
    const store = this.#store
    // Delivered again (a redelivery after a reconnect): the store already holds it, or it was refused.
    if (commit.position <= store.position || commit.position <= this.#refusedThrough) return
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
      throw new Refusal('PRICE_UNSUPPORTED_PROVIDER', `the commit at position ${commit.position} of ${this.#log.name} carries records of provider ${JSON.stringify(commit.provider)}, and this cluster serves ${JSON.stringify(store.provider.id)}`)
    }
    // Before a commit goes on top of the store's newest one, the log must still hold that one where the store has
    // it: a log that lost acknowledged messages and reused their positions may show it only now (history-check.ts).
    // Asked while the commit's parts are read.
    const signatures = signaturesOf(commit, this.#log.name, store.signatureRule)
    const [records] = await Promise.all([this.#recordsOf(commit, decoded), checkHistory(store, this.#log)])
    try {
      await store.putBatch(records, { position: commit.position, ...(commit.id === undefined ? {} : { commitId: commit.id }), ...(signatures === undefined ? {} : { signatures }) })
    } catch (err) {
      if (isPriceStoreError(err) && RECORD_REFUSALS.has(err.code)) throw new Refusal(err.code, `the commit at position ${commit.position} of ${this.#log.name}: ${err.message}`, { cause: err })
      throw err
    }
    this.counters.batches++
    this.counters.records += records.length
    this.#waiters.reached(commit.position)
    this.#reports.onApplied(commit.position)
  }

  #decode(commit: CommitMessage): DecodedCommit {
    try {
      const decoded = decodeCommit(commit.data)
      if (decoded.kind === 'parts' && !decoded.parts.every((part) => Number.isSafeInteger(part) && part > 0 && part < commit.position)) {
        throw new Error('it names a part at a position that is not before it')
      }
      return decoded
    } catch (err) {
      throw refusedAsCorrupt(`the commit at position ${commit.position} of ${this.#log.name} does not decode as a commit`, err)
    }
  }

  async #recordsOf(commit: CommitMessage, decoded: DecodedCommit): Promise<PriceRecord[]> {
    const provider = this.#store.provider
    const where = `commit ${commit.position} of ${this.#log.name}`
    if (decoded.kind === 'inline') {
      checkId(commit, [decoded.entry], where)
      try {
        return decodeEntry(decoded.entry, provider, where)
      } catch (err) {
        throw refusedAsCorrupt(`the ${where} does not decode as a batch of records`, err)
      }
    }
    // Asked for at once: each is a round trip to the stream's leader.
    const parts = await Promise.all(decoded.parts.map((position) => this.#log.readPart(position)))
    const bodies: Uint8Array[] = []
    for (const [index, position] of decoded.parts.entries()) {
      const part = parts[index]
      if (part === undefined) {
        throw diverged(`part ${position} of the commit at position ${commit.position} is no longer in ${this.#log.name}: re-seed this node from a backup of a node that is up to date`, this.#store.position)
      }
      // A part is its batch's: appended under the batch's id and its own index, with the batch's version byte.
      if (commit.id !== undefined && part.id !== `${commit.id}.${index}`) {
        throw new Refusal('PRICE_CORRUPT_VALUE', `the ${where} names position ${position} as its part ${index}, and the message there is ${part.id === undefined ? 'without an id' : `another batch's (${part.id})`}`)
      }
      if (part.data.length === 0 || part.data[0] !== parts[0]!.data[0]) throw new Refusal('PRICE_CORRUPT_VALUE', `part ${position} of the ${where} is not of its batch's version`)
      bodies.push(part.data)
    }
    checkId(commit, partsChunks(bodies), where)
    const records: PriceRecord[] = []
    for (const [index, body] of bodies.entries()) {
      const at = `part ${decoded.parts[index]} of ${where}`
      try {
        records.push(...decodeEntry(body, provider, at))
      } catch (err) {
        throw refusedAsCorrupt(`the ${at} does not decode as a batch of records`, err)
      }
    }
    return records
  }
}

/**
 * A commit's id is the hash of its provider and its batch's bytes (batch-codec.ts): bytes that do not hash to it
 * were changed or forged after the batch was validated.
 */
function checkId(commit: CommitMessage, chunks: readonly Uint8Array[], where: string): void {
  if (commit.id === undefined || commit.provider === undefined) return
  if (batchIdOf(commit.provider, chunks) !== commit.id) {
    throw new Refusal('PRICE_CORRUPT_VALUE', `the ${where} does not hold the batch its id ${commit.id} names (its bytes hash to another id)`)
  }
}

/** Whether the positions strictly between `position` and `commit` are exactly the commit's own parts. */
function coversGap(decoded: DecodedCommit, position: number, commit: number): boolean {
  if (decoded.kind !== 'parts' || decoded.parts.length !== commit - position - 1) return false
  return decoded.parts.every((part, index) => part === position + 1 + index)
}

/** The log no longer holds the messages after a store's position. */
export function trimmedPast(log: string, position: number, first: number): PriceStoreError {
  const error = diverged(
    `this store is at position ${position} and the stream ${log} now starts at ${first}: the commits between are gone (retention). Re-seed this node from a snapshot (serve --nats does so by itself when the stream's bucket holds one: docs/cluster.md) or from a backup of a node that is up to date (price-store backup), then start it again`,
    position,
  )
  trimmed.add(error)
  return error
}

/** The errors that say the log trimmed away commits a store needs: the store is only behind, and a snapshot replaces it. */
const trimmed = new WeakSet<Error>()

/** Whether `err` says the log no longer holds the commits after the store's position (retention). */
export function isTrimmedPast(err: unknown): boolean {
  return err instanceof Error && trimmed.has(err)
}

function diverged(message: string, position: number): PriceStoreError {
  return new PriceStoreError('PRICE_REPLICA_DIVERGED', message, { details: { position } })
}

function refusedAsCorrupt(message: string, cause: unknown): Refusal {
  return new Refusal('PRICE_CORRUPT_VALUE', cause instanceof Error ? `${message}: ${cause.message}` : message, { cause })
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
