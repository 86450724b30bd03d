/**
 * A symbol's records as the quality kernel reads them: columns of
 * timestamps and values, ids and sources read on demand, and the gaps
 * between them.
 */
import { maxOf, nearestRank } from './order-statistics.js'

/** One symbol's records in `from..to`, ascending by (timestamp, id), as columns. */
export interface QualitySeries {
  readonly length: number
  /** Each record's timestamp, ascending. */
  readonly timestamps: ArrayLike<number>
  /** Each record's value; `undefined` when the values were not read (no moves then). */
  readonly values: ArrayLike<number> | undefined
  /** The id of record `index` (read only for the records a report names). */
  idAt(index: number): string
  /** The `source` of record `index`: needed only when the query asks for sources. */
  readonly sourceAt?: ((index: number) => unknown) | undefined
}

/** The gaps of a series: their lengths and the index of the record ending each, in time order. */
export interface SeriesGaps {
  readonly count: number
  readonly lengths: Float64Array
  readonly ends: Int32Array
}

/** The gaps between consecutive distinct timestamps. */
export function gapsOf(series: QualitySeries): SeriesGaps {
  const { timestamps, length } = series
  const lengths = new Float64Array(Math.max(0, length - 1))
  const ends = new Int32Array(lengths.length)
  let count = 0
  for (let i = 1; i < length; i++) {
    const step = (timestamps[i] as number) - (timestamps[i - 1] as number)
    if (step === 0) continue
    lengths[count] = step
    ends[count++] = i
  }
  return { count, lengths, ends }
}

/** Median, p99 and max of `lengths[0..count)` (reorders a copy). */
export function gapStatistics(lengths: Float64Array, count: number): { median: number | null; p99: number | null; max: number | null } {
  if (count === 0) return { median: null, p99: null, max: null }
  const copy = lengths.slice(0, count)
  return { median: nearestRank(copy, count, 0.5), p99: nearestRank(copy, count, 0.99), max: maxOf(copy, count) }
}

