import { READ_COST } from '../data-counts.js'
import { bucketCount } from '../grid.js'
import type { BucketedQuery } from './bucket-stream.js'
import { pageOf } from './paging.js'
import { frozenReads, type PlannedRead } from '../query-plan.js'

/*
 * What the two bucketed forms (range and candles) share beside the stream
 * (bucket-stream.ts): their reads and the shape of their cost. Gap fill is
 * an option of both (`query.fill`), not a form: it adds the carry read and
 * fills the buckets the form's own answer leaves empty.
 */

/** The range's read, and with gap fill the seek for the record in force before it. */
export function bucketedReads(query: BucketedQuery): readonly PlannedRead[] {
  const main: PlannedRead = { role: 'main', from: query.from, to: query.to, reverse: false }
  return frozenReads(query.fill === undefined ? [main] : [main, ...carryRead(query.from)])
}

/** The seek for the latest record before `from`, when there can be one (gap fill, and each leg of a cross-rate series). */
export function carryRead(from: number): PlannedRead[] {
  return from === 0 ? [] : [{ role: 'carry', to: from - 1, reverse: true, limit: 1 }]
}

/** How many buckets the answer may hold before paging: every bucket with fill, else at most one per record. */
export function bucketsChosen(query: BucketedQuery, records: number): number {
  const buckets = bucketCount(query)
  return query.fill === undefined ? Math.min(buckets, records) : buckets
}

/** The cost of a bucketed answer: the page of `chosen` buckets returned, and `read` records read. */
export function bucketedCost(query: BucketedQuery, chosen: number, read: number): number {
  return pageOf(chosen, query) + read * READ_COST
}
