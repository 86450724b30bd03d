/**
 * One query's view of the store: sealed data from a LevelDB snapshot (or
 * the caches of {@link ViewCaches}, see read-state.ts), open rows from the
 * open area captured with it, mixed by the rule stated in read-state.ts.
 * The engine reads it through its scan port.
 */
import type { AbstractIterator, AbstractLevel, AbstractSnapshot } from 'abstract-level'
import type { InForceSide, SampleRange, ScanOptions, ScanSource, SeriesWindow } from '../../engine/scan-source.js'
import type { QualitySeries } from '../../engine/quality/series.js'
import { bucketOf, nestsOn } from '../../engine/grid.js'
import { HEAD_MS, PERIOD_MS, periodOf } from '../../keys/key-layout.js'
import type { BytesSublevel } from '../db/sublevels.js'
import { combineHeads, type HeadRows } from '../heads/heads-entry.js'
import { ChunkReader, type ChunkSources, type HourKeyColumns, type PeriodHeads, type ViewCaches } from '../chunks/chunk-reader.js'
import type { SealedHours } from '../chunks/sealed-hours.js'
import { walkInForce } from './in-force.js'
import { viewSeries } from './quality-series.js'
import { mergeRows } from '../rows/open-area.js'
import type { OpenArea } from '../rows/open-area.js'
import type { Row } from '../rows/row.js'
import { RowArray, allRows, findRow, firstAfter, firstAtOrAfter } from '../rows/row-list.js'
import type { RowList } from '../rows/row-list.js'
import type { SealedChunk } from '../chunks/sealed-chunk.js'

/** The first and last hour holding records; `first > last` when there are none. */
export interface HourSpan {
  readonly first: number
  readonly last: number
}

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

/**
 * One query's view of the store: sealed data from a snapshot (or the
 * caches), open rows from the open area captured with it. Implements the
 * engine's scan port; reads are synchronous (`getSync`) except a walk over
 * more than {@link PROBE_LIMIT} hours, which iterates the heads index. Close
 * it to release the snapshot.
 */
export class ReadView implements ScanSource {
  readonly #snapshot: AbstractSnapshot
  readonly #open: OpenArea
  readonly #symbols: readonly string[]
  readonly #hours: HourSpan
  readonly #pin: { snapshot: AbstractSnapshot }
  readonly #sealed: SealedHours

