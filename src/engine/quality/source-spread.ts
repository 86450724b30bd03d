/**
 * How many sources each record had and how far they spread around its
 * value. RedStone's `source` maps each exchange to the price it gave; a
 * failed fetch leaves a string (`"error"`), which is not a source here.
 */
import type { QualitySeries } from './series.js'
import { MAX_LISTED_SINGLE, type QualityRecord, type SourceSummary } from './quality-types.js'

/** The source summary of a series (`series.sourceAt` must be given). */
export function sourceSummary(series: QualitySeries): SourceSummary {
  const { timestamps, values, length } = series
  const sourceAt = series.sourceAt
  if (sourceAt === undefined || values === undefined) throw new Error('the series has no sources or no values')
  const counts = new Map<number, number>()
  const singles: QualityRecord[] = []
  let singleSource = 0
  let widest: { index: number; min: number; max: number; spread: number } | undefined
  for (let i = 0; i < length; i++) {
    const { count, min, max } = numericSources(sourceAt.call(series, i))
    counts.set(count, (counts.get(count) ?? 0) + 1)
    if (count === 1) {
      singleSource++
      if (singles.length < MAX_LISTED_SINGLE) singles.push({ id: series.idAt(i), timestamp: timestamps[i] as number })
    }
    const value = values[i] as number
    if (count === 0 || value === 0) continue
    const spread = (max - min) / Math.abs(value)
    if (widest === undefined || spread > widest.spread) widest = { index: i, min, max, spread }
  }
  const byCount: Record<string, number> = {}
  for (const count of [...counts.keys()].sort((a, b) => a - b)) byCount[count] = counts.get(count) as number
  return {
    counts: byCount,
    singleSource,
    singleSourceRecords: singles,
    widest:
      widest === undefined
        ? null
        : { id: series.idAt(widest.index), timestamp: timestamps[widest.index] as number, value: values[widest.index] as number, min: widest.min, max: widest.max, spread: widest.spread },
  }
}

/** The finite numbers among a `source` object's own values, counted, with their least and greatest. */
export function numericSources(source: unknown): { count: number; min: number; max: number } {
  let count = 0
  let min = Number.POSITIVE_INFINITY
  let max = Number.NEGATIVE_INFINITY
  if (typeof source === 'object' && source !== null && !Array.isArray(source)) {
    for (const value of Object.values(source)) {
      if (typeof value !== 'number' || !Number.isFinite(value)) continue
      count++
      if (value < min) min = value
      if (value > max) max = value
    }
  }
  return { count, min, max }
}
