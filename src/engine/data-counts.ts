import type { BucketGrid } from '../types.js'

/** What a source knows of its data that weighs a query, without reading records. */
export interface DataCounts {
  /** Every symbol with a record. */
  readonly symbols: readonly string[]
  /** About how many records `symbol` has in `from..to` (an estimate: it orders work, it decides no answer). */
  records(symbol: string, from: number, to: number): number
  /**
   * How many buckets of the grid surely hold a record of `symbol` (a lower
   * bound of the range form's answer before `offset` and `limit`), when the
   * source can tell cheaply; otherwise `undefined`.
   */
  bucketsSurelyHeld?(symbol: string, grid: BucketGrid): number | undefined
  /**
   * How many rows a scan of `symbol` on `grid` reads when the source can
   * answer from something smaller than every record (the store's ten-minute
   * heads); `undefined` when such a scan reads every record of the range.
   */
  rowsOnGrid?(symbol: string, grid: BucketGrid): number | undefined
}

/**
 * What a record read but not returned costs beside one returned: a row is
 * picked from a column without decoding, while a returned one is decoded and
 * serialised as about 1.4 KB of JSON.
 */
export const READ_COST = 1 / 8