  constructor(
    caches: ViewCaches, sources: ChunkSources, snapshot: AbstractSnapshot, open: OpenArea,
    symbols: readonly string[], hours: HourSpan, version: number, sealing: boolean,
  ) {
    this.#hours = hours
    this.#snapshot = snapshot
    this.#pin = { snapshot }
    this.#sealed = new ChunkReader(caches, sources, this.#pin, version, sealing)
    this.#open = open
    this.#symbols = symbols
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
      this.#take(this.#periodRows(symbol, period, limit !== Number.POSITIVE_INFINITY, options.refs === true), from, to, options.reverse, limit, found)
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
      const batch = this.#take(this.#periodRows(symbol, period, limit !== Number.POSITIVE_INFINITY, options.refs === true), from, to, options.reverse, limit - taken, [])
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
    const heads = found === undefined ? this.#sealed.heads(symbol, period) : null
    return heads === null ? found : findRow(this.#sealed.chunk(symbol, period, heads, true), timestamp, id)
  }

  /** Batch as-of's walk over this view (in-force.ts): each hour's rows listed once, every time in it searched. */
  inForce(symbol: string, times: readonly number[], side: InForceSide): Promise<(Row | undefined)[]> {
    return walkInForce(this, symbol, times, side) as Promise<(Row | undefined)[]>
  }

  /** The quality report's columns of each symbol (quality-series.ts): paged key columns parsed in one pass, read ahead. */
  series(symbols: readonly string[], window: SeriesWindow): AsyncIterable<QualitySeries> {
    return viewSeries(this, symbols, window)
  }

  /** Every row of `symbol` in `period`, ascending, as a list searched by timestamp; a chunk read is cached when `install`. */
  periodList(symbol: string, period: number, install: boolean): RowList {
    return this.#periodRows(symbol, period, install)
  }

  /** Read options that read another sublevel from this view's snapshot. */
  get readOptions(): { readonly snapshot: AbstractSnapshot } {
    return this.#pin
  }

  /** The hours in `lo..hi` holding records of `symbol` (sealed or open), ascending. */
  hoursOf(symbol: string, lo: number, hi: number): AsyncGenerator<number> {
    return this.#periods(symbol, lo, hi, false)
  }

  /**
   * The sealed part of `symbol`'s `period`, as sealing extends it: its heads
   * entry and the keys of its records (its key column and the entry's
   * delta keys or its delta parts, or its chunk when it has no key column;
   * not cached), or `undefined` when it has none.
   */
  sealedPeriod(symbol: string, period: number): { readonly heads: HeadRows; readonly keys: SealedChunk } | undefined {
    const heads = this.#sealed.heads(symbol, period)
    return heads === null ? undefined : { heads, keys: this.#sealed.keys(symbol, period, heads) }
  }

  /** The heads of the sealed chunk of `symbol` in `period` (its record and delta counts with them), or `null` when it has none. */
  sealedHeads(symbol: string, period: number): PeriodHeads {
    return this.#sealed.heads(symbol, period)
  }

  /**
   * The key columns of `symbol`'s hours `lo..hi` as stored, and which of
   * those hours have delta parts, in one round trip (see
   * {@link ChunkReader.keyColumns}): for readers that parse key columns
   * themselves (the quality report). Nothing cached.
   */
  keyColumns(symbol: string, lo: number, hi: number): Promise<HourKeyColumns> {
    return this.#sealed.keyColumns(symbol, lo, hi)
  }

  /**
   * The rows of an hour whose chunk is a paged key column and no delta part
   * (and which has no open row), from the column's bytes as
   * {@link ReadView.keyColumns} read them: with `pages`, as
   * {@link ReadView.periodList} lists them; without, the key column's rows.
   */
  keyColumnList(symbol: string, period: number, column: Buffer, pages: boolean): RowList {
    return this.#sealed.keyColumnList(symbol, period, column, pages)
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
      counted += (this.#sealed.heads(symbol, period)?.records ?? 0) + this.#open.rows(symbol, period).length
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
   * How many buckets of the range's grid surely hold a record of `symbol`.
   * For a grid on ten-minute lines, those holding one of its ten-minute
   * heads (each the latest record of its ten minutes) inside `from..to`:
   * the range form's answer, give or take the bucket holding `to`. For a
   * finer grid, an hour whose chunk is paged (and has no open rows) is
   * counted exactly from its key column's timestamps (a few KB, no page
   * read); any other hour from its heads, a lower bound. `undefined` for a
   * range over more than {@link PROBE_LIMIT} hours, which this does not read.
   */
  bucketsSurelyHeld(symbol: string, grid: SampleRange): number | undefined {
    const { from, to } = grid
    const [lo, hi] = this.#clamp(from, to)
    if (hi - lo + 1 > PROBE_LIMIT) return undefined
    const fine = !nestsOn(grid, HEAD_MS)
    let buckets = 0
    let last = Number.NEGATIVE_INFINITY
    const count = (timestamp: number): void => {
      if (timestamp < from || timestamp > to) return
      const bucket = bucketOf(grid, timestamp)
      if (bucket !== last) buckets++
      last = bucket
    }
    for (let period = lo; period <= hi; period++) {
      const sealed = this.#sealed.heads(symbol, period)
      const open = this.#open.rows(symbol, period)
      if (sealed === null && open.length === 0) continue
      const keys = fine && open.length === 0 && sealed !== null ? this.#sealed.pagedChunk(symbol, period, sealed.deltas) : undefined
      if (keys !== undefined) for (let i = firstAtOrAfter(keys, from), end = firstAfter(keys, to); i < end; i++) count(keys.timestampAt(i))
      else for (const head of combineHeads(sealed ?? [], open)) count(head.timestamp)
    }
    return buckets
  }

  /** The open area captured with the snapshot (immutable). */
  get openArea(): OpenArea {
    return this.#open
  }

  /**
   * Raw entries of any of the store's sublevels as of this view's snapshot,
   * for whole-store copies (backup); close the iterator when done.
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
  #headsIn(symbol: string, period: number, grid: SampleRange, rows: Row[]): Row[] {
    const { from, to } = grid
    const sealed = this.#sealed.heads(symbol, period)
    const open = this.#open.rows(symbol, period)
    if (sealed === null && open.length === 0) return rows
    const edgeBucket = Math.floor(to / HEAD_MS)
    const before = rows.length
    for (const head of combineHeads(sealed ?? [], open)) {
      if (head.timestamp > to && Math.floor(head.timestamp / HEAD_MS) === edgeBucket) {
        // The bucket holding `to` goes on past it: its latest row up to `to` comes from the chunk, read newest first
        // (an hour with delta parts then reads one page and its delta parts, not its key column).
        const [edge] = this.#take(this.#periodRows(symbol, period, true), Math.max(from, edgeBucket * HEAD_MS), to, true, 1, [])
        if (edge !== undefined) rows.push(edge)
      } else if (head.timestamp >= from && head.timestamp <= to) {
        // A head before `from` is its bucket's latest: nothing of that bucket is in range.
        rows.push(head)
      }
    }
    // On an hourly grid, the whole hour falls in one bucket: only its last head can be chosen.
    if (nestsOn(grid, PERIOD_MS) && rows.length - before > 1) rows.splice(before, rows.length - before - 1)
    return rows
  }

  /** Appends the rows of `list` inside `from..to`, in the scan's direction, until `found` holds `limit`. */
  #take(list: RowList, from: number, to: number, reverse: boolean, limit: number, found: Row[]): Row[] {
    if (reverse && list.takeNewest !== undefined) return list.takeNewest(from, to, limit, found)
    const start = firstAtOrAfter(list, from)
    const end = firstAfter(list, to)
    if (reverse) for (let i = end - 1; i >= start && found.length < limit; i--) found.push(list.rowAt(i))
    else for (let i = start; i < end && found.length < limit; i++) found.push(list.rowAt(i))
    return found
  }

  /**
   * Every row of `symbol` in `period`, ascending: the chunk's, with open rows
   * merged in (replacing equal keys). `small`: few of them will be read (see
   * {@link ChunkReader.chunk}); `refs`: only their refs will be (see
   * {@link ChunkReader.refs}).
   */
  #periodRows(symbol: string, period: number, small: boolean, refs = false): RowList {
    const open = this.#open.rows(symbol, period)
    const heads = this.#sealed.heads(symbol, period)
    if (heads === null) return open.length === 0 ? RowArray.EMPTY : new RowArray(open)
    const sealed = refs ? this.#sealed.refs(symbol, period, heads) : this.#sealed.chunk(symbol, period, heads, small)
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
      if (this.#sealed.heads(symbol, period) !== null) yield period
    }
    if (probe === hi - lo + 1) return
    yield* this.#sealed.periods(symbol, reverse ? lo : lo + probe, reverse ? hi - probe : hi, reverse)
  }
}
