import type { RecordRef } from '../../types.js'
import type { PlannedRead, QueryPlan, ReadRole } from '../query-plan.js'
import type { ScanOptions, ScanRow, ScanSource } from '../scan-source.js'

/** The rows of a scan: at once (an array) from an in-memory source, as batches otherwise. */
export type Rows = readonly ScanRow[] | AsyncIterable<readonly ScanRow[]>

/** The plan's read for `role`, which its form always has. */
export function readOf(plan: QueryPlan, role: ReadRole): PlannedRead {
  return findRead(plan, role) as PlannedRead
}

/** The plan's read for `role`, if it has one. A loop, not `find`: latest-1 calls it on its hot path. */
export function findRead(plan: QueryPlan, role: ReadRole): PlannedRead | undefined {
  for (const read of plan.reads) if (read.role === role) return read
  return undefined
}

/** The rows of a scan: at once from an in-memory source, as batches otherwise. */
export function rowsOf(source: ScanSource, symbol: string, options: ScanOptions): Rows {
  return source.scanNow?.(symbol, options) ?? source.scan(symbol, options)
}

/**
 * Feeds rows to `take` until it returns false; leaving a scan early closes
 * it. In-memory rows are fed synchronously (no promise), which keeps the
 * hot-tail path free of extra microtask hops.
 */
export function forEachRow(rows: Rows, take: (row: ScanRow) => boolean): Promise<void> | undefined {
  if (!Array.isArray(rows)) return forEachBatchedRow(rows as AsyncIterable<readonly ScanRow[]>, take)
  for (const row of rows as readonly ScanRow[]) if (!take(row)) break
  return undefined
}

async function forEachBatchedRow(batches: AsyncIterable<readonly ScanRow[]>, take: (row: ScanRow) => boolean): Promise<void> {
  for await (const batch of batches) {
    for (const row of batch) if (!take(row)) return
  }
}

/** The first row of a read (its `limit` taken as 1), or `undefined`. */
export async function firstRow(source: ScanSource, symbol: string, read: ScanOptions): Promise<ScanRow | undefined> {
  let found: ScanRow | undefined
  await forEachRow(rowsOf(source, symbol, { ...read, limit: 1 }), (row) => {
    found = row
    return false
  })
  return found
}

/** The latest record before the range, for gap filling; `undefined` when there is none or no read for it. */
export async function carryRow(source: ScanSource, symbol: string, plan: QueryPlan): Promise<ScanRow | undefined> {
  const read = findRead(plan, 'carry')
  return read === undefined ? undefined : firstRow(source, symbol, read)
}

/** The id, timestamp and value of a row: from the row's cheap reader when it has one. */
export function refOf(row: ScanRow): RecordRef {
  if (row.ref !== undefined) return row.ref()
  const { id, timestamp, value } = row.record()
  return { id, timestamp, value }
}
