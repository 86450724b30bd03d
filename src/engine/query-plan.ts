import type { PriceQuery } from '../types.js'
import type { ScanOptions } from './scan-source.js'

/**
 * The most records a query may read and still count as light: a light query
 * never waits behind heavy ones at the HTTP gate.
 */
export const LIGHT_QUERY_RECORDS = 100

/** What a planned read is for; a form finds its reads by role. */
export type ReadRole =
  /** The form's own read: the window of a latest/as-of lookup, or the whole range of a bucketed form. */
  | 'main'
  /** The one seek for the record in force before a range starts (gap fill, TWAP). */
  | 'carry'
  /** The as-of lookup's seek forward from `to` (direction `after` or `nearest`). */
  | 'after'

/** One read of each symbol's records, as the form's run makes it. */
export interface PlannedRead extends ScanOptions {
  readonly role: ReadRole
}

/**
 * A query compiled once, read by everything that must know what it will
 * do: the executor (its form and reads, see forms/), the store's hot tails (whether
 * they hold every row the reads need) and the HTTP gate (its cost). Build
 * one with `planQuery` (plan.ts); plans are frozen. The type lives apart
 * from `planQuery` so the forms, which `planQuery` asks for their reads,
 * can name it without an import cycle.
 */
export interface QueryPlan {
  readonly query: PriceQuery
  /** The symbols read: a list, or `'all'` for every symbol in the store. */
  readonly symbols: readonly string[] | 'all'
  /** The reads made of each symbol, in the order they are made. */
  readonly reads: readonly PlannedRead[]
  /** The most records the reads may return, over all symbols; infinite when only the data bounds it. */
  readonly records: number
  /** Whether the query may read more than {@link LIGHT_QUERY_RECORDS} records. */
  readonly heavy: boolean
  /** The largest bucketed answer, from the limits the query was parsed with. */
  readonly maxRangePoints: number
}

/** A plan whose query is of one form (what a form's functions are handed). */
export type PlanOf<Q extends PriceQuery> = QueryPlan & { readonly query: Q }

/** `reads`, each frozen, in a frozen array: plans are shared and never changed. */
export function frozenReads(reads: PlannedRead[]): readonly PlannedRead[] {
  for (const read of reads) Object.freeze(read)
  return Object.freeze(reads)
}

/** The bounds of a read, each present only when given. */
export function window(from: number | undefined, to: number | undefined): { from?: number; to?: number } {
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }
}
