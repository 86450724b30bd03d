/**
 * The quality report's read of a view (its scan port's `series`): each
 * symbol's records of a window into columns for the engine's quality kernel
 * (`engine/quality/`).
 *
 * A sealed hour that is just its paged key column (no delta part, no open
 * row) is read from the column's bytes in one pass, timestamps and values
 * (chunks/column-series.ts), the columns of a block of hours fetched in one
 * round trip ahead of their parsing; no heads entry, no row and no page is
 * read unless a record's id is needed (the records the report names: moves,
 * duplicates). Any other hour is read as a query reads it: a paged chunk
 * through its key column and delta parts, a chunk too large for a key
 * column whole for its values (each from its fixed slot, no body decoded),
 * or without values its keys alone (the key column and the heads entry's
 * delta keys; a chunk without a key column still whole). With sources,
 * each record's body is decoded as well, every hour read as a query does.
 */
import type { SeriesWindow } from '../../engine/scan-source.js'
import type { QualitySeries } from '../../engine/quality/series.js'
import { periodOf } from '../../keys/key-layout.js'
import { throwIfAborted } from '../../rules/abort.js'
import type { HourKeyColumns, PeriodHeads } from '../chunks/chunk-reader.js'
import { SegmentSeries } from '../chunks/column-series.js'
import { KeyColumnPrefetch } from '../chunks/key-column-prefetch.js'
import type { SealedChunk } from '../chunks/sealed-chunk.js'
import type { HeadRows } from '../heads/heads-entry.js'
import type { OpenArea } from '../rows/open-area.js'
import { RowArray, firstAfter, firstAtOrAfter, type RowList } from '../rows/row-list.js'

/** What the read takes of a view (read-view.ts). */
export interface SeriesView {
  readonly openArea: OpenArea
  hoursOf(symbol: string, lo: number, hi: number): AsyncGenerator<number>
  periodList(symbol: string, period: number, install: boolean): RowList
  sealedHeads(symbol: string, period: number): PeriodHeads
  sealedPeriod(symbol: string, period: number): { readonly heads: HeadRows; readonly keys: SealedChunk } | undefined
  keyColumns(symbol: string, lo: number, hi: number): Promise<HourKeyColumns>
  keyColumnList(symbol: string, period: number, column: Buffer, pages: boolean): RowList
}

/** Windows of up to this many hours are walked hour by hour, their key columns read ahead; longer ones (rare) hour by hour as stored. */
const WALK_LIMIT = 1024

/** Each symbol's records of the window as a series, one symbol after another (the same series, refilled: read it before the next). */
export async function* viewSeries(view: SeriesView, symbols: readonly string[], window: SeriesWindow): AsyncGenerator<QualitySeries> {
  const series = new SegmentSeries(window.values, window.sources)
  const lo = periodOf(window.from)
  const hi = periodOf(window.to)
  const prefetch = !window.sources && hi - lo + 1 <= WALK_LIMIT ? new KeyColumnPrefetch((symbol, first, last) => view.keyColumns(symbol, first, last), symbols, lo, hi) : undefined
  try {
    for (const symbol of symbols) {
      throwIfAborted(window.signal)
      series.reset()
      if (prefetch === undefined) await readHours(view, symbol, window, series)
      else await readByColumns(view, symbol, window, series, prefetch)
      yield series
    }
  } finally {
    // A read still under way must end before the view (and its snapshot) closes.
    await prefetch?.settle()
  }
}

/** Reads the records of `symbol` in the window into `series`, hour by hour as stored. */
async function readHours(view: SeriesView, symbol: string, window: SeriesWindow, series: SegmentSeries): Promise<void> {
  const { from, to } = window
  for await (const period of view.hoursOf(symbol, periodOf(from), periodOf(to))) {
    throwIfAborted(window.signal)
    const list = listOf(view, symbol, period, window)
    series.push(list, firstAtOrAfter(list, from), firstAfter(list, to))
  }
}

/**
 * As {@link readHours}, but the key columns of the window's hours come in
 * blocks read ahead, and a sealed hour that is just its paged key column (no
 * delta part, no open row) is read from it in one pass, without its heads
 * entry (sealing writes the key column with the heads entry, and deletes
 * both together) and without building its rows.
 */
async function readByColumns(view: SeriesView, symbol: string, window: SeriesWindow, series: SegmentSeries, prefetch: KeyColumnPrefetch): Promise<void> {
  const { from, to } = window
  let block: HourKeyColumns | undefined
  for (let period = periodOf(from), last = periodOf(to); period <= last; period++) {
    if (block === undefined || period - block.lo >= block.columns.length) block = await prefetch.take()
    throwIfAborted(window.signal)
    const at = period - block.lo
    const column = block.columns[at]
    const open = view.openArea.rows(symbol, period).length !== 0
    if (!open && column !== undefined && block.deltas[at] === false && series.pushKeyColumn(column, period, from, to, () => view.keyColumnList(symbol, period, column, window.values))) continue
    // As `hoursOf`: an hour is read when its heads say it has a chunk, or it has open rows.
    if (!open && view.sealedHeads(symbol, period) === null) continue
    const list = listOf(view, symbol, period, window)
    series.push(list, firstAtOrAfter(list, from), firstAfter(list, to))
  }
}

/** The rows of an hour as the report reads them: whole (for values and ids from pages), or keys alone without values. */
function listOf(view: SeriesView, symbol: string, period: number, window: SeriesWindow): RowList {
  return window.values ? view.periodList(symbol, period, false) : keysOf(view, symbol, period)
}

/**
 * The records of a sealed hour, timestamps and ids alone: its key column (a
 * few KB) and delta parts, unless open rows must be merged over it (a late
 * hour, or one being sealed), which reads the whole hour.
 */
function keysOf(view: SeriesView, symbol: string, period: number): RowList {
  const open = view.openArea.rows(symbol, period)
  const sealed = view.sealedPeriod(symbol, period)
  if (sealed === undefined) return new RowArray(open)
  return open.length === 0 ? sealed.keys : view.periodList(symbol, period, false)
}
