/** The reference model of the candles form, with and without gap fill. */
import type { PriceRecord } from '../../types.js'
import { bucketsOf, endOf, inBucket, latestAtOrBefore, startOf, type Grid } from './grid.js'

const ref = (r: PriceRecord) => ({ id: r.id, timestamp: r.timestamp, value: r.value })

/** Bucket `k`'s candle from its own records (oldest first): open/high/low/close (ties of value to the later record) and count. */
export function referenceCandleOf(grid: Grid, k: number, own: readonly PriceRecord[]): unknown {
  let high = own[0]!
  let low = own[0]!
  for (const r of own) {
    if (r.value >= high.value) high = r
    if (r.value <= low.value) low = r
  }
  return { bucket: startOf(grid, k), open: ref(own[0]!), high: ref(high), low: ref(low), close: ref(own.at(-1)!), count: own.length }
}

/** Candles: open/high/low/close (ties of value to the later record) and count; flat carried candles with fill. */
export function referenceCandles(inRange: readonly PriceRecord[], everything: readonly PriceRecord[], grid: Grid, fill: boolean, maxAge: number | undefined): unknown[] {
  const candleOf = (k: number, own: readonly PriceRecord[]) => referenceCandleOf(grid, k, own)
  if (!fill) {
    const keys = [...new Set(inRange.map((r) => Math.floor((r.timestamp - grid.origin) / grid.interval)))].sort((a, b) => a - b)
    return keys.map((k) => candleOf(k, inRange.filter(inBucket(grid, k))))
  }
  const out: unknown[] = []
  for (const k of bucketsOf(grid)) {
    const own = inRange.filter(inBucket(grid, k))
    if (own.length > 0) {
      out.push(candleOf(k, own))
      continue
    }
    const carried = latestAtOrBefore(everything, endOf(grid, k))
    if (carried === undefined) continue
    const age = endOf(grid, k) - carried.timestamp
    if (maxAge !== undefined && age > maxAge) continue
    const r = ref(carried)
    out.push({ bucket: startOf(grid, k), open: r, high: r, low: r, close: r, count: 0, carried: true, age })
  }
  return out
}
