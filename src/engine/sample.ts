import type { PriceRecord, SampledRecord } from '../types.js'
import { compareIds } from './compare-ids.js'
import type { ScanRow } from './scan-source.js'

/** The UTC minute of the hour of a timestamp: `Math.floor(timestamp / 60000) % 60`. */
export function minuteOfHour(timestamp: number): number {
  return Math.floor(timestamp / 60_000) % 60
}

/** A record with its `minutes` added, as the range form returns it (frozen, like every returned record). */
export function withMinutes(record: PriceRecord): SampledRecord {
  return Object.freeze({ ...record, minutes: minuteOfHour(record.timestamp) })
}

/**
 * Samples records at an interval: one record per epoch-aligned bucket
 * `floor(timestamp / interval)`, the bucket's latest (greatest timestamp,
 * then greatest id by UTF-8 bytes), oldest bucket first, each with `minutes`.
 * The input may be in any order.
 * @example
 * sampleByInterval(records, 3_600_000) // the closing record of each UTC hour
 */
export function sampleByInterval(records: Iterable<PriceRecord>, interval: number): SampledRecord[] {
  const latestByBucket = new Map<number, PriceRecord>()
  for (const record of records) {
    const bucket = Math.floor(record.timestamp / interval)
    const held = latestByBucket.get(bucket)
    if (held === undefined || compareRecords(record, held) > 0) latestByBucket.set(bucket, record)
  }
  return [...latestByBucket.keys()]
    .sort((a, b) => a - b)
    .map((bucket) => withMinutes(latestByBucket.get(bucket) as PriceRecord))
}

/**
 * The last row of each bucket from rows in ascending (timestamp, id) order,
 * which is the bucket's latest record; rows are never decoded here.
 */
export async function* sampleRows(batches: AsyncIterable<readonly ScanRow[]>, interval: number): AsyncGenerator<ScanRow> {
  let pending: ScanRow | undefined
  let pendingBucket = 0
  for await (const batch of batches) {
    for (const row of batch) {
      const bucket = Math.floor(row.timestamp / interval)
      if (pending !== undefined && bucket !== pendingBucket) yield pending
      pending = row
      pendingBucket = bucket
    }
  }
  if (pending !== undefined) yield pending
}

function compareRecords(a: PriceRecord, b: PriceRecord): number {
  return a.timestamp - b.timestamp || compareIds(a.id, b.id)
}
