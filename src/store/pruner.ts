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
import { describeValue } from '../errors.js'
import { checkSignal } from '../rules/abort.js'
import { compareIds } from '../rules/compare-ids.js'
import { checkSymbol } from '../engine/parse-query.js'
import { fail } from '../rules/query-errors.js'
import { readHeads } from '../keys/heads-codec.js'
import {
  PERIOD_MS, chunkKey, chunkPeriodStart, headsKey, headsRange, periodOf, readChunkKey, readHeadsPeriod, symbolKey,
} from '../keys/key-layout.js'
import type { Provider } from '../types.js'
import type { BytesSublevel, PrunedChunk, ReadState, ReadSublevels, ReadView } from './read-view.js'
import { RootBatch } from './root-batch.js'
import type { Row } from './row.js'
import { putChunk } from './sealer.js'
import type { Sealer } from './sealer.js'
import { toStorageError } from './storage-errors.js'

/** Pruning work per turn of the write queue before it lets queued writes run. */
const SLICE_MS = 40
/** Chunk keys listed per step: one step deletes at most about this many chunk parts. */
const STEP_KEYS = 512
/** The last period a key can name. */
const LAST_PERIOD = 0xffff_ffff

/** What {@link PriceStore.prune} takes. */
export interface PruneOptions {
  /** Records with `timestamp < before` go (ms since the epoch, a safe integer >= 0); nothing at or after it is touched. */
  readonly before: number
  /** Only this symbol's records; every symbol's when left out. */
  readonly symbol?: string
  /** Count what would go, and remove nothing. */
  readonly dryRun?: boolean
  /** Stops the prune between two steps (what was removed stays removed) with `PRICE_ABORTED`. */
  readonly signal?: AbortSignal
  /** Called between turns of steps (and at the end) with the totals so far. */
  readonly onProgress?: (progress: PruneResult) => void
}

/** What a prune removed (or, in a dry run, would remove). */
export interface PruneResult {
  /** Records removed. */
  readonly records: number
  /** Hours (UTC) that lost records, whole or in part. */
  readonly hours: number
  /** Symbols left with no record, which left the symbol index (`symbols()`), in UTF-8 byte order. */
  readonly symbols: readonly string[]
}

/** Checked prune options. */
export interface PruneRequest {
  readonly before: number
  readonly symbol: string | undefined
  readonly dryRun: boolean
  readonly signal: AbortSignal | undefined
  readonly onProgress: ((progress: PruneResult) => void) | undefined
}

/**
 * Checks the options of a prune.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (options, `dryRun`, `onProgress`, `signal`),
 *   `PRICE_INVALID_RANGE` (`before`), `PRICE_INVALID_SYMBOL` (`symbol`)
 */
export function toPruneRequest(options: unknown): PruneRequest {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw fail('PRICE_INVALID_QUERY', 'options', `prune options must be an object { before, symbol? } (got ${describeValue(options)})`)
  }
  const { before, symbol, dryRun = false, signal, onProgress } = options as Partial<PruneOptions>
  if (typeof before !== 'number' || !Number.isSafeInteger(before) || before < 0) {
    throw fail('PRICE_INVALID_RANGE', 'before', `before must be a safe integer >= 0, ms since the epoch (got ${describeValue(before)})`)
  }
  if (symbol !== undefined) checkSymbol('symbol', symbol)
  if (typeof dryRun !== 'boolean') throw fail('PRICE_INVALID_QUERY', 'dryRun', `dryRun must be a boolean (got ${describeValue(dryRun)})`)
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw fail('PRICE_INVALID_QUERY', 'onProgress', `onProgress must be a function (got ${describeValue(onProgress)})`)
  }
  return { before, symbol, dryRun, signal: checkSignal(signal), onProgress }
}

/** What pruning needs from its store. */
export interface PrunerContext {
  readonly db: AbstractLevel<any, any, any>
  readonly levels: ReadSublevels
  readonly state: ReadState
  readonly sealer: Sealer
  readonly provider: Provider
  readonly prefixes: { readonly log: Uint8Array; readonly chunks: Uint8Array; readonly heads: Uint8Array; readonly symbols: Uint8Array }
  readonly sync: boolean
  /** The store's set of symbols in the symbol index: a symbol left empty is taken out of it. */
  readonly knownSymbols: Set<string>
}

