/**
 * Pruning: removing every record older than a time (of one symbol, or of
 * all), in the store's write queue, a bounded step at a time.
 *
 * Records are removed from chunks only: the open hours a prune reaches are
 * sealed first (by the sealer, as at close), so no log entry ever has to be
 * cut in two. Then each step is **one atomic LevelDB write** for one hour
 * (a bounded number of its symbols): a chunk wholly older than `before`
 * loses its parts and heads entry; the chunk of the hour holding `before`
 * is rewritten (as sealing writes it) without its older records; a symbol
 * left with no record anywhere leaves the symbol index in the same write.
 * So a crash between steps leaves every record at or after `before` and a
 * consistent store, where running the prune again finishes the work. Hours
 * are visited oldest first, so a whole-hour step reads no record body.
 */
import type { AbstractLevel } from 'abstract-level'
import { PERIOD_MS } from '../../keys/key-layout.js'
import { RootBatch } from '../db/root-batch.js'
import { toStorageError } from '../db/storage-errors.js'
import type { BytesSublevel } from '../db/sublevels.js'
import type { HeadsIndex } from '../heads/heads-index.js'
import type { HourView, PrunedChunk, StoreMemory } from '../chunks/store-memory.js'
import type { Row } from '../rows/row.js'
import type { VerdictIndex } from '../signatures/verdict-index.js'
import type { SymbolSet } from '../symbols/symbol-set.js'
import { putChunk, type ChunkTargets } from '../chunks/chunk-writer.js'
import { ChunkParts, cursorAfter, deleteLeftParts } from '../chunks/chunk-parts.js'
import type { PruneRun } from './prune-request.js'
import type { Sealer } from './sealer.js'

/** Pruning work per turn of the write queue before it lets queued writes run. */
const SLICE_MS = 40
/** Chunk keys listed per step: one step deletes at most about this many chunk parts. */
const STEP_KEYS = 512

/** What pruning needs from its store. */
export interface PrunerContext {
  readonly db: AbstractLevel<any, any, any>
  readonly state: StoreMemory
  readonly sealer: Sealer
  /** The chunks sublevel, whose keys a prune lists. */
  readonly chunks: BytesSublevel
  readonly heads: HeadsIndex
  /** Where a rewritten chunk goes. */
  readonly targets: ChunkTargets
  /** The symbol set: a symbol left empty is taken out of it. */
  readonly symbols: SymbolSet
  /** The signature verdicts, deleted with their records. */
  readonly verdicts: VerdictIndex
  readonly sync: boolean
}

/** One step's work: chunks of one hour, each with the parts it has. */
interface StepGroup {
  readonly period: number
  readonly parts: ReadonlyMap<string, readonly number[]>
}

/** Runs prunes a turn at a time; upkeep (upkeep.ts) calls {@link Pruner.turn} in the store's write queue. */
export class Pruner {
  readonly #context: PrunerContext
  readonly #parts: ChunkParts

  constructor(context: PrunerContext) {
    this.#context = context
    this.#parts = new ChunkParts(context.chunks)
  }

  /**
   * Prunes for up to one slice of time. Returns true when the prune is
   * complete. A dry run counts in one turn and writes nothing.
   * @throws PriceStoreError when a step's write fails (`PRICE_STORAGE_ERROR`) or a chunk it rewrites does not decode
   */
  async turn(run: PruneRun): Promise<boolean> {
    if (run.request.before === 0) return true
    if (run.request.dryRun) {
      await this.#preview(run)
      return true
    }
    const deadline = performance.now() + SLICE_MS
    do {
      if (await this.#step(run)) return true
    } while (performance.now() < deadline)
    return false
  }

  /** One atomic write: a seal step of an open hour to prune, or the chunks of one hour. Returns true when nothing is left to do. */
  async #step(run: PruneRun): Promise<boolean> {
    const { state, sealer } = this.#context
    const { symbol } = run.request
    const firstOpen = symbol === undefined ? state.open.periods()[0] : state.open.periodsOf(symbol)[0]
    if (firstOpen !== undefined && firstOpen <= run.lastHour) {
      await sealer.stepThrough(run.lastHour)
      return false
    }
    const group = symbol === undefined ? await this.#nextHourOfAll(run) : await this.#nextHourOf(run, symbol)
    if (group === undefined) return true
    await this.#prune(run, group)
    return false
  }

  /** The next chunks of any symbol in the oldest hour left to prune, at most about {@link STEP_KEYS} parts. */
  async #nextHourOfAll(run: PruneRun): Promise<StepGroup | undefined> {
    const hour = await this.#parts.firstHour(run.cursor, run.lastHour + 1, STEP_KEYS)
    if (hour === undefined) return undefined
    const { period, parts, last } = hour
    if (hour.cut) {
      // The listing may have stopped inside the last symbol's parts: list it whole, or leave it to the next step.
      if (parts.size === 1) parts.set(last, await this.#parts.of(period, last))
      else parts.delete(last)
    }
    run.cursor = cursorAfter(period, [...parts.keys()].at(-1) as string)
    return { period, parts }
  }

