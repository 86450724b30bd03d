import type { BucketGrid, PriceRecord, SampledRecord } from '../types.js'
import { compareTimeAndId } from '../rules/compare-ids.js'
import { bucketOf } from './grid.js'
import type { ScanRow } from './scan-source.js'

type Grid = Pick<BucketGrid, 'interval' | 'origin'>

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
    if (held === undefined || compareTimeAndId(record, held) > 0) latestByBucket.set(bucket, record)
  }
  return [...latestByBucket.keys()]
    .sort((a, b) => a - b)
    .map((bucket) => withMinutes(latestByBucket.get(bucket) as PriceRecord))
}

/**
 * Picks the last row of each bucket from rows pushed in ascending
 * (timestamp, id) order, which is the bucket's latest record; rows are never
 * decoded here. `emit` receives each bucket's row once the next bucket
 * starts (or on `flush`) and returns false to stop the sampling.
 */
export class BucketSampler {
  readonly #grid: Grid
  readonly #emit: (row: ScanRow) => boolean
  #pending: ScanRow | undefined
  #pendingBucket = 0
  #stopped = false

  /** @param grid the buckets: `interval` ms wide, starting at `origin` (0: the epoch) */
  constructor(grid: Grid, emit: (row: ScanRow) => boolean) {
    this.#grid = grid
    this.#emit = emit
  }

  /** Takes the next row; false once sampling has stopped. */
  push(row: ScanRow): boolean {
    const bucket = bucketOf(this.#grid, row.timestamp)
    if (this.#pending !== undefined && bucket !== this.#pendingBucket && !this.#emit(this.#pending)) {
      this.#stopped = true
      return false
    }
    this.#pending = row
    this.#pendingBucket = bucket
    return true
  }

  /** Emits the last bucket's row, unless sampling stopped early. */
  flush(): void {
    if (!this.#stopped && this.#pending !== undefined) this.#emit(this.#pending)
    this.#pending = undefined
  }
}
