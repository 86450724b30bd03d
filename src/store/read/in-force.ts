/**
 * The store's walk for batch as-of (`ScanSource.inForce`): per symbol, each
 * hour's rows touched are listed once (a sealed chunk's (timestamp, id)
 * column, open rows merged in) and every time falling in that hour is
 * binary-searched in it; only the rows returned are decoded, when asked.
 * A time with nothing on its side in its own hour is answered by one seek
 * over the hours between it and the previous time (or by the previous
 * time's record when they share the hour).
 */
import type { InForceSide, ScanRow, ScanSource } from '../../engine/scan-source.js'
import { firstRow } from '../../engine/kernels/rows.js'
import { PERIOD_MS, periodOf } from '../../keys/key-layout.js'
import type { RowList } from '../rows/row-list.js'
import { firstAfter, firstAtOrAfter } from '../rows/row-list.js'

/** What the walk needs of a view: its seeks, and one hour's rows as a list. */
export interface HourLists extends ScanSource {
  periodList(symbol: string, period: number, install: boolean): RowList
}

/**
 * Up to this many hours touched per symbol, a chunk read is kept in the chunk cache, as an as-of lookup's
 * is; past it the walk reads each chunk once, and installing hundreds of them would only churn the cache
 * (measured: a 100 × 100 batch over 6 hours took about a third longer when it installed its 600 chunks).
 */
const CACHED_HOURS = 4

/**
 * With `nearest` the engine walks a symbol twice (before, then after): the hour lists of the last
 * symbol walked are kept for the second walk, up to this many hours (about 17 MB of chunks of RedStone-sized
 * records; the hours past it are read again).
 */
const KEPT_HOURS = 24

/** The hour lists of the last symbol walked over each view, for the walk of its other side. */
const keptLists = new WeakMap<HourLists, { readonly symbol: string; readonly lists: Map<number, RowList> }>()

/** See {@link HourLists}; `times` ascending and distinct. */
export async function walkInForce(view: HourLists, symbol: string, times: readonly number[], side: InForceSide): Promise<(ScanRow | undefined)[]> {
  const found = new Array<ScanRow | undefined>(times.length)
  let period = Number.NaN
  let list: RowList | undefined
  let carried: ScanRow | undefined
  let hours = 0
  for (let i = 0, last = Number.NaN; i < times.length && hours <= CACHED_HOURS; i++) {
    const p = periodOf(times[i] as number)
    if (p !== last) hours++
    last = p
  }
  const install = hours <= CACHED_HOURS
  let kept = keptLists.get(view)
  if (kept?.symbol !== symbol) {
    kept = { symbol, lists: new Map() }
    keptLists.set(view, kept)
  }
  const { lists } = kept
  const listOf = (p: number): RowList => {
    if (p !== period || list === undefined) {
      period = p
      list = lists.get(p)
      if (list === undefined) {
        list = view.periodList(symbol, p, install)
        if (lists.size < KEPT_HOURS) lists.set(p, list)
      }
    }
    return list
  }
  if (side === 'before') {
    for (let i = 0; i < times.length; i++) {
      const t = times[i] as number
      const p = periodOf(t)
      const rows = listOf(p)
      const index = firstAfter(rows, t) - 1
      if (index >= 0) carried = rows.rowAt(index)
      else {
        const previous = i === 0 ? -1 : (times[i - 1] as number)
        // Nothing of this hour up to t: the record in force is older than the hour, and newer than `previous`'s only if between.
        if (previous < 0 || periodOf(previous) !== p) {
          const start = p * PERIOD_MS
          if (start > previous + 1) carried = (await firstRow(view, symbol, { from: previous + 1, to: start - 1, reverse: true, limit: 1 })) ?? carried
        }
      }
      found[i] = carried
    }
  } else {
    for (let i = times.length - 1; i >= 0; i--) {
      const t = times[i] as number
      const p = periodOf(t)
      const rows = listOf(p)
      const index = firstAtOrAfter(rows, t)
      if (index < rows.length) carried = rows.rowAt(index)
      else {
        const next = i === times.length - 1 ? undefined : (times[i + 1] as number)
        if (next === undefined || periodOf(next) !== p) {
          const end = (p + 1) * PERIOD_MS - 1
          const to = next === undefined ? Number.MAX_SAFE_INTEGER : next - 1
          if (to > end) carried = (await firstRow(view, symbol, { from: end + 1, to, reverse: false, limit: 1 })) ?? carried
        }
      }
      found[i] = carried
    }
  }
  return found
}
