import type { BucketGrid, Fill } from '../../types.js'
import { bucketEnd, bucketOf, bucketStart } from '../grid.js'
import type { ScanRow } from '../scan-source.js'

/**
 * A run of consecutive buckets `first..last` of one answer: one bucket with
 * its own closing row (`carried` false), or buckets with none, each carrying
 * `row` from before them. Spans let a caller count a filled answer without
 * visiting each bucket, which matters when the buckets are narrow.
 */
export interface FillSpan<T> {
  readonly first: number
  readonly last: number
  /** The row in force: the bucket's close, or the carried record; none for an empty span (`fill=none`). */
  readonly row: ScanRow | undefined
  readonly carried: boolean
  /** With `fill=none`: buckets with no record and nothing carried; `beforeFirst` when no record is at or before them. */
  readonly empty?: { readonly beforeFirst: boolean }
  /** The bucket's own item (a row, a candle) when not carried. */
  readonly item: T | undefined
}

/**
 * Turns a bucketed form's buckets into a gap-filled run: every bucket of
 * the grid's range appears, an empty one carrying the latest record at or
 * before its end (the previous bucket's close, or the record in force
 * before the range), unless that record is older than `maxAge` at the
 * bucket's end; buckets with nothing to carry are left out. With
 * `fill=none`, empty buckets are emitted as empty spans instead, all of them.
 */
export class GapFiller<T> {
  readonly #grid: BucketGrid
  readonly #maxAge: number | undefined
  readonly #none: boolean
  readonly #emit: (span: FillSpan<T>) => boolean
  readonly #lastBucket: number
  #next: number
  #held: ScanRow | undefined
  #stopped = false

  /**
   * @param carry the latest record before `grid.from`, if any
   * @param emit receives each span in order; returns false to stop
   */
  constructor(grid: BucketGrid, fill: Fill, carry: ScanRow | undefined, emit: (span: FillSpan<T>) => boolean) {
    this.#grid = grid
    this.#maxAge = fill.maxAge
    this.#none = fill.mode === 'none'
    this.#emit = emit
    this.#next = bucketOf(grid, grid.from)
    this.#lastBucket = bucketOf(grid, grid.to)
    this.#held = carry
  }

  /** Takes a bucket's own item and closing row; buckets come in ascending order. False once stopped. */
  push(bucket: number, close: ScanRow, item: T): boolean {
    if (this.#stopped) return false
    if (bucket > this.#next && !this.#carry(bucket - 1)) return false
    this.#held = close
    this.#next = bucket + 1
    return this.#send({ first: bucket, last: bucket, row: close, carried: false, item })
  }

  /** Fills the buckets after the last pushed one, up to the range's end. */
  finish(): void {
    if (!this.#stopped) this.#carry(this.#lastBucket)
  }

  /** Emits the buckets `next..last` carrying the held record, as far as `maxAge` allows. */
  #carry(last: number): boolean {
    const held = this.#held
    if (last < this.#next) return true
    if (this.#none) return this.#send({ first: this.#next, last, row: undefined, carried: false, item: undefined, empty: { beforeFirst: held === undefined } })
    if (held === undefined) return true
    const end = Math.min(last, this.#lastCarried(held.timestamp))
    if (end < this.#next) return true
    return this.#send({ first: this.#next, last: end, row: held, carried: true, item: undefined })
  }

  /** The last bucket whose end is at most `maxAge` after `timestamp`; ages only grow from bucket to bucket. */
  #lastCarried(timestamp: number): number {
    const maxAge = this.#maxAge
    if (maxAge === undefined) return this.#lastBucket
    // Bucket j's end is start(j + 1) - 1, except the last one, which ends at `to`.
    const last = bucketOf(this.#grid, timestamp + maxAge + 1) - 1
    if (last >= this.#lastBucket - 1 && this.#grid.to - timestamp <= maxAge) return this.#lastBucket
    return Math.min(last, this.#lastBucket - 1)
  }

  #send(span: FillSpan<T>): boolean {
    if (!this.#emit(span)) this.#stopped = true
    return !this.#stopped
  }
}

/** The first millisecond of bucket `index` and the age at its end (clipped to `to`) of a record at `timestamp`. */
export function bucketAge(grid: BucketGrid, index: number, timestamp: number): { bucket: number; age: number } {
  return { bucket: bucketStart(grid, index), age: bucketEnd(grid, index) - timestamp }
}
