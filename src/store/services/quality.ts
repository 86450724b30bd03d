/**
 * Feed quality (`store.quality()`): each symbol's records of a window read
 * from one view into columns, through its scan port's `series`
 * (read/quality-series.ts), for the engine's quality kernel
 * (`engine/quality/`), which computes the report.
 */
import { symbolQuality } from '../../engine/quality/feed-quality.js'
import { checkBuckets, toQualityQuery, type QualityOptions } from '../../engine/quality/quality-query.js'
import type { QualityReport, SymbolQuality } from '../../engine/quality/quality-types.js'
import { signalOf } from '../../engine/typed-queries.js'
import { readSeries } from '../../engine/quality/scan-series.js'
import { throwIfAborted } from '../../rules/abort.js'
import type { Limits } from '../../types.js'
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
    const window = { from: query.from, to: query.to, values: query.moves, sources: query.sources, signal }
    // A series may be refilled for the next symbol: each symbol's report is made (and copies what it keeps) before the next is read.
    let at = 0
    for await (const series of readSeries(view, symbols, window)) reports.push(symbolQuality(symbols[at++] as string, series, query))
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

