/**
 * The per-bucket part of a quality report: every bucket of the grid over
 * `from..to` (empty ones too, so a chart shows where a feed thinned), each
 * with the counts of the records inside it. A gap, a duplicate and a move
 * belong to the bucket of their later record.
 */
import type { BucketGrid } from '../../types.js'
import { bucketCount, bucketOf, bucketStart } from '../grid.js'
import { gapStatistics, type QualitySeries, type SeriesGaps } from './series.js'
import { TopIndexes, moveAt } from './moves.js'
import type { BucketQuality } from './quality-types.js'

/** Every bucket of `grid`, oldest first; the series lies inside `grid.from..grid.to`. */
export function bucketQualities(series: QualitySeries, gaps: SeriesGaps, threshold: number | null, grid: BucketGrid): BucketQuality[] {
  const { timestamps, values, length } = series
  const first = bucketOf(grid, grid.from)
  const buckets: BucketQuality[] = []
  let record = 0
  let gap = 0
  for (let b = 0, count = bucketCount(grid); b < count; b++) {
    const start = bucketStart(grid, first + b)
    const lo = record
    while (record < length && bucketOf(grid, timestamps[record] as number) - first === b) record++
    const gapLo = gap
    while (gap < gaps.count && (gaps.ends[gap] as number) < record) gap++
    let duplicates = 0
    const move = new TopIndexes(1)
    for (let i = Math.max(lo, 1); i < record; i++) {
      if (timestamps[i] === timestamps[i - 1]) duplicates++
      if (values === undefined) continue
      const change = Math.abs((values[i] as number) - (values[i - 1] as number))
      if (change > 0) move.offer(i, change)
    }
    let over = 0
    if (threshold !== null) for (let g = gapLo; g < gap; g++) if ((gaps.lengths[g] as number) > threshold) over++
    const largest = move.indexes[0]
    buckets.push({
      start,
      records: record - lo,
      firstTimestamp: record === lo ? null : (timestamps[lo] as number),
      lastTimestamp: record === lo ? null : (timestamps[record - 1] as number),
      gaps: { count: gap - gapLo, ...gapStatistics(gaps.lengths.subarray(gapLo, gap), gap - gapLo), over },
      duplicates,
      largestMove: largest === undefined || values === undefined ? null : moveAt(series, values, largest),
    })
  }
  return buckets
}
