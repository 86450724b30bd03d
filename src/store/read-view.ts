/**
 * The read path of format 3, in one place: every in-memory structure a
 * query reads (the open area, the hot tails, the heads and chunk caches),
 * the one counter of changes to sealed data, and the one rule that lets a
 * query mix them with a LevelDB snapshot.
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
 * 2. a view takes its snapshot and captures the open area and tails in one
 *    synchronous step, so its snapshot is never older than its open area;
 * 3. a view reads the caches only while no seal has committed since its
 *    capture, counted by {@link ReadState}'s one version counter: caches
 *    hold sealed data as of the last commit, and a chunk they list may not
 *    be in an older snapshot. (A seal under way changes nothing yet.)
 *    Otherwise it reads its snapshot alone;
 * 4. a view may put what it read from its snapshot into a cache only when
 *    no seal has committed or been under way since its capture (its
 *    snapshot may hold a seal its open area does not know of). Otherwise a
 *    later query, whose open area no longer holds the sealed rows, could
 *    miss them.
 *
 * A prune step (`pruner.ts`) changes the set of records, so it cannot lean
 * on the merge: it touches sealed data only (the hours it reaches are sealed
 * first), takes its chunks out of the caches and stops cache fills before
 * its write ({@link ReadState.beginPrune}), and advances the counter after
 * it ({@link ReadState.applyPrune}). A view then reads the step's chunks
 * from its own snapshot, before or after the step, never half of it.
 */
import type { AbstractIterator, AbstractLevel, AbstractSnapshot, AbstractSublevel } from 'abstract-level'
import { PriceStoreError } from '../errors.js'
import type { SampleRange, ScanOptions, ScanSource } from '../engine/scan-source.js'
import { bucketOf, nestsOn } from '../engine/grid.js'
import { readPartCount } from '../keys/chunk-codec.js'
import {
  HEAD_MS, PERIOD_MS, chunkKey, describeChunk, headsKey, headsRange, periodOf, readHeadsPeriod,
} from '../keys/key-layout.js'
import type { Provider } from '../types.js'
import { HotTails } from './hot-tails.js'
import { Lru } from './lru.js'
import { OpenArea, mergeRows } from './open-area.js'
import type { OpenWrite } from './open-area.js'
import { headRows, type HeadRows } from './heads-index.js'
import { compareRows } from './row.js'
import type { Row } from './row.js'
import { RowArray, SealedChunk, allRows, firstAfter, firstAtOrAfter } from './row-list.js'
import type { RowList } from './row-list.js'

/** A sublevel whose keys and values are raw bytes. */
export type BytesSublevel = AbstractSublevel<AbstractLevel<any, any, any>, any, Uint8Array, Uint8Array>

/** The sublevels a view reads. */
export interface ReadSublevels {
  readonly chunks: BytesSublevel
  readonly heads: BytesSublevel
}

/** How much a store keeps in memory for reading. */
export interface ReadStateOptions {
  readonly provider: Provider
  /** Newest records per symbol in the hot tails (0: off). */
  readonly recordsPerSymbol: number
  /** Bytes of chunk heads kept decoded-on-demand (0: off). */
  readonly headBytes: number
  /** Bytes of chunks kept for edges and as-of reads (0: off). */
  readonly chunkBytes: number
}

/** The heads of a sealed chunk, ascending; `null` when the period has no chunk. */
type PeriodHeads = HeadRows | null

/** Rough memory of one cached head besides the entry's bytes: the row object and its id (a decoded record adds about 1.5 KB). */
const ROW_OVERHEAD = 256
/** Hours whose record counts {@link ReadView.estimateRecords} reads, spread over its window. */
const COUNT_SAMPLES = 4
/** Up to this many periods, a scan looks each one up (a miss costs a few µs) instead of iterating the index. */
const PROBE_LIMIT = 1024
/**
 * A scan without a limit is read at once only up to this many hours: past it
 * the engine reads hour by hour, so a long stream never holds all its chunks.
 */
const DENSE_NOW_LIMIT = 48
/** A scan over more periods first looks up this many from its starting end, then iterates the heads index. */
const PROBE_FIRST = 48
/** Heads keys per round trip when iterating the index. */
const INDEX_BATCH = 256

/**
 * What a store keeps in memory for reading, kept equal to the disk by the
 * rule above. The store calls the `apply*` methods after each commit.
 */
