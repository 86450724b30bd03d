/**
 * Sealing: moving closed hours from the log (and the open area) into
 * chunks and heads entries, in the store's write queue.
 *
 * Hours are sealed in steps, each one atomic LevelDB write of up to
 * {@link STEP_BYTES} of chunks: the symbols of one hour or of several
 * (oldest first), and the deletion of the log entries of each hour whose
 * last symbol it holds. A symbol's open rows join an hour sealed before as
 * a delta part when they are few (see chunk-writer.ts); otherwise the
 * hour's chunk is read, the open rows merged in (an open row replaces a
 * sealed one with the same timestamp and id) and written whole. The open
 * area keeps an hour's rows until the write deleting its log entries
 * commits; meanwhile readers merge both and see each record once. A crash
 * between steps leaves the log entries, so reopening replays them and
 * sealing runs again: writing the same chunks twice is harmless, and a
 * delta part written twice holds the same rows. Steps run for at most
 * {@link SLICE_MS} per turn of the write queue, so a batch never waits long
 * behind a seal.
 */
import type { AbstractLevel } from 'abstract-level'
import { HEAD_MS, PERIOD_MS } from '../../keys/key-layout.js'
import { RootBatch } from '../db/root-batch.js'
import { toStorageError } from '../db/storage-errors.js'
import type { HeadRows } from '../heads/heads-entry.js'
import type { OpenWrite } from '../rows/open-area.js'
import type { HourView, StoreMemory } from '../chunks/store-memory.js'
import { joinsAsDelta, putChunk, putDelta, type ChunkTargets, type ChunkWrite } from '../chunks/chunk-writer.js'

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
  readonly state: StoreMemory
  /** Where chunks and heads entries go. */
  readonly targets: ChunkTargets
  /** The log's key prefix in the root database, to delete a sealed hour's entries. */
  readonly logPrefix: Uint8Array
  readonly sync: boolean
  readonly openBytes: number
}

/** An hour being sealed: the symbols still to write, and the writes (log entries) it held when it began, oldest first. */
interface SealTask {
  readonly period: number
  readonly symbols: string[]
  readonly writes: readonly OpenWrite[]
}

/** What one seal step puts in its atomic write, to take in once it commits. */
interface StepWrites {
  readonly batch: RootBatch
  /** The new heads of each symbol written, by hour. */
  readonly heads: Map<number, Map<string, HeadRows>>
  /** Hours whose log entries the write deletes, with how many it deletes (oldest first). */
  readonly ended: Map<number, number>
  bytes: number
}

