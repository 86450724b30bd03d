/**
 * Feed quality (`store.quality()`): each symbol's records of a window read
 * from one view into columns for the engine's quality kernel
 * (`engine/quality/`), which computes the report.
 *
 * What is read: a sealed hour that is just its paged key column (no delta
 * part, no open row) is read from the column's bytes in one pass,
 * timestamps and values (key-column-series.ts), the columns of a block of
 * hours fetched in one round trip ahead of their parsing; no heads entry,
 * no row and no page is read unless a record's id is needed (the records
 * the report names: moves, duplicates). Any other hour is read as before:
 * a paged chunk through its key column and delta parts, a chunk too large
 * for a key column whole for its values (each from its fixed slot, no body
 * decoded), or with `moves: false` its keys alone (the key column and the
 * heads entry's delta keys; a chunk without a key column still whole). With `sources: true` each record's
 * body is decoded as well, for its `source`, every hour read as before.
 */
import { symbolQuality } from '../../engine/quality/feed-quality.js'
import { checkBuckets, toQualityQuery, type QualityOptions } from '../../engine/quality/quality-query.js'
import type { QualityQuery, QualityReport, SymbolQuality } from '../../engine/quality/quality-types.js'
import { signalOf } from '../../engine/typed-queries.js'
import type { QualitySeries } from '../../engine/quality/series.js'
import { peekValue } from '../../keys/value-codec.js'
import { throwIfAborted } from '../../rules/abort.js'
import type { Limits } from '../../types.js'
import { readKeyColumnSeries, type KeptRecords, type SeriesSink } from '../../keys/key-column-series.js'
import { PERIOD_MS, periodOf } from '../../keys/key-layout.js'
import type { HourKeyColumns, ReadView } from '../read/read-view.js'
import type { Row } from '../read/row.js'
import { RowArray, firstAfter, firstAtOrAfter, type RowList } from '../read/row-list.js'
import type { StoreReader } from '../read/store-reader.js'

/** What `store.quality()` reads. */
export interface QualitySource {
  readonly reader: StoreReader
  readonly options: { readonly limits: Limits }
}

export type { QualityOptions, QualityReport, SymbolQuality }

/**
 * `store.quality(options)`: the options checked, then the report of every symbol asked for (or stored), read
 * from one view.
 * @throws PriceStoreError `PRICE_INVALID_RANGE`, `PRICE_INVALID_INTERVAL`, `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`,
 *   `PRICE_RANGE_TOO_LARGE` (buckets × stored symbols over `maxRangePoints`),
 *   `PRICE_NOT_OPEN`, `PRICE_ABORTED`, `PRICE_CORRUPT_VALUE`
 */
export async function storeQuality(source: QualitySource, options: QualityOptions): Promise<QualityReport> {
  const query = toQualityQuery(options, source.options.limits)
  const signal = signalOf(options)
  throwIfAborted(signal)
  const report = await source.reader.read('report the feed quality', async (view) => {
    const symbols = query.symbols === 'all' ? await view.symbols() : query.symbols
    checkBuckets(query, symbols.length, source.options.limits)
    const reports: SymbolQuality[] = []
    // One set of columns for every symbol: each symbol's report is made (and copies what it keeps) before the next is read.
    const series = new SegmentSeries(query.moves, query.sources)
    const prefetch = byKeyColumns(query) ? new KeyColumnPrefetch(view, symbols, periodOf(query.from), periodOf(query.to)) : undefined
    try {
      for (const symbol of symbols) {
        throwIfAborted(signal)
        series.reset()
        if (prefetch === undefined) await readSeries(view, symbol, query, series, signal)
        else await readSeriesByColumns(view, symbol, query, series, prefetch, signal)
        reports.push(symbolQuality(symbol, series, query))
      }
    } finally {
      // A read still under way must end before the view (and its snapshot) closes.
      await prefetch?.settle()
    }
    return reports
  })
  return {
    from: query.from,
    to: query.to,
    now: query.now,
    ...(query.grid === undefined ? {} : { interval: query.grid.interval }),
    gapThreshold: query.gapThreshold ?? null,
    symbols: report,
  }
}

/** Reads the records of `symbol` in the query's window into `series`; their rows are kept for the ids (and sources) the report reads. */
async function readSeries(view: ReadView, symbol: string, query: QualityQuery, series: SegmentSeries, signal: AbortSignal | undefined): Promise<void> {
  const { from, to } = query
  for await (const period of view.hoursOf(symbol, periodOf(from), periodOf(to))) {
    throwIfAborted(signal)
    const list = listOf(view, symbol, period, query)
    series.push(list, firstAtOrAfter(list, from), firstAfter(list, to))
  }
}

