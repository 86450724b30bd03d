import type { BucketGrid } from '../types.js'

/**
 * The bucket grid of the range, candle and fill forms, in one place: bucket
 * `i` holds the timestamps `origin + i * interval` up to the next bucket's
 * start. Every module that needs a bucket asks here, so the formula exists
 * once (the parser and the typed options check `interval`; nothing else
 * reads it).
 */
type Grid = Pick<BucketGrid, 'interval' | 'origin'>

/** The index of the bucket holding `timestamp` on `grid`. */
export function bucketOf(grid: Grid, timestamp: number): number {
  return Math.floor((timestamp - grid.origin) / grid.interval)
}

/** The first millisecond of bucket `index` on `grid`. */
export function bucketStart(grid: Grid, index: number): number {
  return grid.origin + index * grid.interval
}

/** The last millisecond of bucket `index` inside the grid's range (its end clipped to `to`). */
export function bucketEnd(grid: BucketGrid, index: number): number {
  return Math.min(grid.to, bucketStart(grid, index + 1) - 1)
}

/** How many buckets of `grid` its range `from..to` spans (both ends' buckets included). */
export function bucketCount(grid: BucketGrid): number {
  return bucketOf(grid, grid.to) - bucketOf(grid, grid.from) + 1
}

/**
 * Whether every bucket boundary of `grid` is also a boundary of a finer grid
 * of `step` from 0, so that buckets of `step` nest inside the grid's buckets
 * (the store's ten-minute heads do for grids on ten-minute lines).
 */
export function nestsOn(grid: Grid, step: number): boolean {
  return grid.interval % step === 0 && grid.origin % step === 0
}
