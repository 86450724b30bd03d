/**
 * The quality report's read of any scan source that has no `series` of its
 * own: each symbol's rows of the window, scanned oldest first, as columns.
 */
import { throwIfAborted } from '../../rules/abort.js'
import type { ScanRow, ScanSource, SeriesWindow } from '../scan-source.js'
import type { QualitySeries } from './series.js'

/** Each symbol's records of the window as a series: through the source's own `series` when it has one, else by a scan. */
export function readSeries(source: ScanSource, symbols: readonly string[], window: SeriesWindow): AsyncIterable<QualitySeries> {
  return source.series?.(symbols, window) ?? scanSeries(source, symbols, window)
}

async function* scanSeries(source: ScanSource, symbols: readonly string[], window: SeriesWindow): AsyncGenerator<QualitySeries> {
  for (const symbol of symbols) {
    throwIfAborted(window.signal)
    const rows: ScanRow[] = []
    for await (const batch of source.scan(symbol, { from: window.from, to: window.to, reverse: false })) {
      throwIfAborted(window.signal)
      rows.push(...batch)
    }
    const timestamps = Float64Array.from(rows, (row) => row.timestamp)
    const values = window.values ? Float64Array.from(rows, (row) => row.ref?.().value ?? row.record().value) : undefined
    yield {
      length: rows.length,
      timestamps,
      values,
      idAt: (index) => (rows[index] as ScanRow).record().id,
      sourceAt: window.sources ? (index) => (rows[index] as ScanRow).record().source : undefined,
    }
  }
}
