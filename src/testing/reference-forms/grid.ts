/**
 * The reference model's forms live in this folder, one file per form, each
 * computed by its definition over plain arrays (filter, sort, visit every
 * bucket); reference-model.ts parses the query and picks one. Part of the
 * model, so they share no code with src/engine or src/store either.
 *
 * This file: the bucket grid by its definition, for the range and candles
 * models. Bucket k starts at `origin + k·interval`; only `[from, to]` counts.
 */
import type { PriceRecord } from '../../types.js'

/** More buckets than the model enumerates one by one (a query that wide is checked by the unit tests). */
export class ModelTooBig extends Error {}
const MODEL_BUCKETS = 200_000

/** A bucket grid: buckets start at `origin + k·interval`; only `[from, to]` counts. */
export interface Grid {
  readonly from: number
  readonly to: number
  readonly interval: number
  readonly origin: number
}

/** Every bucket index of the grid's range, oldest first. */
export function bucketsOf(grid: Grid): number[] {
  const first = Math.floor((grid.from - grid.origin) / grid.interval)
  const last = Math.floor((grid.to - grid.origin) / grid.interval)
  if (last - first + 1 > MODEL_BUCKETS) throw new ModelTooBig()
  return Array.from({ length: last - first + 1 }, (_, i) => first + i)
}

/** The first millisecond of bucket `k`. */
export const startOf = (grid: Grid, k: number) => grid.origin + k * grid.interval
/** The last millisecond of bucket `k` inside `[from, to]`. */
export const endOf = (grid: Grid, k: number) => Math.min(grid.to, grid.origin + (k + 1) * grid.interval - 1)
/** Whether a record lies in bucket `k`. */
export const inBucket = (grid: Grid, k: number) => (r: PriceRecord) => Math.floor((r.timestamp - grid.origin) / grid.interval) === k
/** The latest record of `sorted` (ascending) at or before `t`: the record in force at `t`. */
export const latestAtOrBefore = (sorted: readonly PriceRecord[], t: number) => sorted.filter((r) => r.timestamp <= t).at(-1)
