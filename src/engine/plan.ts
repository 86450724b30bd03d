import { PriceStoreError } from '../errors.js'
import type { PriceQuery } from '../types.js'
import type { ScanOptions } from './scan-source.js'

/**
 * The most records a query may read and still count as light: a light query
 * never waits behind heavy ones at the HTTP gate.
 */
export const LIGHT_QUERY_RECORDS = 100

/** What a planned read is for; the executor finds its reads by role. */
export type ReadRole =
  /** The form's own read: the window of a latest/as-of lookup, or the whole range of a bucketed form. */
  | 'main'
  /** The one seek for the record in force before a range starts (gap fill, TWAP). */
  | 'carry'
  /** The as-of lookup's seek forward from `to` (direction `after` or `nearest`). */
  | 'after'

/** One read of each symbol's records, as the executor makes it. */
export interface PlannedRead extends ScanOptions {
  readonly role: ReadRole
}

/**
 * A query compiled once, read by everything that must know what it will
 * do: the executor (its form and reads), the store's hot tails (whether
 * they hold every row the reads need) and the HTTP gate (its cost). Build
 * one with {@link planQuery}; plans are frozen.
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

/** Every plan {@link planQuery} makes, and only those (a brand {@link checkPlan} can trust cheaply). */
class MadePlan implements QueryPlan {
  constructor(
    readonly query: PriceQuery,
    readonly symbols: readonly string[] | 'all',
    readonly reads: readonly PlannedRead[],
    readonly records: number,
    readonly heavy: boolean,
    readonly maxRangePoints: number,
  ) {
    Object.freeze(this)
  }
}

/**
 * Compiles a validated query (from `parseQuery` or the typed methods) into
 * its plan.
 * @example
 * planQuery(parseQuery(params, config), config.limits.maxRangePoints).heavy
 */
export function planQuery(query: PriceQuery, maxRangePoints: number): QueryPlan {
  const symbols = query.kind === 'several' || query.kind === 'twap' ? query.symbols : [query.symbol]
  const reads = readsOf(query)
  let perSymbol = 0
  for (const read of reads) perSymbol += read.limit ?? Number.POSITIVE_INFINITY
  const records = symbols === 'all' ? Number.POSITIVE_INFINITY : perSymbol * symbols.length
  return new MadePlan(query, symbols, reads, records, records > LIGHT_QUERY_RECORDS, maxRangePoints)
}

/**
 * Checks that `plan` was made by {@link planQuery} (a plan is trusted: its
 * query is not validated again).
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for anything else
 */
export function checkPlan(plan: unknown): asserts plan is QueryPlan {
  // A copy ({ ...plan }) or a look-alike is not a plan; its query was never validated.
  if (!(plan instanceof MadePlan)) {
    throw new PriceStoreError('PRICE_INVALID_QUERY', 'not a query plan: make one with store.plan(params)', { details: { parameter: 'plan' } })
  }
}

/** The reads of the newest `limit` records with no window, the most common plan, made once per limit. */
const newestReads = new Map<number, readonly PlannedRead[]>()
/** Limits past this are not kept in {@link newestReads} (offsets are unbounded). */
const MAX_SHARED_LIMIT = 1_024

/** A query's reads, frozen (shared between plans for the newest records with no window). */
function readsOf(query: PriceQuery): readonly PlannedRead[] {
  if ((query.kind === 'latest' || query.kind === 'several') && query.asOf === undefined && query.from === undefined && query.to === undefined) {
    const limit = query.kind === 'latest' ? query.offset + query.limit : 1
    let reads = newestReads.get(limit)
    if (reads === undefined) {
      reads = frozenReads([{ role: 'main', reverse: true, limit }])
      if (limit <= MAX_SHARED_LIMIT) newestReads.set(limit, reads)
    }
    return reads
  }
  return frozenReads(buildReads(query))
}

function frozenReads(reads: PlannedRead[]): readonly PlannedRead[] {
  for (const read of reads) Object.freeze(read)
  return Object.freeze(reads)
}

function buildReads(query: PriceQuery): PlannedRead[] {
  switch (query.kind) {
    case 'latest':
    case 'several': {
      const limit = query.kind === 'latest' ? query.offset + query.limit : 1
      if (query.asOf === undefined) return [{ role: 'main', ...window(query.from, query.to), reverse: true, limit }]
      const to = query.to as number
      const { direction, tolerance } = query.asOf
      const reads: PlannedRead[] = []
      if (direction !== 'after') {
        reads.push({ role: 'main', ...window(tolerance === undefined ? undefined : Math.max(0, to - tolerance), to), reverse: true, limit: 1 })
      }
      if (direction !== 'before') {
        reads.push({ role: 'after', ...window(to, tolerance === undefined ? undefined : Math.min(Number.MAX_SAFE_INTEGER, to + tolerance)), reverse: false, limit: 1 })
      }
      return reads
    }
    case 'range':
    case 'candles': {
      const main: PlannedRead = { role: 'main', from: query.from, to: query.to, reverse: false }
      return query.fill === undefined ? [main] : [main, ...carryRead(query.from)]
    }
    case 'twap':
      // The record in force at `from` may be at `from` itself; the window read starts after it.
      return [
        { role: 'carry', to: query.from, reverse: true, limit: 1 },
        ...(query.to > query.from ? [{ role: 'main' as const, from: query.from + 1, to: query.to, reverse: false }] : []),
      ]
  }
}

/** The seek for the latest record before `from`, when there can be one. */
function carryRead(from: number): PlannedRead[] {
  return from === 0 ? [] : [{ role: 'carry', to: from - 1, reverse: true, limit: 1 }]
}

function window(from: number | undefined, to: number | undefined): { from?: number; to?: number } {
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }
}