export class ReadState {
  readonly provider: Provider
  #open = OpenArea.EMPTY
  #tails: HotTails | undefined
  readonly #recordsPerSymbol: number
  readonly #heads: Lru<string, PeriodHeads>
  readonly #chunks: Lru<string, SealedChunk>
  /** The one counter: bumped by every change to sealed data (a seal, or a write that failed). */
  #version = 0
  /** True while a seal is between the database and memory. */
  #sealing = false
  #symbols: readonly string[] = []
  /** The first and last hour holding any record (sealed or open); no query looks outside them. */
  #hours: HourSpan = EMPTY_SPAN

  constructor(options: ReadStateOptions) {
    this.provider = options.provider
    this.#recordsPerSymbol = options.recordsPerSymbol
    this.#tails = options.recordsPerSymbol > 0 ? new HotTails(options.recordsPerSymbol) : undefined
    this.#heads = new Lru(options.headBytes, (heads) => 64 + (heads?.reduce((sum, row) => sum + row.valueLength + 64 + ROW_OVERHEAD, 0) ?? 0))
    this.#chunks = new Lru(options.chunkBytes, (chunk) => chunk.weight)
  }

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
    return this.#symbols
  }

  /** Starts from what the store found on disk when it opened: the replayed open area and the symbols. */
  load(open: OpenArea, symbols: readonly string[], sealedHours: HourSpan): void {
    this.#open = open
    this.#symbols = symbols
    const openHours = open.periods()
    this.#hours = widen(widen(sealedHours, openHours[0]), openHours[openHours.length - 1])
    this.#reset()
  }

  /**
   * A consistent view for one query: snapshot, open area and tails taken in
   * one synchronous step (rule 2).
   */
  view(db: AbstractLevel<any, any, any>, sublevels: ReadSublevels): ReadView {
    return new ReadView(this, sublevels, db.snapshot(), this.#open, this.#symbols, this.#hours, this.#version, this.#sealing)
  }

  /**
   * Takes in a committed batch: its open rows, its rows for the tails, the
   * symbols it introduced (their tails start empty and complete) and, when
   * it introduced any, the new list of every symbol.
   */
  applyBatch(
    writes: readonly OpenWrite[], rowsBySymbol: ReadonlyMap<string, readonly Row[]>, newSymbols: ReadonlySet<string>,
    symbols: readonly string[],
  ): void {
    this.#open = this.#open.withWrites(writes)
    for (const write of writes) this.#hours = widen(this.#hours, write.period)
    this.#symbols = symbols
    this.#tails?.apply(rowsBySymbol, newSymbols)
  }

  /** A seal is about to go to the database: views captured from now on must not fill caches. */
  beginSeal(): void {
    this.#sealing = true
  }

  /**
   * Takes in a committed seal step of `period`: the caches hold the new
   * chunks' heads and drop their old chunks. The open area keeps the hour's
   * rows until {@link ReadState.applySealEnd}; readers merge both.
   */
  applySealStep(period: number, heads: ReadonlyMap<string, HeadRows>): void {
    for (const [symbol, rows] of heads) {
      const key = cacheKey(symbol, period)
      this.#chunks.delete(key)
      if (this.#heads.has(key)) this.#heads.set(key, rows)
    }
    this.#version++
    this.#sealing = false
  }

  /** Takes in the committed end of a seal: the hour's log entries are gone, and so are its open rows. */
  applySealEnd(period: number): void {
    this.#open = this.#open.withoutPeriod(period)
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
   * left without records are gone from `symbols`.
   */
  applyPrune(chunks: readonly PrunedChunk[], symbols: readonly string[]): void {
    for (const { symbol, from, to } of chunks) this.#tails?.drop(symbol, from, to)
    this.#symbols = symbols
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

  cachedChunk(key: string, version: number): SealedChunk | undefined {
    return version === this.#version ? this.#chunks.get(key) : undefined
  }

  /** Caches what a view read from its snapshot, if rule 4 allows. */
  installHeads(key: string, heads: PeriodHeads, version: number, sealing: boolean): void {
    if (version === this.#version && !sealing && !this.#sealing) this.#heads.set(key, heads)
  }

  installChunk(key: string, chunk: SealedChunk, version: number, sealing: boolean): void {
    if (version === this.#version && !sealing && !this.#sealing) this.#chunks.set(key, chunk)
  }
}

/**
 * One query's view of the store: sealed data from a snapshot (or the
 * caches), open rows from the open area captured with it. Implements the
 * engine's scan port; reads are synchronous (`getSync`) except a walk over
 * more than {@link PROBE_LIMIT} hours, which iterates the heads index. Close
 * it to release the snapshot.
 */
export class ReadView implements ScanSource {
  readonly #state: ReadState
  readonly #levels: ReadSublevels
  readonly #snapshot: AbstractSnapshot
  readonly #open: OpenArea
  readonly #symbols: readonly string[]
  readonly #hours: HourSpan
  readonly #version: number
  readonly #sealing: boolean
  readonly #pin: { snapshot: AbstractSnapshot }

  constructor(
    state: ReadState, levels: ReadSublevels, snapshot: AbstractSnapshot, open: OpenArea,
    symbols: readonly string[], hours: HourSpan, version: number, sealing: boolean,
  ) {
    this.#hours = hours
    this.#state = state
    this.#levels = levels
    this.#snapshot = snapshot
    this.#pin = { snapshot }
    this.#open = open
    this.#symbols = symbols
    this.#version = version
    this.#sealing = sealing
  }

  async symbols(): Promise<readonly string[]> {
    return this.#symbols
  }

  /**
   * The rows of a scan at once, when the hours to visit are few enough to
   * look up one by one (or the first {@link PROBE_FIRST} of them already
   * hold `limit` rows); otherwise `undefined`, and the engine calls `scan`.
   */
  scanNow(symbol: string, options: ScanOptions): Row[] | undefined {
    const from = options.from ?? 0
    const to = options.to ?? Number.MAX_SAFE_INTEGER
    const [lo, hi] = this.#clamp(from, to)
    const limit = options.limit ?? Number.POSITIVE_INFINITY
    if (limit === Number.POSITIVE_INFINITY && hi - lo + 1 > DENSE_NOW_LIMIT) return undefined
    const whole = hi - lo + 1 <= PROBE_LIMIT
    if (!whole && !options.reverse) return undefined
    const found: Row[] = []
    const probes = whole ? hi - lo + 1 : PROBE_FIRST
    for (let i = 0; i < probes && found.length < limit; i++) {
      const period = options.reverse ? hi - i : lo + i
      this.#take(this.#periodRows(symbol, period, limit !== Number.POSITIVE_INFINITY), from, to, options.reverse, limit, found)
    }
    return whole || found.length >= limit ? found : undefined
  }

  /** The rows of `symbol` in the window, a batch per hour, in order. */
  async *scan(symbol: string, options: ScanOptions): AsyncGenerator<readonly Row[]> {
    const from = options.from ?? 0
    const to = options.to ?? Number.MAX_SAFE_INTEGER
    const limit = options.limit ?? Number.POSITIVE_INFINITY
    let taken = 0
    const [lo, hi] = this.#clamp(from, to)
    for await (const period of this.#periods(symbol, lo, hi, options.reverse)) {
      // Small reads (as-of, latest-N) are worth caching; a long scan would only churn the cache.
      const batch = this.#take(this.#periodRows(symbol, period, limit !== Number.POSITIVE_INFINITY), from, to, options.reverse, limit - taken, [])
      if (batch.length === 0) continue
      taken += batch.length
      yield batch
      if (taken >= limit) return
    }
  }

  /**
   * For grids on ten-minute lines (interval and origin multiples of ten minutes): the ten-minute heads
   * of the range from the chunks' heads entries and the open area, which the
   * engine samples further. The head of the bucket holding `to`, when it is
   * after `to`, is replaced by the latest row up to `to`. At once when the
   * range spans at most {@link PROBE_LIMIT} hours.
   */
  bucketHeads(symbol: string, range: SampleRange): AsyncIterable<readonly Row[]> | Row[] | undefined {
    // Ten-minute heads nest inside the grid's buckets only when the grid is on ten-minute lines.
    if (!nestsOn(range, HEAD_MS)) return undefined
    const [lo, hi] = this.#clamp(range.from, range.to)
    if (hi - lo + 1 > PROBE_LIMIT) return this.#headsByIndex(symbol, lo, hi, range)
    const rows: Row[] = []
    for (let period = lo; period <= hi; period++) this.#headsIn(symbol, period, range, rows)
    return rows
  }

  /**
   * The stored row of one record key (an open row over a sealed one), or
   * `undefined`: one hour's open rows, then its chunk, searched by timestamp.
   */
  row(symbol: string, timestamp: number, id: string): Row | undefined {
    const period = periodOf(timestamp)
    const open = this.#open.rows(symbol, period)
    const found = open.length === 0 ? undefined : findRow(new RowArray(open), timestamp, id)
    if (found !== undefined || this.#headsOf(symbol, period) === null) return found
    return findRow(this.#chunk(symbol, period, true), timestamp, id)
  }

  /** Read options that read another sublevel from this view's snapshot. */
  get readOptions(): { readonly snapshot: AbstractSnapshot } {
    return this.#pin
  }

  /** The hours in `lo..hi` holding records of `symbol` (sealed or open), ascending. */
  hoursOf(symbol: string, lo: number, hi: number): AsyncGenerator<number> {
    return this.#periods(symbol, lo, hi, false)
  }

  /** Every row of `symbol` in `period`, ascending, as sealing merges them (nothing cached). */
  periodRows(symbol: string, period: number): readonly Row[] {
    return allRows(this.#periodRows(symbol, period, false))
  }

  /**
   * About how many records `symbol` has in `from..to`, to weigh a query
   * before it runs: the record counts of up to {@link COUNT_SAMPLES} hours
   * spread over the window (a sealed hour's from its heads entry, an open
   * hour's rows counted), scaled to the hours the window covers.
   */
  estimateRecords(symbol: string, from: number, to: number): number {
    const [lo, hi] = this.#clamp(from, to)
    if (lo > hi) return 0
    const hours = hi - lo + 1
    const samples = Math.min(hours, COUNT_SAMPLES)
    let counted = 0
    for (let i = 0; i < samples; i++) {
      const period = lo + Math.floor(((i + 0.5) * hours) / samples)
      counted += (this.#headsOf(symbol, period)?.records ?? 0) + this.#open.rows(symbol, period).length
    }
    // The window may cover only part of its first and last hours.
    const covered = Math.min(1, (to - from + 1) / (hours * PERIOD_MS))
    return Math.ceil((counted / samples) * hours * covered)
  }

  /**
   * How many rows {@link ReadView.bucketHeads} reads for `grid`: one head a
   * ten-minute bucket of the range and the edge, or `undefined` when the grid
   * is not on ten-minute lines (the scan then reads every record).
   */
  headsRead(grid: SampleRange): number | undefined {
    return nestsOn(grid, HEAD_MS) ? Math.ceil((grid.to - grid.from + 1) / HEAD_MS) + 1 : undefined
  }

  /**
   * How many buckets of the range's grid surely hold a record of `symbol`:
   * those holding one of its ten-minute heads (each the latest record of
   * its ten minutes) inside `from..to`. For a grid on ten-minute lines that
   * is the range form's answer, give or take the bucket holding `to`; for a
   * finer one, a lower bound. `undefined` for a range over more than
   * {@link PROBE_LIMIT} hours, which this does not read.
   */
  bucketsSurelyHeld(symbol: string, grid: SampleRange): number | undefined {
    const { from, to } = grid
    const [lo, hi] = this.#clamp(from, to)
    if (hi - lo + 1 > PROBE_LIMIT) return undefined
    let buckets = 0
    let last = Number.NEGATIVE_INFINITY
    for (let period = lo; period <= hi; period++) {
      const sealed = this.#headsOf(symbol, period)
      const open = this.#open.rows(symbol, period)
      if (sealed === null && open.length === 0) continue
      for (const head of combineHeads(sealed ?? [], open)) {
        if (head.timestamp < from || head.timestamp > to) continue
        const bucket = bucketOf(grid, head.timestamp)
        if (bucket !== last) buckets++
        last = bucket
      }
    }
    return buckets
  }

  /** The open area captured with the snapshot (immutable). */
  get openArea(): OpenArea {
    return this.#open
  }

  /**
   * Raw entries of any of the store's sublevels as of this view's snapshot,
   * for whole-store reads (statistics, backup); close the iterator when done.
   */
  entries(level: BytesSublevel, range: { readonly gte?: Uint8Array; readonly lt?: Uint8Array } = {}): AbstractIterator<AbstractLevel<any, any, any>, Uint8Array, Uint8Array> {
    return level.iterator({ ...range, ...this.#pin }) as unknown as AbstractIterator<AbstractLevel<any, any, any>, Uint8Array, Uint8Array>
  }

  /** Releases the snapshot. */
  async close(): Promise<void> {
    await this.#snapshot.close()
  }

  async *#headsByIndex(symbol: string, lo: number, hi: number, range: SampleRange): AsyncGenerator<readonly Row[]> {
    for await (const period of this.#periods(symbol, lo, hi, false)) {
      const rows = this.#headsIn(symbol, period, range, [])
      if (rows.length > 0) yield rows
    }
  }

  /** The hours of `from..to` that can hold records: those of the window inside the store's first and last hour (empty when `lo > hi`). */
  #clamp(from: number, to: number): [number, number] {
    return [Math.max(periodOf(from), this.#hours.first), Math.min(periodOf(to), this.#hours.last)]
  }

  /** Appends the ten-minute heads of one hour inside the range to `rows`, the edge at `to` resolved. */
  #headsIn(symbol: string, period: number, { from, to, interval, origin }: SampleRange, rows: Row[]): Row[] {
    const sealed = this.#headsOf(symbol, period)
    const open = this.#open.rows(symbol, period)
    if (sealed === null && open.length === 0) return rows
    const edgeBucket = Math.floor(to / HEAD_MS)
    const before = rows.length
    for (const head of combineHeads(sealed ?? [], open)) {
      if (head.timestamp > to && Math.floor(head.timestamp / HEAD_MS) === edgeBucket) {
        // The bucket holding `to` goes on past it: its latest row up to `to` comes from the chunk.
        const list = this.#periodRows(symbol, period, true)
        const index = firstAfter(list, to) - 1
        if (index >= 0 && list.timestampAt(index) >= Math.max(from, edgeBucket * HEAD_MS)) rows.push(list.rowAt(index))
      } else if (head.timestamp >= from && head.timestamp <= to) {
        // A head before `from` is its bucket's latest: nothing of that bucket is in range.
        rows.push(head)
      }
    }
    // On an hourly grid, the whole hour falls in one bucket: only its last head can be chosen.
    if (interval % PERIOD_MS === 0 && origin % PERIOD_MS === 0 && rows.length - before > 1) rows.splice(before, rows.length - before - 1)
    return rows
  }

  /** Appends the rows of `list` inside `from..to`, in the scan's direction, until `found` holds `limit`. */
  #take(list: RowList, from: number, to: number, reverse: boolean, limit: number, found: Row[]): Row[] {
    const start = firstAtOrAfter(list, from)
    const end = firstAfter(list, to)
    if (reverse) for (let i = end - 1; i >= start && found.length < limit; i--) found.push(list.rowAt(i))
    else for (let i = start; i < end && found.length < limit; i++) found.push(list.rowAt(i))
    return found
  }

  /** Every row of `symbol` in `period`, ascending: the chunk's, with open rows merged in (replacing equal keys). */
  #periodRows(symbol: string, period: number, install: boolean): RowList {
    const open = this.#open.rows(symbol, period)
    const sealed = this.#headsOf(symbol, period) === null ? undefined : this.#chunk(symbol, period, install)
    if (sealed === undefined) return open.length === 0 ? RowArray.EMPTY : new RowArray(open)
    return open.length === 0 ? sealed : new RowArray(mergeRows(allRows(sealed), open))
  }

  /** Periods in `lo..hi` holding rows of `symbol` (sealed or open), in order. */
  async *#periods(symbol: string, lo: number, hi: number, reverse: boolean): AsyncGenerator<number> {
    const open = this.#open.periodsOf(symbol).filter((period) => period >= lo && period <= hi)
    if (reverse) open.reverse()
    let next = 0
    const before = (a: number, b: number): boolean => (reverse ? a > b : a < b)
    for await (const period of this.#sealedPeriods(symbol, lo, hi, reverse)) {
      while (next < open.length && before(open[next] as number, period)) yield open[next++] as number
      if (open[next] === period) next++
      yield period
    }
    while (next < open.length) yield open[next++] as number
  }

  /** Periods in `lo..hi` with a chunk of `symbol`, in order: looked up one by one when few, else from the heads index. */
  async *#sealedPeriods(symbol: string, lo: number, hi: number, reverse: boolean): AsyncGenerator<number> {
    const probe = hi - lo + 1 <= PROBE_LIMIT ? hi - lo + 1 : PROBE_FIRST
    for (let i = 0; i < probe; i++) {
      const period = reverse ? hi - i : lo + i
      if (this.#headsOf(symbol, period) !== null) yield period
    }
    if (probe === hi - lo + 1) return
    const range = headsRange(symbol, reverse ? lo : lo + probe, reverse ? hi - probe : hi)
    const iterator = this.#levels.heads.keys({ ...range, reverse, ...this.#pin })
    try {
      for (;;) {
        const keys = await iterator.nextv(INDEX_BATCH)
        if (keys.length === 0) return
        for (const key of keys) yield readHeadsPeriod(key)
      }
    } finally {
      await iterator.close()
    }
  }

  /** The heads of the chunk of `symbol` in `period`, or `null` when there is none. */
  #headsOf(symbol: string, period: number): PeriodHeads {
    const key = cacheKey(symbol, period)
    const cached = this.#state.cachedHeads(key, this.#version)
    if (cached !== undefined) return cached
    const stored = this.#levels.heads.getSync(headsKey(symbol, period), this.#pin) as Buffer | undefined
    const heads = stored === undefined ? null : headRows(symbol, period, stored, this.#state.provider)
    this.#state.installHeads(key, heads, this.#version, this.#sealing)
    return heads
  }

  /** The chunk of `symbol` in `period`, all parts. */
  #chunk(symbol: string, period: number, install: boolean): SealedChunk {
    const key = cacheKey(symbol, period)
    const cached = this.#state.cachedChunk(key, this.#version)
    if (cached !== undefined) return cached
    const first = this.#part(symbol, period, 0)
    let chunk: SealedChunk
    try {
      const parts = [first]
      for (let part = 1, count = readPartCount(first); part < count; part++) parts.push(this.#part(symbol, period, part))
      chunk = new SealedChunk(symbol, period, parts, this.#state.provider)
    } catch (err) {
      if (err instanceof PriceStoreError) throw err
      throw corrupt(describeChunk(period, symbol, 0), err)
    }
    if (install) this.#state.installChunk(key, chunk, this.#version, this.#sealing)
    return chunk
  }

  #part(symbol: string, period: number, part: number): Buffer {
    const bytes = this.#levels.chunks.getSync(chunkKey(period, symbol, part), this.#pin) as Buffer | undefined
    if (bytes === undefined) {
      const entry = describeChunk(period, symbol, part)
      throw new PriceStoreError('PRICE_CORRUPT_VALUE', `${entry} is missing though the heads index lists it`, { details: { key: entry } })
    }
    return bytes
  }
}

/** A chunk a prune step deletes or rewrites: the records of `symbol` in `period` with `from <= timestamp < to` go. */
export interface PrunedChunk {
  readonly symbol: string
  readonly period: number
  readonly from: number
  readonly to: number
}

/** The first and last hour holding records; `first > last` when there are none. */
export interface HourSpan {
  readonly first: number
  readonly last: number
}

const EMPTY_SPAN: HourSpan = Object.freeze({ first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY })

/** The span grown to hold `hour`. */
function widen(span: HourSpan, hour: number | undefined): HourSpan {
  if (hour === undefined || (hour >= span.first && hour <= span.last)) return span
  return { first: Math.min(span.first, hour), last: Math.max(span.last, hour) }
}

/**
 * The latest row of each ten-minute bucket of one period, from the sealed
 * heads and the open rows (an open row wins a tie: it replaced the sealed one).
 */
function combineHeads(sealed: readonly Row[], open: readonly Row[]): readonly Row[] {
  if (open.length === 0) return sealed
  const byBucket = new Map<number, Row>()
  for (const head of sealed) byBucket.set(Math.floor(head.timestamp / HEAD_MS), head)
  for (const row of open) {
    const bucket = Math.floor(row.timestamp / HEAD_MS)
    const held = byBucket.get(bucket)
    if (held === undefined || compareRows(row, held) >= 0) byBucket.set(bucket, row)
  }
  return [...byBucket.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row)
}

/** The row of `list` with this timestamp and id, if any. */
function findRow(list: RowList, timestamp: number, id: string): Row | undefined {
  for (let i = firstAtOrAfter(list, timestamp); i < list.length && list.timestampAt(i) === timestamp; i++) {
    const row = list.rowAt(i)
    if (row.id === id) return row
  }
  return undefined
}

function cacheKey(symbol: string, period: number): string {
  return `${period}:${symbol}`
}

function corrupt(entry: string, err: unknown): PriceStoreError {
  const reason = err instanceof Error ? err.message : String(err)
  return new PriceStoreError('PRICE_CORRUPT_VALUE', `${entry} cannot be decoded: ${reason}`, { cause: err, details: { key: entry } })
}
