import { PriceStoreError } from '../errors.js'
import type {
  LatestQuery, Limits, PriceAnswer, PriceQuery, PriceRecord, RangeQuery, SampledRecord, SeveralQuery,
} from '../types.js'
import { BucketSampler, withMinutes } from './sample.js'
import type { SampleRange, ScanOptions, ScanRow, ScanSource } from './scan-source.js'

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
  const options = { ...window(query), reverse: true, ...(Number.isSafeInteger(wanted) ? { limit: wanted } : {}) }
  await forEachRow(rowsOf(source, query.symbol, options), (row) => {
    if (toSkip > 0) toSkip--
    else records.push(row.record())
    return records.length < query.limit
  })
  return records
}

/** The latest record of each symbol inside the window, keyed by symbol; symbols without one are left out. */
export async function severalLatest(query: SeveralQuery, source: ScanSource): Promise<Record<string, PriceRecord>> {
  const symbols = query.symbols === 'all' ? await source.symbols() : query.symbols
  const options = { ...window(query), reverse: true, limit: 1 }
  const found: (ScanRow | undefined)[] = new Array(symbols.length)
  // Symbols a synchronous read cannot answer are read in batches of concurrent scans.
  const waiting: number[] = []
  symbols.forEach((symbol, i) => {
    const rows = source.scanNow?.(symbol, options)
    if (rows === undefined) waiting.push(i)
    else found[i] = rows[0]
  })
  for (let start = 0; start < waiting.length; start += SEVERAL_CONCURRENCY) {
    await Promise.all(waiting.slice(start, start + SEVERAL_CONCURRENCY).map((i) =>
      forEachRow(source.scan(symbols[i] as string, options), (row) => {
        found[i] = row
        return false
      })))
  }
  const entries: [string, PriceRecord][] = []
  symbols.forEach((symbol, i) => {
    const row = found[i]
    if (row !== undefined) entries.push([symbol, row.record()])
  })
  // fromEntries defines own properties, so a symbol named "__proto__" is a key, not the prototype.
  return Object.fromEntries(entries)
}

/**
 * The range form: sampled, then `offset`, then `limit`, oldest first.
 * Counts the whole answer before decoding any of it, so an over-large
 * request is refused cheaply and with the size it would have had.
 */
export async function rangeRecords(query: RangeQuery, source: ScanSource, maxPoints: number): Promise<SampledRecord[]> {
  const end = query.limit === undefined ? Number.POSITIVE_INFINITY : query.offset + query.limit
  const kept: ScanRow[] = []
  let position = 0
  let count = 0
  const sampler = new BucketSampler(query.interval, (row) => {
    if (position >= query.offset && ++count <= maxPoints) kept.push(row)
    return ++position < end
  })
  await forEachRow(rowsToSample(source, query.symbol, query), (row) => sampler.push(row))
  sampler.flush()
  if (count > maxPoints) {
    throw new PriceStoreError(
      'PRICE_RANGE_TOO_LARGE',
      `the answer would hold ${count} records, more than the cap of ${maxPoints} (maxRangePoints); ` +
        'use a larger interval, a narrower time range, or a limit',
      { details: { parameter: 'interval', count, cap: maxPoints } },
    )
  }
  return kept.map(sampledRecord)
}

/** The range form without a cap, as a stream: one record per bucket, oldest first. */
export async function* streamRange(
  source: ScanSource,
  symbol: string,
  range: SampleRange,
): AsyncGenerator<SampledRecord> {
  const rows = rowsToSample(source, symbol, range)
  // One generator, so each record costs one promise hop, not one per layer.
  let ready: ScanRow[] = []
  const sampler = new BucketSampler(range.interval, (row) => ready.push(row) > 0)
  for await (const batch of Array.isArray(rows) ? [rows as readonly ScanRow[]] : (rows as AsyncIterable<readonly ScanRow[]>)) {
    for (const row of batch) sampler.push(row)
    const out = ready
    ready = []
    for (const row of out) yield sampledRecord(row)
  }
  sampler.flush()
  for (const row of ready) yield sampledRecord(row)
}

type Rows = readonly ScanRow[] | AsyncIterable<readonly ScanRow[]>

/** A row as the range form returns it. */
function sampledRecord(row: ScanRow): SampledRecord {
  return row.sampled?.() ?? withMinutes(row.record())
}

/** The rows of a scan: at once from an in-memory source, as batches otherwise. */
function rowsOf(source: ScanSource, symbol: string, options: ScanOptions): Rows {
  return source.scanNow?.(symbol, options) ?? source.scan(symbol, options)
}

/** The source's bucket heads when it has them for this interval, otherwise every row of the range. */
function rowsToSample(source: ScanSource, symbol: string, range: SampleRange): Rows {
  return source.bucketHeads?.(symbol, range) ?? rowsOf(source, symbol, { from: range.from, to: range.to, reverse: false })
}

/**
 * Feeds rows to `take` until it returns false; leaving a scan early closes
 * it. In-memory rows are fed synchronously (no promise), which keeps the
 * hot-tail path free of extra microtask hops.
 */
function forEachRow(rows: Rows, take: (row: ScanRow) => boolean): Promise<void> | undefined {
  if (!Array.isArray(rows)) return forEachBatchedRow(rows as AsyncIterable<readonly ScanRow[]>, take)
  for (const row of rows as readonly ScanRow[]) if (!take(row)) break
  return undefined
}

async function forEachBatchedRow(batches: AsyncIterable<readonly ScanRow[]>, take: (row: ScanRow) => boolean): Promise<void> {
  for await (const batch of batches) {
    for (const row of batch) if (!take(row)) return
  }
}

function window(query: { readonly from?: number; readonly to?: number }): { from?: number; to?: number } {
  return { ...(query.from === undefined ? {} : { from: query.from }), ...(query.to === undefined ? {} : { to: query.to }) }
}
