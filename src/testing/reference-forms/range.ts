/** The reference model of the range form, with and without gap fill. */
import type { PriceRecord, SampledRecord } from '../../types.js'
import { bucketsOf, endOf, inBucket, latestAtOrBefore, startOf, type Grid } from './grid.js'

const withMinutes = (r: PriceRecord): SampledRecord => ({ ...r, minutes: Math.floor(r.timestamp / 60_000) % 60 })

/**
 * The range form over a grid: each bucket's latest record; with fill, every
 * bucket, an empty one carrying the latest record at or before its end,
 * unless older than maxAge there (then the bucket is left out).
 */
export function referenceRange(inRange: readonly PriceRecord[], everything: readonly PriceRecord[], grid: Grid, fill: boolean, maxAge: number | undefined): unknown[] {
  if (!fill) {
    const latestPerBucket = new Map<number, PriceRecord>()
    // Ascending order, so the last record seen in a bucket is its latest.
    for (const r of inRange) latestPerBucket.set(Math.floor((r.timestamp - grid.origin) / grid.interval), r)
    return [...latestPerBucket.keys()].sort((a, b) => a - b).map((k) => withMinutes(latestPerBucket.get(k)!))
  }
  const out: unknown[] = []
  for (const k of bucketsOf(grid)) {
    const own = inRange.filter(inBucket(grid, k)).at(-1)
    const record = own ?? latestAtOrBefore(everything, endOf(grid, k))
    if (record === undefined) continue
    const age = endOf(grid, k) - record.timestamp
    if (own === undefined && maxAge !== undefined && age > maxAge) continue
    out.push({ bucket: startOf(grid, k), carried: own === undefined, age, record: withMinutes(record) })
  }
  return out
}
