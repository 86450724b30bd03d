/**
 * What a store keeps in memory for reading, in one place: every in-memory
 * structure a query reads (the open area, the hot tails, the heads and chunk
 * caches), the one counter of changes to sealed data, and the one rule that
 * lets a query mix them with a LevelDB snapshot. A query reads through a
 * {@link ReadView} (read-view.ts) or a tail view (hot-tails.ts); which of the
 * two answers it is decided in store-reader.ts.
 *
 * ## The rule
 *
 * A record is either sealed (in a chunk on disk) or open (in the log on disk
 * and in the in-memory open area), and a seal copies open rows into a chunk
 * before the open area drops them. So "sealed data ∪ open area, an open row
 * replacing a sealed one with the same (timestamp, id)" is the same set of
 * records before and after a seal, and a query may read sealed data from any
 * moment at or after its open area was captured:
 *
 * 1. memory (open area, tails, caches) changes only after the write that
 *    it mirrors has committed, in one synchronous step;
 * 2. a view takes its snapshot and captures the open area in one
 *    synchronous step, so its snapshot is never older than its open area
 *    (the hot tails are captured apart, whole, in one step of their own);
 * 3. a view reads the caches only when no seal was under way at its
 *    capture and none has committed since, counted by {@link ReadState}'s
 *    one version counter: caches hold sealed data as of the last commit, and
 *    a chunk they list may not be in an older snapshot, while a snapshot
 *    taken during a seal may already hold it (a heads entry's delta count
 *    must match the chunk parts read with it). Otherwise it reads its
 *    snapshot alone;
 * 4. a view may put what it read from its snapshot into a cache only when
 *    no seal has committed or been under way since its capture (its
 *    snapshot may hold a seal its open area does not know of). Otherwise a
 *    later query, whose open area no longer holds the sealed rows, could
 *    miss them.
 *
 * A prune step (`upkeep/pruner.ts`) changes the set of records, so it
 * cannot lean on the merge: it touches sealed data only (the hours it
 * reaches are sealed first), takes its chunks out of the caches and stops
 * cache fills before its write ({@link ReadState.beginPrune}), and advances
 * the counter after it ({@link ReadState.applyPrune}). A view then reads the
 * step's chunks from its own snapshot, before or after the step, never half
 * of it.
 */
import type { AbstractLevel } from 'abstract-level'
import type { Provider } from '../../types.js'
import type { HeadRows } from '../heads/heads-entry.js'
import type { HeadsIndex } from '../heads/heads-index.js'
import { SublevelReads } from '../db/root-reads.js'
import type { BytesSublevel } from '../db/sublevels.js'
import type { SymbolSet } from '../symbols/symbol-set.js'
import type { PrunedChunk, StoreMemory } from '../chunks/store-memory.js'
import { HotTails } from './hot-tails.js'
import { Lru } from './lru.js'
import { OpenArea } from '../rows/open-area.js'
import type { OpenWrite } from '../rows/open-area.js'
import type { Row } from '../rows/row.js'
import { ReadView, type HourSpan } from './read-view.js'
import { cacheKey, type CachedChunk, type ChunkSources, type PeriodHeads, type ViewCaches } from '../chunks/chunk-reader.js'

/** How much a store keeps in memory for reading, and where it reads the disk. */
export interface ReadStateOptions {
  readonly provider: Provider
  /** Newest records per symbol in the hot tails (0: off). */
  readonly recordsPerSymbol: number
  /** Bytes of chunk heads kept decoded-on-demand (0: off). */
  readonly headBytes: number
  /** Bytes of chunks kept for edges and as-of reads (0: off). */
  readonly chunkBytes: number
  readonly db: AbstractLevel<any, any, any>
  readonly chunks: BytesSublevel
  readonly heads: HeadsIndex
  /** The symbol set, which the memory steps of batches and prunes change with the rest. */
  readonly symbols: SymbolSet
}

