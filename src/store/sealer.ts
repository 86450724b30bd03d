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
import { MAX_PART_RECORDS, encodeChunkPart } from '../keys/chunk-codec.js'
import type { ChunkRecord } from '../keys/chunk-codec.js'
import { HEAD_MS, PERIOD_MS, chunkKey, headsKey } from '../keys/key-layout.js'
import type { Provider } from '../types.js'
import { headRows, headsEntryOf, type HeadRows } from './heads-index.js'
import type { ReadState, ReadSublevels, ReadView } from './read-view.js'
import { RootBatch } from './root-batch.js'
import type { Row } from './row.js'
import { toStorageError } from './storage-errors.js'

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
  readonly levels: ReadSublevels
  readonly state: ReadState
  readonly provider: Provider
  readonly prefixes: { readonly log: Uint8Array; readonly chunks: Uint8Array; readonly heads: Uint8Array }
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
  horizon = 0

  constructor(context: SealerContext) {
    this.#context = context
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
    return (oldest + 1) * PERIOD_MS + SEAL_GRACE_MS <= this.horizon || open.bytes > this.#context.openBytes ? oldest : undefined
  }

  #begin(period: number): SealTask {
    const held = this.#context.state.open.period(period)
    this.#task = { period, symbols: [...(held?.symbols.keys() ?? [])].reverse(), logEntries: held?.logKeys.length ?? 0 }
    return this.#task
  }

  /** One atomic write: chunks of some symbols of the hour, or, once all are written, the deletion of its log entries. */
  async #step(): Promise<void> {
    const { state, db, levels, prefixes, provider } = this.#context
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
      for (const key of held.logKeys) batch.del(prefixes.log, key)
      await this.#commit(batch, () => state.applySealEnd(task.period))
      this.#task = undefined
      return
    }
    const heads = new Map<string, HeadRows>()
    const view = state.view(db, levels)
    try {
      let bytes = 0
      while (bytes < STEP_BYTES && task.symbols.length > 0) {
        const symbol = task.symbols.pop() as string
        bytes += writeChunk(batch, view, task.period, symbol, provider, prefixes, heads)
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

/**
 * Puts the chunk parts and heads entry of `symbol` in `period` (the sealed
 * rows with the open ones merged in) into `batch`; returns the chunk's bytes.
 */
function writeChunk(
  batch: RootBatch, view: ReadView, period: number, symbol: string, provider: Provider,
  prefixes: SealerContext['prefixes'], heads: Map<string, HeadRows>,
): number {
  const written = putChunk(batch, prefixes, period, symbol, view.periodRows(symbol, period), provider)
  heads.set(symbol, written.heads)
  return written.bytes
}

/**
 * Puts the chunk parts and heads entry of `symbol` in `period` holding
 * `rows` (ascending, none repeated, at least one) into `batch`: what
 * sealing writes, and what a prune writes for the hour it cuts in two.
 * Returns the heads as rows, the chunk's bytes and its part count.
 */
export function putChunk(
  batch: RootBatch, prefixes: SealerContext['prefixes'], period: number, symbol: string, rows: readonly Row[], provider: Provider,
): { heads: HeadRows; bytes: number; parts: number } {
  const records = rows.map(toChunkRecord)
  const parts = Math.ceil(records.length / MAX_PART_RECORDS)
  let bytes = 0
  for (let part = 0; part < parts; part++) {
    const value = encodeChunkPart(period * PERIOD_MS, parts, records.slice(part * MAX_PART_RECORDS, (part + 1) * MAX_PART_RECORDS))
    batch.put(prefixes.chunks, chunkKey(period, symbol, part), value)
    bytes += value.length
  }
  const entry = headsEntryOf(period, records)
  batch.put(prefixes.heads, headsKey(symbol, period), entry)
  return { heads: headRows(symbol, period, entry, provider), bytes, parts }
}

/** A row's stored parts, with its id as UTF-8. */
function toChunkRecord(row: Row): ChunkRecord {
  return { timestamp: row.timestamp, idBytes: row.idIsUtf8 ? row.idBytes : Buffer.from(row.id, 'utf8'), value: row.value }
}
