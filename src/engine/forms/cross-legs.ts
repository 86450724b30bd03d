import type { BucketGrid, CrossPair, RecordRef } from '../../types.js'
import { fail } from '../../rules/query-errors.js'
import type { DataCounts } from '../data-counts.js'
import { READ_COST } from '../data-counts.js'
import { bucketCount, bucketOf, bucketStart, bucketEnd } from '../grid.js'
import { carryRead } from '../kernels/bucketed.js'
import { pageOf, rangeTooLarge, type Paging } from '../kernels/paging.js'
import { forEachRow, refOf, rowsOf, type Rows } from '../kernels/rows.js'
import { frozenReads, type PlannedRead, type QueryPlan } from '../query-plan.js'
import type { ScanSource } from '../scan-source.js'

/*
 * What the cross-rate forms share: the reads of a series (per leg, one seek
 * for the record in force before `from` and one ascending scan of the
 * window), reading both legs into record references, the refusal of an
 * unknown symbol, and the bucket pages of the range and candles (every
 * bucket of the grid appears, so the size is known before reading).
 */

/** The two legs of a series, each in ascending (timestamp, id) order, the record in force before `from` first. */
export interface LegRefs {
  readonly quote: readonly RecordRef[]
  readonly base: readonly RecordRef[]
}

/** Per leg: the seek for the record in force before `from` (when there can be one), then the window oldest first. */
export function seriesReads(from: number, to: number): readonly PlannedRead[] {
  return frozenReads([...carryRead(from), { role: 'main', from, to, reverse: false }])
}

/**
 * Reads both legs of a series through the plan's reads, both at once; the
 * main read's rows come from `mainRows` when given (the range's bucket
 * heads). Refuses a symbol the store has no record of.
 */
export async function readLegs(plan: QueryPlan & { readonly query: CrossPair }, source: ScanSource, mainRows?: (symbol: string) => Rows): Promise<LegRefs> {
  const { quote, base } = plan.query
  const [quoteRefs, baseRefs] = await Promise.all([quote, base].map((symbol) => readLeg(plan, source, symbol, mainRows)))
  await refuseUnknown(plan.query, source, quoteRefs as RecordRef[], baseRefs as RecordRef[])
  return { quote: quoteRefs as RecordRef[], base: baseRefs as RecordRef[] }
}

async function readLeg(plan: QueryPlan, source: ScanSource, symbol: string, mainRows: ((symbol: string) => Rows) | undefined): Promise<RecordRef[]> {
  const refs: RecordRef[] = []
  for (const read of plan.reads) {
    const rows = read.role === 'main' && mainRows !== undefined ? mainRows(symbol) : rowsOf(source, symbol, read)
    await forEachRow(rows, (row) => (refs.push(refOf(row)), true))
  }
  return refs
}

/**
 * A cross rate of a symbol the store holds no record of is a coded 400
 * (`PRICE_INVALID_SYMBOL`, naming `quote` or `base`), not a refused point:
 * it asks the store's symbols only when a leg read nothing.
 */
export async function refuseUnknown(pair: CrossPair, source: ScanSource, quote: readonly unknown[], base: readonly unknown[]): Promise<void> {
  if (quote.length > 0 && base.length > 0) return
  const known = new Set(await source.symbols())
  for (const [parameter, symbol] of [['quote', pair.quote], ['base', pair.base]] as const) {
    if (!known.has(symbol)) throw fail('PRICE_INVALID_SYMBOL', parameter, `${parameter} names no symbol of this store (got ${JSON.stringify(symbol)})`)
  }
}

/** A bucketed cross-rate query: a grid, paging. */
export type CrossGridQuery = BucketGrid & Paging

/**
 * The grid indexes of the buckets the answer holds (every bucket of the
 * grid, then `offset` and `limit`), oldest first.
 * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE` over the cap, before anything is read
 */
export function pageBuckets(query: CrossGridQuery, cap: number): { readonly first: number; readonly count: number } {
  const count = pageOf(bucketCount(query), query)
  if (count > cap) throw rangeTooLarge(count, cap, false)
  return { first: bucketOf(query, query.from) + query.offset, count }
}

/** The first and last millisecond of bucket `index` inside the window (clipped to `from..to`). */
export function bucketWindow(query: BucketGrid, index: number): { readonly start: number; readonly end: number } {
  return { start: Math.max(query.from, bucketStart(query, index)), end: bucketEnd(query, index) }
}

/** The records a series reads of both legs, as the cost counts them (the seeks included). */
export function legsRead(query: CrossPair & { readonly from: number; readonly to: number }, counts: DataCounts, onGrid?: BucketGrid): number {
  let read = 0
  for (const symbol of [query.quote, query.base]) {
    const records = counts.records(symbol, query.from, query.to)
    const heads = onGrid === undefined ? undefined : counts.rowsOnGrid?.(symbol, onGrid)
    read += (heads === undefined ? records : Math.min(records, heads)) + 1
  }
  return read * READ_COST
}
