/**
 * Export: every stored record of a selection, read from one view, for
 * `store.export()` (and the CLI's `export`, and any HTTP endpoint built on
 * it). Nothing is sampled or capped: each symbol's records come in
 * (timestamp, id) order, the symbols in the store's order (UTF-8 bytes), each
 * record as `latest()` returns it, so NDJSON of them imports back unchanged.
 */
import { throwIfAborted } from '../../rules/abort.js'
import { signalOf, toExportSelection, type ExportOptions, type ExportSelection } from '../../engine/typed-queries.js'
import type { PriceRecord } from '../../types.js'
import type { ReadView } from '../read/read-view.js'
import type { StoreReader } from '../read/store-reader.js'

/**
 * `store.export(options)`: the options are checked when it is called; the view is taken at the first
 * pull and held until the iteration ends, is left, fails or `signal` aborts.
 */
export function exportStore(reader: StoreReader, options: ExportOptions): AsyncIterable<PriceRecord> {
  const selection = toExportSelection(options)
  const signal = signalOf(options)
  return reader.viewStream('export the records', signal, (view) => exportRecords(view, selection, signal))
}

/**
 * The records of `selection` in `view`, oldest first per symbol, a
 * symbol's hour at a time (so memory holds one hour's chunk, not the
 * store). `signal` is checked between hours.
 */
export async function* exportRecords(view: ReadView, selection: ExportSelection, signal: AbortSignal | undefined): AsyncGenerator<PriceRecord> {
  const stored = await view.symbols()
  const wanted = selection.symbols === undefined ? undefined : new Set(selection.symbols)
  const scan = {
    reverse: false,
    ...(selection.from === undefined ? {} : { from: selection.from }),
    ...(selection.to === undefined ? {} : { to: selection.to }),
  }
  for (const symbol of stored) {
    if (wanted !== undefined && !wanted.has(symbol)) continue
    for await (const rows of view.scan(symbol, scan)) {
      throwIfAborted(signal)
      for (const row of rows) yield row.record()
    }
  }
}