  /** The oldest hour left to prune of one symbol. */
  async #nextHourOf(run: PruneRun, symbol: string): Promise<StepGroup | undefined> {
    if (run.nextHour > run.lastHour) return undefined
    const period = await this.#context.heads.edgePeriod(symbol, run.nextHour, run.lastHour, false)
    if (period === undefined) return undefined
    run.nextHour = period + 1
    return { period, parts: new Map([[symbol, await this.#parts.of(period, symbol)]]) }
  }

  /** Deletes or rewrites the group's chunks, and drops the symbols it leaves empty, in one atomic write. */
  async #prune(run: PruneRun, { period, parts }: StepGroup): Promise<void> {
    const { db, state, heads, targets, symbols, verdicts, sync } = this.#context
    const { before } = run.request
    const to = Math.min((period + 1) * PERIOD_MS, before)
    const batch = new RootBatch()
    const pruned: PrunedChunk[] = []
    const gone: string[] = []
    let records = 0
    const view = to < (period + 1) * PERIOD_MS ? state.view() : undefined
    try {
      for (const [symbol, held] of parts) {
        let kept: readonly Row[] = []
        if (view === undefined) {
          records += heads.recordCount(symbol, period)
        } else {
          // The hour holding `before`: its chunk is written again with the records at or after it.
          const rows = view.periodRows(symbol, period)
          kept = rows.filter((row) => row.timestamp >= before)
          if (kept.length === rows.length) continue
          records += rows.length - kept.length
        }
        const written = kept.length === 0 ? 0 : putChunk(batch, targets, period, symbol, kept).parts
        deleteLeftParts(batch, targets.chunksPrefix, period, symbol, held, written)
        if (written === 0) {
          heads.delete(batch, symbol, period)
          gone.push(symbol)
        }
        pruned.push({ symbol, period, from: period * PERIOD_MS, to })
      }
    } finally {
      await view?.close()
    }
    if (pruned.length === 0) return
    const emptied = (await Promise.all(gone.map(async (symbol) => ((await this.#leftEmpty(run, symbol, period)) ? symbol : undefined))))
      .filter((symbol): symbol is string => symbol !== undefined)
    symbols.stageRemoval(batch, emptied)
    for (const chunk of pruned) await verdicts.stageDeletes(batch, chunk.symbol, chunk.from, chunk.to - 1)
    state.beginPrune(pruned)
    try {
      await batch.write(db, sync)
    } catch (err) {
      // LevelDB may have committed it: the caches can no longer vouch for what they hold.
      state.writeFailed()
      throw toStorageError(err, 'prune records')
    }
    // One synchronous step after the commit, as for a batch (the symbol set included).
    state.applyPrune(pruned, emptied)
    run.count(period, records, emptied)
  }

  /**
   * Whether `symbol` has no record left once its chunk of `period` is gone:
   * no open rows, and no other chunk (a later one, or an earlier one a late
   * record sealed while the prune ran).
   */
  async #leftEmpty(run: PruneRun, symbol: string, period: number): Promise<boolean> {
    if (this.#context.state.open.periodsOf(symbol).length > 0) return false
    const { heads } = this.#context
    let newest = run.newest.get(symbol)
    if (newest === undefined || newest <= period) {
      newest = (await heads.edgeOfSymbol(symbol, true)) ?? -1
      run.newest.set(symbol, newest)
    }
    if (newest > period) return false
    const first = await heads.edgeOfSymbol(symbol, false)
    return first === undefined || first >= period
  }

  /** A dry run: what the prune would remove, counted from one view, in one turn. */
  async #preview(run: PruneRun): Promise<void> {
    const { state, heads } = this.#context
    const { before, symbol } = run.request
    const symbols = symbol === undefined ? state.symbols : state.has(symbol) ? [symbol] : []
    const view = state.view()
    try {
      const counts = new Map<number, number>()
      const emptied: string[] = []
      for (const name of symbols) {
        for await (const period of view.hoursOf(name, 0, run.lastHour)) {
          const whole = (period + 1) * PERIOD_MS <= before && state.open.rows(name, period).length === 0
          const count = whole ? heads.recordCount(name, period) : countBefore(view, name, period, before)
          if (count > 0) counts.set(period, (counts.get(period) ?? 0) + count)
        }
        if (!(await hasRecordFrom(view, name, before))) emptied.push(name)
      }
      for (const period of [...counts.keys()].sort((a, b) => a - b)) run.count(period, counts.get(period) as number, [])
      run.count(-1, 0, emptied)
    } finally {
      await view.close()
    }
  }
}

function countBefore(view: HourView, symbol: string, period: number, before: number): number {
  return view.periodRows(symbol, period).filter((row) => row.timestamp < before).length
}

async function hasRecordFrom(view: HourView, symbol: string, from: number): Promise<boolean> {
  for await (const rows of view.scan(symbol, { from, reverse: false, limit: 1 })) if (rows.length > 0) return true
  return false
}
