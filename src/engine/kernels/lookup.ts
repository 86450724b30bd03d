import type { AsOf } from '../../types.js'
import { frozenReads, window, type PlannedRead, type QueryPlan } from '../query-plan.js'
import type { ScanRow, ScanSource } from '../scan-source.js'
import { firstRow } from './rows.js'

/**
 * The lookups of the latest and several forms: the newest records in an
 * optional window, or the as-of lookup of one record around `to` with a
 * direction and tolerance (an option of both forms, not a form of its own:
 * same query kind, same answer shape).
 */
export interface LookupWindow {
  readonly from?: number
  readonly to?: number
  readonly asOf?: AsOf
}

/** The reads of the newest `limit` records with no window, the most common plan, made once per limit. */
const newestReads = new Map<number, readonly PlannedRead[]>()
/** Limits past this are not kept in {@link newestReads} (offsets are unbounded). */
const MAX_SHARED_LIMIT = 1_024

/**
 * The frozen reads of a lookup of the newest `limit` records in the window,
 * or of an as-of lookup (one record each side asked). Reads with no window
 * are shared between plans.
 */
export function lookupReads(query: LookupWindow, limit: number): readonly PlannedRead[] {
  if (query.asOf === undefined && query.from === undefined && query.to === undefined) {
    let reads = newestReads.get(limit)
    if (reads === undefined) {
      reads = frozenReads([{ role: 'main', reverse: true, limit }])
      if (limit <= MAX_SHARED_LIMIT) newestReads.set(limit, reads)
    }
    return reads
  }
  if (query.asOf === undefined) return frozenReads([{ role: 'main', ...window(query.from, query.to), reverse: true, limit }])
  const to = query.to as number
  const { direction, tolerance } = query.asOf
  const reads: PlannedRead[] = []
  if (direction !== 'after') {
    reads.push({ role: 'main', ...window(tolerance === undefined ? undefined : Math.max(0, to - tolerance), to), reverse: true, limit: 1 })
  }
  if (direction !== 'before') {
    reads.push({ role: 'after', ...window(to, tolerance === undefined ? undefined : Math.min(Number.MAX_SAFE_INTEGER, to + tolerance)), reverse: false, limit: 1 })
  }
  return frozenReads(reads)
}

/** What {@link lookupNow} answers when a read cannot be answered at once. */
export const NOT_NOW = Symbol('not now')

/**
 * The record a single-record lookup (the several form, or a directed
 * as-of) picks from its reads, when every read can be answered at once;
 * {@link NOT_NOW} otherwise.
 */
export function lookupNow(source: ScanSource, symbol: string, plan: QueryPlan): ScanRow | undefined | typeof NOT_NOW {
  let before: ScanRow | undefined
  let after: ScanRow | undefined
  for (const read of plan.reads) {
    const rows = source.scanNow?.(symbol, read)
    if (rows === undefined) return NOT_NOW
    if (read.role === 'after') after = rows[0]
    else before = rows[0]
  }
  return nearer(plan.query as LookupWindow, before, after)
}

/** {@link lookupNow} through batched reads. */
export async function lookup(source: ScanSource, symbol: string, plan: QueryPlan): Promise<ScanRow | undefined> {
  let before: ScanRow | undefined
  let after: ScanRow | undefined
  for (const read of plan.reads) {
    const row = await firstRow(source, symbol, read)
    if (read.role === 'after') after = row
    else before = row
  }
  return nearer(plan.query as LookupWindow, before, after)
}

/** Of the records found before and after the as-of time, the nearer; an equal distance goes to the one before (batch as-of shares it). */
export function nearer(query: LookupWindow, before: ScanRow | undefined, after: ScanRow | undefined): ScanRow | undefined {
  if (before === undefined || after === undefined) return before ?? after
  const to = query.to as number
  return to - before.timestamp <= after.timestamp - to ? before : after
}
