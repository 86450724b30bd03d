/**
 * The feed-quality kernel: one symbol's report from its records in
 * (timestamp, id) order, given as columns (timestamps and values) with ids
 * and sources read only for the records the report names. Pure: it knows
 * no store; the store fills the columns from what it can read cheaply.
 */
import { bucketQualities } from './bucket-quality.js'
import { MovesBuilder } from './moves.js'
import { sourceSummary } from './source-spread.js'
import { gapStatistics, gapsOf, type QualitySeries, type SeriesGaps } from './series.js'
import {
  DEFAULT_GAP_FACTOR, MAX_LISTED_DUPLICATES, MAX_LISTED_GAPS,
  type DuplicateSummary, type GapSummary, type QualityGap, type QualityQuery, type SymbolQuality,
} from './quality-types.js'

/**
 * The report of one symbol (see {@link SymbolQuality}). `query.grid` adds
 * the buckets, `query.sources` the source summary (`series.sourceAt` is
 * then required).
 */
export function symbolQuality(symbol: string, series: QualitySeries, query: QualityQuery): SymbolQuality {
  const n = series.length
  const { timestamps } = series
  const last = n === 0 ? null : (timestamps[n - 1] as number)
  const gaps = gapsOf(series)
  const summary = gapSummary(gaps, timestamps, query.gapThreshold)
  const moves = series.values === undefined ? undefined : new MovesBuilder(series, series.values)
  moves?.addAll(n)
  return {
    symbol,
    records: n,
    firstTimestamp: n === 0 ? null : (timestamps[0] as number),
    lastTimestamp: last,
    age: last === null ? null : query.now - last,
    gaps: summary,
    moves: moves?.summary() ?? null,
    duplicates: duplicateSummary(series),
    ...(query.grid === undefined ? {} : { buckets: bucketQualities(series, gaps, summary.threshold, query.grid) }),
    ...(query.sources ? { sources: sourceSummary(series) } : {}),
  }
}

function gapSummary(gaps: SeriesGaps, timestamps: ArrayLike<number>, asked: number | undefined): GapSummary {
  const { median, p99, max } = gapStatistics(gaps.lengths, gaps.count)
  const threshold = asked ?? (median === null ? null : DEFAULT_GAP_FACTOR * median)
  const list: QualityGap[] = []
  let over = 0
  if (threshold !== null) {
    for (let g = 0; g < gaps.count; g++) {
      const length = gaps.lengths[g] as number
      if (length <= threshold) continue
      over++
      if (list.length < MAX_LISTED_GAPS) {
        const end = timestamps[gaps.ends[g] as number] as number
        list.push({ start: end - length, end, length })
      }
    }
  }
  return { count: gaps.count, median, p99, max, threshold, over, list, truncated: over > list.length }
}

function duplicateSummary(series: QualitySeries): DuplicateSummary {
  const { timestamps, length } = series
  const list: { timestamp: number; ids: string[] }[] = []
  let records = 0
  let held = 0
  // The group of the timestamp being walked; `ids` only while it is listed (ids are read only for what is listed).
  let group: { timestamp: number; ids: string[] | undefined } | undefined
  for (let i = 1; i < length; i++) {
    const timestamp = timestamps[i] as number
    if (timestamp !== timestamps[i - 1]) continue
    records++
    if (group?.timestamp === timestamp) {
      group.ids?.push(series.idAt(i))
      continue
    }
    held++
    const listed = list.length < MAX_LISTED_DUPLICATES
    group = { timestamp, ids: listed ? [series.idAt(i - 1), series.idAt(i)] : undefined }
    if (group.ids !== undefined) list.push({ timestamp, ids: group.ids })
  }
  return { records, timestamps: held, list, truncated: held > list.length }
}
