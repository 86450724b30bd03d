/** The reference model of the directed and bounded as-of lookups (of the latest and several forms). */
import type { PriceRecord } from '../../types.js'

/** The as-of lookup with a direction and tolerance over one symbol's records, sorted. */
export function referenceAsOf(sorted: readonly PriceRecord[], t: number, direction: string, tolerance: number | undefined): PriceRecord | undefined {
  const near = (r: PriceRecord) => tolerance === undefined || Math.abs(r.timestamp - t) <= tolerance
  const before = sorted.filter((r) => r.timestamp <= t && near(r)).at(-1)
  const after = sorted.find((r) => r.timestamp >= t && near(r))
  if (direction === 'before') return before
  if (direction === 'after') return after
  if (before === undefined || after === undefined) return before ?? after
  return t - before.timestamp <= after.timestamp - t ? before : after
}
