/**
 * The index of the first of `values` (ascending) at or above `value`;
 * `values.length` when none is: a binary search.
 */
export function firstAtOrAbove(values: ArrayLike<number>, value: number): number {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((values[mid] as number) < value) lo = mid + 1
    else hi = mid
  }
  return lo
}
