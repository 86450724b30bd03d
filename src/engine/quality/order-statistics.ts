/**
 * Order statistics of gap lengths without sorting them: a feed of a week at
 * one record per 10 s has 60,000 gaps per symbol, and a report over 100
 * symbols would spend most of its time in sorts.
 */

/**
 * The nearest-rank `p` quantile of `values[0..count)` (the `⌈p·count⌉`-th
 * smallest, 1-based): the lower median for `p = 0.5`. Reorders `values`
 * in place (Hoare's selection, which splits runs of equal values evenly, so
 * a regular feed whose gaps are all equal costs linear time).
 */
export function nearestRank(values: Float64Array, count: number, p: number): number {
  return select(values, count, Math.max(0, Math.ceil(p * count) - 1))
}

/** The `k`-th smallest (0-based) of `values[0..count)`, reordering them. */
function select(values: Float64Array, count: number, k: number): number {
  let lo = 0
  let hi = count - 1
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1] as number
    let i = lo
    let j = hi
    while (i <= j) {
      while ((values[i] as number) < pivot) i++
      while ((values[j] as number) > pivot) j--
      if (i <= j) {
        const swap = values[i] as number
        values[i] = values[j] as number
        values[j] = swap
        i++
        j--
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else break
  }
  return values[k] as number
}

/** The largest of `values[0..count)`, or `-Infinity` for none. */
export function maxOf(values: Float64Array, count: number): number {
  let max = Number.NEGATIVE_INFINITY
  for (let i = 0; i < count; i++) if ((values[i] as number) > max) max = values[i] as number
  return max
}
