import type { BucketGrid, PriceRecord, SampledRecord } from '../../types.js'
import { compareTimeAndId } from '../../rules/compare-ids.js'
import { bucketOf, epochGrid, gridOf, type GridLines } from '../grid.js'
import type { ScanRow, ScanSource } from '../scan-source.js'
import { rowsOf, type Rows } from './rows.js'

/** The UTC minute of the hour of a timestamp: `Math.floor(timestamp / 60000) % 60`. */
export function minuteOfHour(timestamp: number): number {
  return Math.floor(timestamp / 60_000) % 60
}

/** A record with its `minutes` added, as the range form returns it (frozen, like every returned record). */
export function withMinutes(record: PriceRecord): SampledRecord {
  return Object.freeze({ ...record, minutes: minuteOfHour(record.timestamp) })
}

/**
 * Samples records into buckets `width` ms wide: one record per epoch-aligned bucket
 * `floor(timestamp / width)`, the bucket's latest (greatest timestamp,
 * then greatest id by UTF-8 bytes), oldest bucket first, each with `minutes`.
 * The input may be in any order.
 * @param width each bucket's width in ms (the range form's bucket width)
 * @example
 * sampleByInterval(records, 3_600_000) // the closing record of each UTC hour
 */
export function sampleByInterval(records: Iterable<PriceRecord>, width: number): SampledRecord[] {
  const grid = epochGrid(width)
  const latestByBucket = new Map<number, PriceRecord>()
  for (const record of records) {
    const bucket = bucketOf(grid, record.timestamp)
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
  readonly #grid: GridLines
  readonly #emit: (row: ScanRow) => boolean
  #pending: ScanRow | undefined
  #pendingBucket = 0
  #stopped = false

  /** @param grid the buckets' lines (see grid.ts) */
  constructor(grid: GridLines, emit: (row: ScanRow) => boolean) {
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

/** A row as the range form returns it: with `minutes`, built by the row when it can. */
export function sampledRecord(row: ScanRow): SampledRecord {
  return row.sampled?.() ?? withMinutes(row.record())
}

/** The source's bucket heads when it has them for this grid, otherwise every row of the range. */
export function rowsToSample(source: ScanSource, symbol: string, grid: BucketGrid): Rows {
  return source.bucketHeads?.(symbol, gridOf(grid)) ?? rowsOf(source, symbol, { from: grid.from, to: grid.to, reverse: false })
}