/** The rows of an hour as the report reads them: whole (for values and ids from pages), or keys alone without moves. */
function listOf(view: ReadView, symbol: string, period: number, query: QualityQuery): RowList {
  return query.moves ? view.periodList(symbol, period, false) : keysOf(view, symbol, period)
}

/** Windows of up to this many hours are walked hour by hour, their key columns read ahead; longer ones (rare) as {@link readSeries} does. */
const WALK_LIMIT = 1024
/** Hours whose key columns are read in one round trip: two days of a symbol, about 0.5 MB at one record per 10 s (5 MB at one a second). */
const BLOCK_HOURS = 48

/** Whether {@link readSeriesByColumns} reads the query: not with sources (every body is decoded then), not over a very long window. */
function byKeyColumns(query: QualityQuery): boolean {
  return !query.sources && periodOf(query.to) - periodOf(query.from) + 1 <= WALK_LIMIT
}

/**
 * As {@link readSeries}, but the key columns of the window's hours come in
 * blocks read ahead (the next block read off the main thread while this one
 * is parsed), and a sealed hour that is just its paged key column (no delta
 * part, no open row) is read from it in one pass, without its heads entry
 * (sealing writes the key column with the heads entry, and deletes both
 * together) and without building its rows. Any other hour is read as before.
 */
async function readSeriesByColumns(
  view: ReadView, symbol: string, query: QualityQuery, series: SegmentSeries, prefetch: KeyColumnPrefetch, signal: AbortSignal | undefined,
): Promise<void> {
  const { from, to } = query
  let block: HourKeyColumns | undefined
  for (let period = periodOf(from), last = periodOf(to); period <= last; period++) {
    if (block === undefined || period - block.lo >= block.columns.length) block = await prefetch.take()
    throwIfAborted(signal)
    const at = period - block.lo
    const column = block.columns[at]
    const open = view.openArea.rows(symbol, period).length !== 0
    if (!open && column !== undefined && block.deltas[at] === false && series.pushKeyColumn(column, period, from, to, () => view.keyColumnList(symbol, period, column, query.moves))) continue
    // As `hoursOf`: an hour is read when its heads say it has a chunk, or it has open rows.
    if (!open && view.sealedHeads(symbol, period) === null) continue
    const list = listOf(view, symbol, period, query)
    series.push(list, firstAtOrAfter(list, from), firstAfter(list, to))
  }
}

/** Blocks read ahead of the one being parsed: enough that the main thread seldom waits for the disk. */
const READ_AHEAD = 2

/** The key columns of every symbol's hours `lo..hi`, a block at a time, in order, the next blocks asked for before this one is parsed. */
class KeyColumnPrefetch {
  readonly #view: ReadView
  readonly #blocks: { readonly symbol: string; readonly lo: number; readonly hi: number }[] = []
  #next = 0
  readonly #pending: Promise<HourKeyColumns>[] = []

  constructor(view: ReadView, symbols: readonly string[], lo: number, hi: number) {
    this.#view = view
    for (const symbol of symbols) for (let first = lo; first <= hi; first += BLOCK_HOURS) this.#blocks.push({ symbol, lo: first, hi: Math.min(hi, first + BLOCK_HOURS - 1) })
  }

  /** The next block (blocks are taken in order: each symbol's, ascending, symbol by symbol). */
  take(): Promise<HourKeyColumns> {
    while (this.#pending.length <= READ_AHEAD && this.#next < this.#blocks.length) this.#pending.push(this.#read())
    return this.#pending.shift() as Promise<HourKeyColumns>
  }

  /** Waits for the blocks read ahead, if any (their failures are not this report's: they were not asked for). */
  async settle(): Promise<void> {
    await Promise.all(this.#pending.splice(0).map((read) => read.catch(() => undefined)))
  }

  #read(): Promise<HourKeyColumns> {
    const { symbol, lo, hi } = this.#blocks[this.#next++] as { symbol: string; lo: number; hi: number }
    const read = this.#view.keyColumns(symbol, lo, hi)
    // Read ahead, it may never be taken (the report failed or was aborted first): its failure must not go unhandled.
    read.catch(() => undefined)
    return read
  }
}

/**
 * The records of a sealed hour, timestamps and ids alone: its key column (a
 * few KB) and delta parts, unless open rows must be merged over it (a late
 * hour, or one being sealed), which reads the whole hour.
 */
function keysOf(view: ReadView, symbol: string, period: number): RowList {
  const open = view.openArea.rows(symbol, period)
  const sealed = view.sealedPeriod(symbol, period)
  if (sealed === undefined) return new RowArray(open)
  return open.length === 0 ? sealed.keys : view.periodList(symbol, period, false)
}

/** A growing {@link QualitySeries} over lists of stored rows, each record remembered by its list and place in it. */
class SegmentSeries implements QualitySeries, SeriesSink {
  length = 0
  timestamps: Float64Array = new Float64Array(1024)
  values: Float64Array | undefined
  readonly sourceAt: ((index: number) => unknown) | undefined
  readonly #lists: { rowAt(index: number): Row }[] = []
  readonly #kept: KeptRecords = { first: 0, end: 0 }
  #listOf: Int32Array = new Int32Array(1024)
  #placeIn: Int32Array = new Int32Array(1024)