/** Seals due hours, a slice of work at a time. */
export class Sealer {
  readonly #context: SealerContext
  /** An hour too large for one step, left half written by the last one. */
  #task: SealTask | undefined
  /** The newest timestamp written: hours that ended well before it are due. */
  #horizon = 0
  /**
   * Open hours whose first rows arrived after they were due (late records,
   * a backfill): sealed only when the open area is over its budget (or when
   * a prune or `close()` asks), so their rows join the chunks in a few large
   * writes rather than one small one after each batch.
   */
  readonly #late = new Set<number>()

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
    this.#late.clear()
  }

  /**
   * Takes in the hours a committed batch opened (that had no open rows
   * before it), before its horizon: those already due are late.
   */
  noteOpened(periods: Iterable<number>): void {
    for (const period of periods) if (this.#dueByTime(period)) this.#late.add(period)
  }

  /**
   * Seals due hours for up to one slice of time. Returns true when due work
   * is left, so the caller queues another turn after the writes waiting now.
   * @throws PriceStoreError when a step's write fails (its rows stay open)
   */
  async runDue(): Promise<boolean> {
    const deadline = performance.now() + SLICE_MS
    while (this.#task !== undefined || this.#firstDue(this.#context.state.open.periods(), 0, undefined, this.#context.state.open.bytes) !== undefined) {
      if (performance.now() > deadline) return true
      await this.#step(undefined)
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
    const oldest = this.#context.state.open.periods()[0]
    if (this.#task === undefined && (oldest === undefined || oldest > last)) return false
    await this.#step(last)
    return true
  }

  /**
   * The first of `periods` (open hours, ascending) from index `from` to seal
   * now, not in `taken` (none by default): any hour up to `last` when given; else the oldest
   * while the open area is over its budget, or an hour over for
   * {@link SEAL_GRACE_MS} that is not late. Returns its index.
   */
  #firstDue(periods: readonly number[], from: number, last: number | undefined, openBytes: number, taken?: { has(period: number): boolean }): number | undefined {
    const overBudget = openBytes > this.#context.openBytes
    for (let i = from; i < periods.length; i++) {
      const period = periods[i] as number
      if (last !== undefined && period > last) return undefined
      // Under the budget only hours due by time qualify, and no hour after one that is not due is: stop there rather
      // than walk the open hours of the future (a feed's clock gone wrong) on every turn of the queue.
      if (last === undefined && !overBudget && !this.#dueByTime(period)) return undefined
      if (taken?.has(period) === true) continue
      if (last !== undefined || overBudget || !this.#late.has(period)) return i
    }
    return undefined
  }

  #dueByTime(period: number): boolean {
    return (period + 1) * PERIOD_MS + SEAL_GRACE_MS <= this.#horizon
  }

  #begin(period: number): SealTask {
    const held = this.#context.state.open.period(period)
    return { period, symbols: [...(held?.symbols.keys() ?? [])].reverse(), writes: held?.writes ?? [] }
  }

  /**
   * One atomic write of up to {@link STEP_BYTES} of chunks: the hour under
   * way, then due hours oldest first, each hour's log entries deleted in the
   * write that holds its last chunks. Small hours (late records, a backfill)
   * share one write, so a batch touching many hours costs a few writes, not
   * two an hour.
   */
  async #step(last: number | undefined): Promise<void> {
    const { state } = this.#context
    const open = state.open
    const periods = open.periods()
    const step: StepWrites = { batch: new RootBatch(), heads: new Map(), ended: new Map(), bytes: 0 }
    let task = this.#task
    let next = 0
    let openBytes = open.bytes
    // Hours this step wrote or ended: never twice in one write.
    const taken = { has: (period: number) => step.heads.has(period) || step.ended.has(period) }
    const view = state.view()
    try {
      while (step.bytes < STEP_BYTES) {
        if (task === undefined) {
          const index = this.#firstDue(periods, next, last, openBytes, taken)
          if (index === undefined) break
          next = index + 1
          task = this.#begin(periods[index] as number)
        }
        const held = open.period(task.period)
        if (held === undefined) {
          task = undefined
          continue
        }
        if (task.symbols.length === 0) {
          // Every record of the entries the hour had when its seal began is in its chunks now: those entries go. Entries
          // that came since (a batch written between steps) keep their rows open, and they join the chunks as delta
          // parts on a later turn; sealing the hour again whole would rewrite it after every such batch.
          if (!startsWith(held.writes, task.writes)) {
            // Not expected (only a seal removes entries, and one seal runs at a time); sealing it again is always safe.
            if (step.heads.has(task.period)) break
            task = this.#begin(task.period)
            continue
          }
          for (const write of task.writes) {
            step.batch.del(this.#context.logPrefix, write.logKey)
            openBytes -= write.bytes
          }
          step.ended.set(task.period, task.writes.length)
          task = undefined
          continue
        }
        this.#writeSymbols(step, view, task)
      }
    } finally {
      await view.close()
    }
    this.#task = task
    if (step.batch.length === 0) return
    state.beginSeal()
    try {
      await step.batch.write(this.#context.db, this.#context.sync)
    } catch (err) {
      // The hours' rows stay open, so nothing is lost; they are sealed again on a later turn.
      this.#task = undefined
      state.writeFailed()
      throw toStorageError(err, 'seal an hour of records')
    }
    state.applySealStep(step.heads)
    state.applySealEnd(step.ended)
    for (const period of step.ended.keys()) {
      // An hour that took batches while it was sealed keeps their rows open: like a late hour's, they wait to join
      // its chunks in one write, unless the hour is not due yet.
      if (state.open.period(period) === undefined) this.#late.delete(period)
      else if (this.#dueByTime(period)) this.#late.add(period)
    }
  }

  /** Writes the chunks of the task's symbols into the step until it is full or the hour's symbols are done. */
  #writeSymbols(step: StepWrites, view: HourView, task: SealTask): void {
    let heads = step.heads.get(task.period)
    if (heads === undefined) step.heads.set(task.period, (heads = new Map()))
    while (step.bytes < STEP_BYTES && task.symbols.length > 0) {
      const symbol = task.symbols.pop() as string
      const written = sealSymbol(step.batch, this.#context.targets, view, task.period, symbol)
      heads.set(symbol, written.heads)
      step.bytes += written.bytes
    }
  }
}

/** Whether `writes` begins with exactly the writes of `prefix` (the same ones, in order). */
function startsWith(writes: readonly OpenWrite[], prefix: readonly OpenWrite[]): boolean {
  if (prefix.length > writes.length) return false
  for (let i = 0; i < prefix.length; i++) if (writes[i] !== prefix[i]) return false
  return true
}

/**
 * Puts the seal of one symbol's open rows in `period` into `batch`: a delta
 * part when the hour is sealed already and they are few enough
 * ({@link joinsAsDelta}), else the whole chunk rewritten with them merged in.
 */
function sealSymbol(batch: RootBatch, targets: ChunkTargets, view: HourView, period: number, symbol: string): ChunkWrite {
  const sealed = view.sealedPeriod(symbol, period)
  const open = view.openArea.rows(symbol, period)
  if (sealed !== undefined && open.length > 0 && joinsAsDelta(sealed, open.length)) return putDelta(batch, targets, period, symbol, sealed, open)
  return putChunk(batch, targets, period, symbol, view.periodRows(symbol, period), sealed?.heads.deltas ?? 0)
}