/** Rough memory of one cached head besides the entry's bytes: the row object and its id (a decoded record adds about 1.5 KB). */
const ROW_OVERHEAD = 256

/**
 * What a store keeps in memory for reading, kept equal to the disk by the
 * rule above. The writers call the `apply*` methods after each commit: the
 * commit step (write/commit-step.ts), the sealer and the pruner.
 */
export class ReadState implements ViewCaches, StoreMemory {
  readonly provider: Provider
  readonly #db: AbstractLevel<any, any, any>
  readonly #sources: ChunkSources
  readonly #symbols: SymbolSet
  #open = OpenArea.EMPTY
  #tails: HotTails | undefined
  readonly #recordsPerSymbol: number
  readonly #heads: Lru<string, PeriodHeads>
  readonly #chunks: Lru<string, CachedChunk>
  /** The one counter: bumped by every change to sealed data (a seal, or a write that failed). */
  #version = 0
  /** True while a seal is between the database and memory. */
  #sealing = false
  /** The first and last hour holding any record (sealed or open); no query looks outside them. */
  #hours: HourSpan = EMPTY_SPAN

  constructor(options: ReadStateOptions) {
    this.provider = options.provider
    this.#db = options.db
    this.#sources = { level: options.chunks, reads: new SublevelReads(options.chunks), heads: options.heads }
    this.#symbols = options.symbols
    this.#recordsPerSymbol = options.recordsPerSymbol
    this.#tails = options.recordsPerSymbol > 0 ? new HotTails(options.recordsPerSymbol) : undefined
    this.#heads = new Lru(options.headBytes, (heads) =>
      // Delta keys: their bytes, and about as much again parsed (typed arrays of timestamps, places and values).
      64 + (heads === null ? 0 : heads.reduce((sum, row) => sum + row.valueLength + 64 + ROW_OVERHEAD, 0) + 2 * (heads.deltaKeys?.length ?? 0)))
    this.#chunks = new Lru(options.chunkBytes, (chunk) => chunk.weight)
  }

  /** The counter of changes to sealed data (seals, prunes, failed writes): with the commit position, what a reader's cache is keyed on. */
  get version(): number { return this.#version }

  /** No seal or prune is between the database and memory: a view taken now holds the sealed data of {@link version}. */
  get settled(): boolean { return !this.#sealing }

  /** The open area as of the last commit. */
  get open(): OpenArea {
    return this.#open
  }

  /** The hot tails, when on. */
  get tails(): HotTails | undefined {
    return this.#tails
  }

  /** Every symbol with a record, in UTF-8 byte order, as of the last commit. */
  get symbols(): readonly string[] {
    return this.#symbols.list
  }

  /** Whether `symbol` has a record, as of the last commit. */
  has(symbol: string): boolean {
    return this.#symbols.has(symbol)
  }

  /** Starts from what the store found on disk when it opened: the replayed open area, and the hours with chunks (the symbol set is loaded already). */
  load(open: OpenArea, sealedHours: HourSpan): void {
    this.#open = open
    const openHours = open.periods()
    this.#hours = widen(widen(sealedHours, openHours[0]), openHours[openHours.length - 1])
    this.#reset()
  }

  /**
   * A consistent view for one query: snapshot, open area and symbols taken
   * in one synchronous step (rule 2).
   */
  view(): ReadView {
    return new ReadView(this, this.#sources, this.#db.snapshot(), this.#open, this.#symbols.list, this.#hours, this.#version, this.#sealing)
  }

  /**
   * Takes in a committed batch: its open rows, its rows for the tails, and
   * the symbols it introduced (into the symbol set; their tails start empty
   * and complete).
   */
  applyBatch(writes: readonly OpenWrite[], rowsBySymbol: ReadonlyMap<string, readonly Row[]>, newSymbols: ReadonlySet<string>): void {
    this.#open = this.#open.withWrites(writes)
    for (const write of writes) this.#hours = widen(this.#hours, write.period)
    this.#symbols.add(newSymbols)
    this.#tails?.apply(rowsBySymbol, newSymbols)
  }

  /** A seal is about to go to the database: views captured from now on must not fill caches. */
  beginSeal(): void {
    this.#sealing = true
  }

  /**
   * Takes in a committed seal step: the caches hold the new chunks' heads
   * (by hour, then symbol) and drop their old chunks. The open area keeps
   * the hours' rows until {@link ReadState.applySealEnd}; readers merge both.
   */
  applySealStep(heads: ReadonlyMap<number, ReadonlyMap<string, HeadRows>>): void {
    for (const [period, bySymbol] of heads) {
      for (const [symbol, rows] of bySymbol) {
        const key = cacheKey(symbol, period)
        this.#chunks.delete(key)
        if (this.#heads.has(key)) this.#heads.set(key, rows)
      }
    }
    this.#version++
    this.#sealing = false
  }

  /**
   * Takes in the committed end of the seal of some periods: `sealed` maps each to how many of its log entries, oldest
   * first, the seal deleted; their open rows go too. Rows of entries that came while it was sealed stay open.
   */
  applySealEnd(sealed: ReadonlyMap<number, number>): void {
    this.#open = this.#open.withoutEntries(sealed)
  }

  /**
   * A prune step is about to go to the database: the chunks it deletes or
   * rewrites leave the caches now, so no view reads them from memory once
   * its snapshot may lack them, and nothing is cached until the step is
   * taken in (as during a seal).
   */
  beginPrune(chunks: readonly PrunedChunk[]): void {
    for (const { symbol, period } of chunks) {
      const key = cacheKey(symbol, period)
      this.#heads.delete(key)
      this.#chunks.delete(key)
    }
    this.#sealing = true
  }

  /**
   * Takes in a committed prune step: the hot tails drop the records it
   * removed (`from <= timestamp < to` of each chunk), and the symbols it
   * left without records (`emptied`) leave the symbol set.
   */
  applyPrune(chunks: readonly PrunedChunk[], emptied: readonly string[]): void {
    for (const { symbol, from, to } of chunks) this.#tails?.drop(symbol, from, to)
    this.#symbols.remove(emptied)
    this.#version++
    this.#sealing = false
  }

  /**
   * After a write whose outcome is unknown (LevelDB may have committed it):
   * caches of sealed data may no longer match the disk.
   */
  writeFailed(): void {
    this.#sealing = false
    this.#reset()
  }

  #reset(): void {
    this.#version++
    this.#heads.clear()
    this.#chunks.clear()
    this.#tails = this.#recordsPerSymbol > 0 ? new HotTails(this.#recordsPerSymbol) : undefined
  }

  /** A cached entry, for a view captured at `version` (rule 3). */
  cachedHeads(key: string, version: number): PeriodHeads | undefined {
    return version === this.#version ? this.#heads.get(key) : undefined
  }

  cachedChunk(key: string, version: number): CachedChunk | undefined {
    return version === this.#version ? this.#chunks.get(key) : undefined
  }

  /** Caches what a view read from its snapshot, if rule 4 allows. */
  installHeads(key: string, heads: PeriodHeads, version: number, sealing: boolean): void {
    if (version === this.#version && !sealing && !this.#sealing) this.#heads.set(key, heads)
  }

  installChunk(key: string, chunk: CachedChunk, version: number, sealing: boolean): void {
    if (version === this.#version && !sealing && !this.#sealing) this.#chunks.set(key, chunk)
  }
}

const EMPTY_SPAN: HourSpan = Object.freeze({ first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY })

/** The span grown to hold `hour`. */
function widen(span: HourSpan, hour: number | undefined): HourSpan {
  if (hour === undefined || (hour >= span.first && hour <= span.last)) return span
  return { first: Math.min(span.first, hour), last: Math.max(span.last, hour) }
}