  constructor(values: boolean, sources: boolean) {
    this.values = values ? new Float64Array(1024) : undefined
    // `decode`, not `record`: the rows may be shared with the open area and caches, which must not grow by these.
    this.sourceAt = sources ? (index) => this.#row(index).decode().source : undefined
  }

  /** Empties the series (keeping its arrays) for the next symbol. */
  reset(): void {
    this.length = 0
    this.#lists.length = 0
  }

  /** Makes room for `more` records after `length` (see {@link SeriesSink}). */
  reserve(more: number): void {
    while (this.length + more > this.timestamps.length) this.#grow()
  }

  /**
   * Appends the records of a sealed hour inside `from..to` straight from its
   * paged key column `bytes` (the hour has no delta part and no open row:
   * the caller knows). Their ids are read later,
   * from `list()` (the list the hour is otherwise read as), for the few
   * records the report names. False, with nothing appended, when the hour
   * column is not a sound paged key column (or a value header is damaged): push its list then.
   */
  pushKeyColumn(bytes: Buffer, period: number, from: number, to: number, list: () => RowList): boolean {
    const start = this.length
    if (!readKeyColumnSeries(bytes, period * PERIOD_MS, from, to, this, this.#kept)) return false
    if (this.length === start) return true
    const listNumber = this.#lists.push(new LazyList(list)) - 1
    const placeIn = this.#placeIn
    this.#listOf.fill(listNumber, start, this.length)
    for (let at = start, place = this.#kept.first; at < this.length; at++, place++) placeIn[at] = place
    return true
  }

  /** Appends the rows `lo..hi-1` of `list`. */
  push(list: RowList, lo: number, hi: number): void {
    if (hi <= lo) return
    while (this.length + hi - lo > this.timestamps.length) this.#grow()
    const listNumber = this.#lists.push(list) - 1
    const { timestamps, values } = this
    const listOf = this.#listOf
    const placeIn = this.#placeIn
    const columns = list.columns?.()
    if (columns !== undefined) {
      // A sealed chunk keeps its timestamps and values in arrays: copied in bulk, no row built.
      const start = this.length
      timestamps.set(columns.timestamps.subarray(lo, hi), start)
      if (values !== undefined) values.set(columns.values.subarray(lo, hi), start)
      listOf.fill(listNumber, start, start + hi - lo)
      for (let i = lo, at = start; i < hi; i++, at++) {
        placeIn[at] = i
        // A damaged header (NaN) is decoded in full, which fails with the store's own corruption error.
        if (values !== undefined && Number.isNaN(values[at])) values[at] = list.rowAt(i).record().value
      }
      this.length = start + hi - lo
      return
    }
    let at = this.length
    for (let i = lo; i < hi; i++, at++) {
      timestamps[at] = list.timestampAt(i)
      listOf[at] = listNumber
      placeIn[at] = i
      if (values === undefined) continue
      const row = list.rowAt(i)
      const bytes = row.value
      // A damaged header is decoded in full, which fails with the store's own corruption error.
      values[at] = peekValue(bytes, 0, bytes.length) ?? row.record().value
    }
    this.length = at
  }

  idAt(index: number): string {
    return this.#row(index).id
  }

  #row(index: number): Row {
    return (this.#lists[this.#listOf[index] as number] as { rowAt(index: number): Row }).rowAt(this.#placeIn[index] as number)
  }

  #grow(): void {
    const size = this.timestamps.length * 2
    this.timestamps = grown(this.timestamps, size)
    if (this.values !== undefined) this.values = grown(this.values, size)
    this.#listOf = grown(this.#listOf, size)
    this.#placeIn = grown(this.#placeIn, size)
  }
}

/** An hour's list read only when one of its records is asked for (most hours never are). */
class LazyList {
  readonly #read: () => RowList
  #list: RowList | undefined

  constructor(read: () => RowList) {
    this.#read = read
  }

  rowAt(index: number): Row {
    this.#list ??= this.#read()
    return this.#list.rowAt(index)
  }
}

function grown<T extends Float64Array | Int32Array>(array: T, size: number): T {
  const bigger = new (array.constructor as new (size: number) => T)(size)
  bigger.set(array)
  return bigger
}
