import { PriceStoreError } from '../errors.js'
import type {
  LatestQuery, Limits, PriceAnswer, PriceQuery, PriceRecord, RangeQuery, SampledRecord, SeveralQuery,
} from '../types.js'
import { sampleRows, withMinutes } from './sample.js'
import type { SampleRange, ScanRow, ScanSource } from './scan-source.js'

/** How many per-symbol reads of the several-tokens form are in flight at once. */
const SEVERAL_CONCURRENCY = 64

/**
 * Answers a validated query from a scan source: the pure core shared by the
 * store's typed methods, `store.query()` and the HTTP adapter.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` when a range answer exceeds `limits.maxRangePoints`
 */
export async function executeQuery(query: PriceQuery, source: ScanSource, limits: Limits): Promise<PriceAnswer> {
  switch (query.kind) {
    case 'latest':
      return latestRecords(query, source)
    case 'several':
      return severalLatest(query, source)
    case 'range':
      return rangeRecords(query, source, limits.maxRangePoints)
  }
}

/** Newest first: `limit` records after skipping `offset`, inside the optional window. */
export async function latestRecords(query: LatestQuery, source: ScanSource): Promise<PriceRecord[]> {
  const records: PriceRecord[] = []
  let toSkip = query.offset
  const wanted = query.offset + query.limit
  const scan = source.scan(query.symbol, { ...window(query), reverse: true, ...(Number.isSafeInteger(wanted) ? { limit: wanted } : {}) })
  for await (const batch of scan) {
    for (const row of batch) {
      if (toSkip > 0) {
        toSkip--
        continue
      }
      records.push(row.record())
      if (records.length === query.limit) return records
    }
  }
  return records
}

/** The latest record of each symbol inside the window, keyed by symbol; symbols without one are left out. */
export async function severalLatest(query: SeveralQuery, source: ScanSource): Promise<Record<string, PriceRecord>> {
  const symbols = query.symbols === 'all' ? await source.symbols() : query.symbols
  const found: (PriceRecord | undefined)[] = new Array(symbols.length)
  for (let start = 0; start < symbols.length; start += SEVERAL_CONCURRENCY) {
    const chunk = symbols.slice(start, start + SEVERAL_CONCURRENCY)
    const latest = await Promise.all(chunk.map((symbol) => latestOf(symbol, query, source)))
    latest.forEach((record, i) => (found[start + i] = record))
  }
  const answer: Record<string, PriceRecord> = {}
  symbols.forEach((symbol, i) => {
    const record = found[i]
    // defineProperty, because assigning a symbol named "__proto__" would set the prototype.
    if (record !== undefined) Object.defineProperty(answer, symbol, { value: record, enumerable: true, writable: true, configurable: true })
  })
  return answer
}

/**
 * The range form: sampled, then `offset`, then `limit`, oldest first.
 * Counts the whole answer before decoding any of it, so an over-large
 * request is refused cheaply and with the size it would have had.
 */
export async function rangeRecords(query: RangeQuery, source: ScanSource, maxPoints: number): Promise<SampledRecord[]> {
  const end = query.limit === undefined ? Number.POSITIVE_INFINITY : query.offset + query.limit
  const kept = []
  let position = 0
  let count = 0
  for await (const row of sampleRows(rowsToSample(source, query.symbol, query), query.interval)) {
    if (position >= query.offset) {
      count++
      if (count <= maxPoints) kept.push(row)
    }
    position++
    if (position >= end) break
  }
  if (count > maxPoints) {
    throw new PriceStoreError(
      'PRICE_RANGE_TOO_LARGE',
      `the answer would hold ${count} records, more than the cap of ${maxPoints} (maxRangePoints); ` +
        'use a larger interval, a narrower time range, or a limit',
      { details: { parameter: 'interval', count, cap: maxPoints } },
    )
  }
  return kept.map((row) => withMinutes(row.record()))
}

/** The range form without a cap, as a stream: one record per bucket, oldest first. */
export async function* streamRange(
  source: ScanSource,
  symbol: string,
  range: SampleRange,
): AsyncGenerator<SampledRecord> {
  for await (const row of sampleRows(rowsToSample(source, symbol, range), range.interval)) {
    yield withMinutes(row.record())
  }
}

/** The source's bucket heads when it has them for this interval, otherwise every row of the range. */
function rowsToSample(source: ScanSource, symbol: string, range: SampleRange): AsyncIterable<readonly ScanRow[]> {
  return source.bucketHeads?.(symbol, range) ?? source.scan(symbol, { from: range.from, to: range.to, reverse: false })
}

async function latestOf(symbol: string, query: SeveralQuery, source: ScanSource): Promise<PriceRecord | undefined> {
  for await (const batch of source.scan(symbol, { ...window(query), reverse: true, limit: 1 })) {
    const row = batch[0]
    if (row !== undefined) return row.record()
  }
  return undefined
}

function window(query: { readonly from?: number; readonly to?: number }): { from?: number; to?: number } {
  return { ...(query.from === undefined ? {} : { from: query.from }), ...(query.to === undefined ? {} : { to: query.to }) }
}
