import type { BucketGrid } from '../types.js'

/**
 * The bucket grid of the range, candle and fill forms, in one place: bucket
 * `i` holds the timestamps `origin + i * interval` up to the next bucket's
 * start. Every module that needs a bucket asks here, so the formula exists
 * once (the parser and the typed options check `interval` and build the
 * grid with {@link toGrid}; everything else passes a grid to these functions).
 */

/** The lines of a bucket grid without its range: bucket `i` starts at `origin + i * interval`. */
export type GridLines = Pick<BucketGrid, 'interval' | 'origin'>

/** The bucket grid of a range, `origin` normalised into `0..interval−1`. */
export function toGrid(from: number, to: number, interval: number, origin: number | undefined): BucketGrid {
  // One remainder, then one addition: `(o % i + i) % i` would pass 2^53 for huge intervals and round.
  const rest = (origin ?? 0) % interval
  return { from, to, interval, origin: rest < 0 ? rest + interval : rest === 0 ? 0 : rest }
}

/** The lines of a grid of buckets `width` ms wide aligned to the Unix epoch. */
export function epochGrid(width: number): GridLines {
  return { interval: width, origin: 0 }
}

/** Only the grid of `grid` (a query holds more), as a source's bucket index is asked for it. */
export function gridOf(grid: BucketGrid): BucketGrid {
  const { from, to, interval, origin } = grid
  return { from, to, interval, origin }
}

/** The index of the bucket holding `timestamp` on `grid`. */
export function bucketOf(grid: GridLines, timestamp: number): number {
  return Math.floor((timestamp - grid.origin) / grid.interval)
}

/** The first millisecond of bucket `index` on `grid`. */
export function bucketStart(grid: GridLines, index: number): number {
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
export function nestsOn(grid: GridLines, step: number): boolean {
  return grid.interval % step === 0 && grid.origin % step === 0
}
