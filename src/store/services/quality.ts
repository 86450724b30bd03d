/**
 * Feed quality (`store.quality()`): each symbol's records of a window read
 * from one view into columns for the engine's quality kernel
 * (`engine/quality/`), which computes the report.
 *
 * What is read: a paged chunk's (format 5) key column gives each record's
 * timestamp, id and value, a few KB an hour, and no page is read unless a
 * record's id or body is needed (the records the report names: moves,
 * duplicates, single-source records). A format 4 chunk is read whole for
 * its values (each from its fixed slot, no body decoded); with
 * `moves: false` no value is needed and its key column is read alone. With
 * `sources: true` each record's body is decoded as well, for its `source`.
 */
import { symbolQuality } from '../../engine/quality/feed-quality.js'
import { checkBuckets, toQualityQuery, type QualityOptions } from '../../engine/quality/quality-query.js'
import type { QualityQuery, QualityReport, SymbolQuality } from '../../engine/quality/quality-types.js'
import { signalOf } from '../../engine/typed-queries.js'
import type { QualitySeries } from '../../engine/quality/series.js'
import { peekValue } from '../../keys/value-codec.js'
import { throwIfAborted } from '../../rules/abort.js'
import type { Limits } from '../../types.js'
import { periodOf } from '../../keys/key-layout.js'
import type { ReadView } from '../read/read-view.js'
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
    for (const symbol of symbols) {
      throwIfAborted(signal)
      series.reset()
      await readSeries(view, symbol, query, series, signal)
      reports.push(symbolQuality(symbol, series, query))
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
    const list = query.moves ? view.periodList(symbol, period, false) : keysOf(view, symbol, period)
    series.push(list, firstAtOrAfter(list, from), firstAfter(list, to))
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
class SegmentSeries implements QualitySeries {
  length = 0
  timestamps: Float64Array = new Float64Array(1024)
  values: Float64Array | undefined
  readonly sourceAt: ((index: number) => unknown) | undefined
  readonly #lists: RowList[] = []
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
    return (this.#lists[this.#listOf[index] as number] as RowList).rowAt(this.#placeIn[index] as number)
  }

  #grow(): void {
    const size = this.timestamps.length * 2
    this.timestamps = grown(this.timestamps, size)
    if (this.values !== undefined) this.values = grown(this.values, size)
    this.#listOf = grown(this.#listOf, size)
    this.#placeIn = grown(this.#placeIn, size)
  }
}

function grown<T extends Float64Array | Int32Array>(array: T, size: number): T {
  const bigger = new (array.constructor as new (size: number) => T)(size)
  bigger.set(array)
  return bigger
}
