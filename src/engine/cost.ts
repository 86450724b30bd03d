import { PriceStoreError } from '../errors.js'
import type { BucketGrid } from '../types.js'
import { bucketCount } from './grid.js'
import type { QueryPlan } from './plan.js'

/** What a source knows of its data that weighs a query, without reading records. */
export interface DataCounts {
  /** Every symbol with a record. */
  readonly symbols: readonly string[]
  /** About how many records `symbol` has in `from..to` (an estimate: it orders work, it decides no answer). */
  records(symbol: string, from: number, to: number): number
  /**
   * How many buckets of the grid surely hold a record of `symbol` (a lower
   * bound of the range form's answer before `offset` and `limit`), when the
   * source can tell cheaply; otherwise `undefined`.
   */
  bucketsSurelyHeld?(symbol: string, grid: BucketGrid): number | undefined
  /**
   * How many rows a scan of `symbol` on `grid` reads when the source can
   * answer from something smaller than every record (the store's ten-minute
   * heads); `undefined` when such a scan reads every record of the range.
   */
  rowsOnGrid?(symbol: string, grid: BucketGrid): number | undefined
}

/**
 * What a record read but not returned costs beside one returned: a row is
 * picked from a column without decoding, while a returned one is decoded and
 * serialised as about 1.4 KB of JSON.
 */
export const READ_COST = 1 / 8

/**
 * The work a plan will do, in records: each record returned counts 1 and
 * each record only read counts {@link READ_COST}, with the records a range
 * covers estimated from `counts`. The HTTP gate orders and admits queries
 * by it. A range form sure to be refused by the cap (the buckets `counts`
 * knows hold records already pass it) is refused here, before it waits.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` for such a range
 */
export function costOf(plan: QueryPlan, counts: DataCounts): number {
  const { query } = plan
  switch (query.kind) {
    case 'latest':
      return plan.records
    case 'several':
      return (query.symbols === 'all' ? counts.symbols.length : query.symbols.length) * plan.reads.length
    case 'range':
    case 'candles': {
      const records = counts.records(query.symbol, query.from, query.to)
      const buckets = bucketCount(query)
      const chosen = query.fill === undefined ? Math.min(buckets, records) : buckets
      if (query.kind === 'range' && query.fill === undefined) refuseSurelyTooLarge(plan, counts, chosen)
      const onGrid = query.kind === 'range' ? counts.rowsOnGrid?.(query.symbol, query) : undefined
      const read = onGrid === undefined ? records : Math.min(records, onGrid)
      return pageOf(chosen, query.offset, query.limit) + read * READ_COST
    }
    case 'twap': {
      const symbols = query.symbols === 'all' ? counts.symbols : query.symbols
      let read = 0
      for (const symbol of symbols) read += counts.records(symbol, query.from, query.to) + 1
      return symbols.length + read * READ_COST
    }
  }
}

/** How many of `total` buckets an answer holds after `offset` and `limit`. */
function pageOf(total: number, offset: number, limit: number | undefined): number {
  return Math.max(0, Math.min(total - offset, limit ?? Number.POSITIVE_INFINITY))
}

/** Refuses a range whose answer, from the buckets surely held, is over the cap whatever the rest holds. */
function refuseSurelyTooLarge(plan: QueryPlan, counts: DataCounts, atMost: number): void {
  const query = plan.query as Extract<QueryPlan['query'], { kind: 'range' }>
  const cap = plan.maxRangePoints
  if (pageOf(atMost, query.offset, query.limit) <= cap || counts.bucketsSurelyHeld === undefined) return
  const held = counts.bucketsSurelyHeld(query.symbol, query)
  if (held === undefined) return
  const count = pageOf(held, query.offset, query.limit)
  if (count <= cap) return
  throw new PriceStoreError(
    'PRICE_RANGE_TOO_LARGE',
    `the answer would hold at least ${count} records, more than the cap of ${cap} (maxRangePoints); ` +
      'use a larger interval, a narrower time range, or a limit',
    { details: { parameter: 'interval', count, cap } },
  )
}