/** One prune under way: where it is, and what it removed so far. */
export class PruneRun {
  readonly request: PruneRequest
  /** The last hour holding records to remove. */
  readonly lastHour: number
  /** Every symbol: the last chunk key done. One symbol: the next hour to look at. */
  cursor: Buffer | undefined
  nextHour = 0
  /** A lower bound on each symbol's newest sealed hour (seals only add later ones), to skip most emptiness checks. */
  readonly newest = new Map<string, number>()
  #records = 0
  #hours = 0
  #lastHour = -1
  readonly #emptied: string[] = []

  constructor(request: PruneRequest) {
    this.request = request
    this.lastHour = periodOf(request.before - 1)
  }

  /** The totals so far. */
  result(): PruneResult {
    return Object.freeze({ records: this.#records, hours: this.#hours, symbols: Object.freeze([...this.#emptied].sort(compareIds)) })
  }

  count(period: number, records: number, emptied: readonly string[]): void {
    this.#records += records
    if (records > 0 && period !== this.#lastHour) this.#hours++
    if (records > 0) this.#lastHour = period
    this.#emptied.push(...emptied)
  }
}

/** One step's work: chunks of one hour, each with the parts it has. */
interface StepGroup {
  readonly period: number
  readonly parts: ReadonlyMap<string, readonly number[]>
}

/** Runs prunes a turn at a time; the store calls {@link Pruner.turn} in its write queue. */
export class Pruner {
  readonly #context: PrunerContext

  constructor(context: PrunerContext) {
    this.#context = context
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
    const range = { ...(run.cursor === undefined ? {} : { gt: run.cursor }), lt: chunkPeriodStart(run.lastHour + 1) }
    const keys = await this.#context.levels.chunks.keys({ ...range, limit: STEP_KEYS }).all()
    if (keys.length === 0) return undefined
    const parsed = keys.map(readChunkKey)
    const period = (parsed[0] as { period: number }).period
    const parts = new Map<string, number[]>()
    for (const key of parsed) {
      if (key.period !== period) break
      let list = parts.get(key.symbol)
      if (list === undefined) parts.set(key.symbol, (list = []))
      list.push(key.part)
    }
    const { symbol: last, period: lastPeriod } = parsed[parsed.length - 1] as { symbol: string; period: number }
    if (keys.length === STEP_KEYS && lastPeriod === period) {
      // The listing may have stopped inside the last symbol's parts: list it whole, or leave it to the next step.
      if (parts.size === 1) parts.set(last, await this.#partsOf(period, last))
      else parts.delete(last)
    }
    run.cursor = chunkKey(period, [...parts.keys()].at(-1) as string, 0xffff)
    return { period, parts }
  }

  /** The oldest hour left to prune of one symbol. */
  async #nextHourOf(run: PruneRun, symbol: string): Promise<StepGroup | undefined> {
    if (run.nextHour > run.lastHour) return undefined
    const range = headsRange(symbol, run.nextHour, run.lastHour)
    const [key] = await this.#context.levels.heads.keys({ ...range, limit: 1 }).all()
    if (key === undefined) return undefined
    const period = readHeadsPeriod(key)
    run.nextHour = period + 1
    return { period, parts: new Map([[symbol, await this.#partsOf(period, symbol)]]) }
  }

  async #partsOf(period: number, symbol: string): Promise<number[]> {
    const keys = await this.#context.levels.chunks.keys({ gte: chunkKey(period, symbol, 0), lte: chunkKey(period, symbol, 0xffff) }).all()
    return keys.map((key) => readChunkKey(key).part)
  }

  /** Deletes or rewrites the group's chunks, and drops the symbols it leaves empty, in one atomic write. */
  async #prune(run: PruneRun, { period, parts }: StepGroup): Promise<void> {
    const { db, state, levels, prefixes, provider, knownSymbols, sync } = this.#context
    const { before } = run.request
    const to = Math.min((period + 1) * PERIOD_MS, before)
    const batch = new RootBatch()
    const pruned: PrunedChunk[] = []
    const gone: string[] = []
    let records = 0
    const view = to < (period + 1) * PERIOD_MS ? state.view(db, levels) : undefined
    try {
      for (const [symbol, held] of parts) {
        let kept: readonly Row[] = []
        if (view === undefined) {
          records += this.#recordCount(symbol, period)
        } else {
          // The hour holding `before`: its chunk is written again with the records at or after it.
          const rows = view.periodRows(symbol, period)
          kept = rows.filter((row) => row.timestamp >= before)
          if (kept.length === rows.length) continue
          records += rows.length - kept.length
        }
        const written = kept.length === 0 ? 0 : putChunk(batch, prefixes, period, symbol, kept, provider).parts
        for (const part of held) if (part >= written) batch.del(prefixes.chunks, chunkKey(period, symbol, part))
        if (written === 0) {
          batch.del(prefixes.heads, headsKey(symbol, period))
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
    for (const symbol of emptied) batch.del(prefixes.symbols, symbolKey(symbol))
    state.beginPrune(pruned)
    try {
      await batch.write(db, sync)
    } catch (err) {
      // LevelDB may have committed it: the caches can no longer vouch for what they hold.
      state.writeFailed()
      throw toStorageError(err, 'prune records')
    }
    // One synchronous step after the commit, as for a batch.
    for (const symbol of emptied) knownSymbols.delete(symbol)
    state.applyPrune(pruned, emptied.length === 0 ? state.symbols : [...knownSymbols].sort(compareIds))
    run.count(period, records, emptied)
  }

  /** The record count of a sealed chunk, from its heads entry. */
  #recordCount(symbol: string, period: number): number {
    const bytes = this.#context.levels.heads.getSync(headsKey(symbol, period)) as Buffer | undefined
    if (bytes === undefined) return 0
    try {
      return readHeads(bytes, period * PERIOD_MS, () => {})
    } catch {
      // A damaged heads entry is deleted with its chunk all the same: the count is only reported.
      return 0
    }
  }

  /**
   * Whether `symbol` has no record left once its chunk of `period` is gone:
   * no open rows, and no other chunk (a later one, or an earlier one a late
   * record sealed while the prune ran).
   */
  async #leftEmpty(run: PruneRun, symbol: string, period: number): Promise<boolean> {
    if (this.#context.state.open.periodsOf(symbol).length > 0) return false
    const heads = this.#context.levels.heads as BytesSublevel
    const all = headsRange(symbol, 0, LAST_PERIOD)
    let newest = run.newest.get(symbol)
    if (newest === undefined || newest <= period) {
      const [last] = await heads.keys({ ...all, reverse: true, limit: 1 }).all()
      newest = last === undefined ? -1 : readHeadsPeriod(last)
      run.newest.set(symbol, newest)
    }
    if (newest > period) return false
    const [first] = await heads.keys({ ...all, limit: 1 }).all()
    return first === undefined || readHeadsPeriod(first) >= period
  }

  /** A dry run: what the prune would remove, counted from one view, in one turn. */
  async #preview(run: PruneRun): Promise<void> {
    const { state, db, levels, knownSymbols } = this.#context
    const { before, symbol } = run.request
    const symbols = symbol === undefined ? state.symbols : knownSymbols.has(symbol) ? [symbol] : []
    const view = state.view(db, levels)
    try {
      const counts = new Map<number, number>()
      const emptied: string[] = []
      for (const name of symbols) {
        for await (const period of view.hoursOf(name, 0, run.lastHour)) {
          const whole = (period + 1) * PERIOD_MS <= before && state.open.rows(name, period).length === 0
          const count = whole ? this.#recordCount(name, period) : countBefore(view, name, period, before)
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

function countBefore(view: ReadView, symbol: string, period: number, before: number): number {
  return view.periodRows(symbol, period).filter((row) => row.timestamp < before).length
}

async function hasRecordFrom(view: ReadView, symbol: string, from: number): Promise<boolean> {
  for await (const rows of view.scan(symbol, { from, reverse: false, limit: 1 })) if (rows.length > 0) return true
  return false
}
