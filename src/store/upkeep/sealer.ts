/**
 * Sealing: moving closed hours from the log (and the open area) into
 * chunks and heads entries, in the store's write queue.
 *
 * An hour is sealed in steps, each one atomic LevelDB write holding the new
 * chunks and heads entries of a few of its symbols (an hour's existing chunk
 * is read and the open rows merged in: an open row replaces a sealed one
 * with the same timestamp and id). The open area keeps the hour's rows until
 * a last step deletes the hour's log entries; meanwhile readers merge both
 * and see each record once. A crash between steps leaves the log entries, so
 * reopening replays them and sealing runs again: writing the same chunks
 * twice is harmless. Steps run for at most {@link SLICE_MS} per turn of the
 * write queue, so a batch never waits long behind a seal.
 */
import type { AbstractLevel } from 'abstract-level'
import { HEAD_MS, PERIOD_MS } from '../../keys/key-layout.js'
import { RootBatch } from '../db/root-batch.js'
import { toStorageError } from '../db/storage-errors.js'
import type { HeadRows } from '../heads/heads-entry.js'
import type { ReadState } from '../read/read-state.js'
import { putChunk, type ChunkTargets } from './chunk-writer.js'

/**
 * An hour is due once a record this far past its end has been written, so
 * a feed's stragglers usually land before its chunks are.
 */
export const SEAL_GRACE_MS = HEAD_MS
/** Sealing work per turn of the write queue before it lets queued writes run. */
const SLICE_MS = 40
/** Chunk bytes per atomic seal step. */
const STEP_BYTES = 4 * 1024 * 1024

/** What sealing needs from its store. */
export interface SealerContext {
  readonly db: AbstractLevel<any, any, any>
  readonly state: ReadState
  /** Where chunks and heads entries go. */
  readonly targets: ChunkTargets
  /** The log's key prefix in the root database, to delete a sealed hour's entries. */
  readonly logPrefix: Uint8Array
  readonly sync: boolean
  readonly openBytes: number
}

/** An hour being sealed: the symbols still to write, and how many log entries it had when it began. */
interface SealTask {
  readonly period: number
  readonly symbols: string[]
  readonly logEntries: number
}

/** Seals due hours, a slice of work at a time. */
export class Sealer {
  readonly #context: SealerContext
  #task: SealTask | undefined
  /** The newest timestamp written: hours that ended well before it are due. */
  #horizon = 0

  constructor(context: SealerContext) {
    this.#context = context
  }

  /** The newest timestamp written (or replayed from the log on open). */
  get horizon(): number {
    return this.#horizon
  }

  /** Takes in the newest timestamp of a committed batch (in the store's memory step after it). */
  advanceHorizon(timestamp: number): void {
    if (timestamp > this.#horizon) this.#horizon = timestamp
  }

  /** Starts again from the newest timestamp found in the log when the store opens. */
  resetHorizon(timestamp: number): void {
    this.#horizon = timestamp
  }

  /**
   * Seals due hours for up to one slice of time. Returns true when due work
   * is left, so the caller queues another turn after the writes waiting now.
   * @throws PriceStoreError when a step's write fails (its rows stay open)
   */
  async runDue(): Promise<boolean> {
    const deadline = performance.now() + SLICE_MS
    while (this.#task !== undefined || this.#duePeriod() !== undefined) {
      if (performance.now() > deadline) return true
      await this.#step()
    }
    return false
  }

  /** Seals every open hour, due or not (when the store closes). */
  async runAll(): Promise<void> {
    while (await this.stepThrough(Number.POSITIVE_INFINITY));
  }

  /**
   * Runs one seal step (finishing the hour under way first) if any hour up
   * to `last` is open, due or not: a prune seals the hours it is about to
   * delete or rewrite. Returns whether it ran one.
   * @throws PriceStoreError when the step's write fails (its rows stay open)
   */
  async stepThrough(last: number): Promise<boolean> {
    if (this.#task === undefined) {
      const oldest = this.#context.state.open.periods()[0]
      if (oldest === undefined || oldest > last) return false
      this.#begin(oldest)
    }
    await this.#step()
    return true
  }

  /** The oldest open hour if it is due: over for {@link SEAL_GRACE_MS}, or the open area is over its budget. */
  #duePeriod(): number | undefined {
    const open = this.#context.state.open
    const oldest = open.periods()[0]
    if (oldest === undefined) return undefined
    return (oldest + 1) * PERIOD_MS + SEAL_GRACE_MS <= this.#horizon || open.bytes > this.#context.openBytes ? oldest : undefined
  }

  #begin(period: number): SealTask {
    const held = this.#context.state.open.period(period)
    this.#task = { period, symbols: [...(held?.symbols.keys() ?? [])].reverse(), logEntries: held?.logKeys.length ?? 0 }
    return this.#task
  }

  /** One atomic write: chunks of some symbols of the hour, or, once all are written, the deletion of its log entries. */
  async #step(): Promise<void> {
    const { state, targets, logPrefix } = this.#context
    const task = this.#task ?? this.#begin(this.#duePeriod() as number)
    const held = state.open.period(task.period)
    if (held === undefined) {
      this.#task = undefined
      return
    }
    const batch = new RootBatch()
    if (task.symbols.length === 0) {
      if (held.logKeys.length !== task.logEntries) {
        // Records for this hour arrived while it was sealed: seal it again, with them.
        this.#begin(task.period)
        return
      }
      for (const key of held.logKeys) batch.del(logPrefix, key)
      await this.#commit(batch, () => state.applySealEnd(task.period))
      this.#task = undefined
      return
    }
    const heads = new Map<string, HeadRows>()
    const view = state.view()
    try {
      let bytes = 0
      while (bytes < STEP_BYTES && task.symbols.length > 0) {
        // The sealed rows with the open ones merged in.
        const symbol = task.symbols.pop() as string
        const written = putChunk(batch, targets, task.period, symbol, view.periodRows(symbol, task.period))
        heads.set(symbol, written.heads)
        bytes += written.bytes
      }
    } finally {
      await view.close()
    }
    state.beginSeal()
    await this.#commit(batch, () => state.applySealStep(task.period, heads))
  }

  async #commit(batch: RootBatch, apply: () => void): Promise<void> {
    try {
      await batch.write(this.#context.db, this.#context.sync)
    } catch (err) {
      // The hour's rows stay open, so nothing is lost; the step runs again on a later turn.
      this.#task = undefined
      this.#context.state.writeFailed()
      throw toStorageError(err, 'seal an hour of records')
    }
    apply()
  }
}
