/** The reference model of `fill=none` (empty buckets made explicit) on the range and candles forms. */
import type { PriceRecord } from '../../types.js'
import { referenceCandleOf } from './candles.js'
import { bucketsOf, endOf, inBucket, latestAtOrBefore, startOf, type Grid } from './grid.js'

const withMinutes = (r: PriceRecord) => ({ ...r, minutes: Math.floor(r.timestamp / 60_000) % 60 })

/** Every bucket of the grid, by definition: the empty one `{ bucket, count: 0 }`, `beforeFirst` when no record is at or before its end. */
function everyBucket(inRange: readonly PriceRecord[], everything: readonly PriceRecord[], grid: Grid, full: (k: number, own: readonly PriceRecord[]) => unknown): unknown[] {
  return bucketsOf(grid).map((k) => {
    const own = inRange.filter(inBucket(grid, k))
    if (own.length > 0) return full(k, own)
    const empty = { bucket: startOf(grid, k), count: 0 }
    return latestAtOrBefore(everything, endOf(grid, k)) === undefined ? { ...empty, beforeFirst: true } : empty
  })
}

/** The range with `fill=none`: each bucket's latest record and its count, empty buckets explicit. */
export function referenceCountedRange(inRange: readonly PriceRecord[], everything: readonly PriceRecord[], grid: Grid): unknown[] {
  return everyBucket(inRange, everything, grid, (k, own) => ({ bucket: startOf(grid, k), count: own.length, record: withMinutes(own.at(-1)!) }))
}

/** Candles with `fill=none`: each bucket's candle (ties of value to the later record), empty buckets explicit. */
export function referenceCountedCandles(inRange: readonly PriceRecord[], everything: readonly PriceRecord[], grid: Grid): unknown[] {
  return everyBucket(inRange, everything, grid, (k, own) => referenceCandleOf(grid, k, own))
}
