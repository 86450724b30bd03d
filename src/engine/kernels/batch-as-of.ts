/**
 * The kernel of batch as-of: per symbol, one walk over the
 * sorted times finding the record in force on each side, then the as-of
 * rules of the several form (direction, tolerance, nearest's tie to the
 * record before) applied to each time, so a batch answers exactly what its
 * single lookups answer.
 */
import type { AsOfDirection } from '../../types.js'
import type { InForceSide, ScanRow, ScanSource } from '../scan-source.js'
import { nearer } from './lookup.js'
import { firstRow } from './rows.js'

/** Per time (in the order given), the row found, or `undefined`. */
export type InForceRows = readonly (ScanRow | undefined)[]

/**
 * For each of `times` (ascending, distinct), the newest row of `symbol` at
 * or before it (`before`) or the oldest at or after it (`after`): the
 * source's own walk when it has one, else {@link seekInForce}.
 */
export function inForceRows(source: ScanSource, symbol: string, times: readonly number[], side: InForceSide): Promise<InForceRows> | InForceRows {
  return source.inForce?.(symbol, times, side) ?? seekInForce(source, symbol, times, side)
}

/**
 * {@link inForceRows} over any source: one seek per time, each bounded by
 * the time before it (the record in force at the earlier time is carried
 * when the seek finds none in between), so the walk reads each row at most
 * once and never reads back over what it passed.
 */
export async function seekInForce(source: ScanSource, symbol: string, times: readonly number[], side: InForceSide): Promise<InForceRows> {
  const found = new Array<ScanRow | undefined>(times.length)
  let carried: ScanRow | undefined
  if (side === 'before') {
    for (let i = 0; i < times.length; i++) {
      const from = i === 0 ? 0 : (times[i - 1] as number) + 1
      carried = (await firstRow(source, symbol, { from, to: times[i] as number, reverse: true, limit: 1 })) ?? carried
      found[i] = carried
    }
  } else {
    for (let i = times.length - 1; i >= 0; i--) {
      const to = i === times.length - 1 ? Number.MAX_SAFE_INTEGER : (times[i + 1] as number) - 1
      carried = (await firstRow(source, symbol, { from: times[i] as number, to, reverse: false, limit: 1 })) ?? carried
      found[i] = carried
    }
  }
  return found
}

/**
 * The record an as-of lookup at `time` picks from the record in force
 * before and after it: those outside `tolerance` are dropped, then the
 * direction chooses (`nearest`: the nearer, a tie to the one before, the
 * several form's own rule).
 */
export function chooseInForce(time: number, before: ScanRow | undefined, after: ScanRow | undefined, direction: AsOfDirection, tolerance: number | undefined): ScanRow | undefined {
  const near = tolerance === undefined
  const b = before !== undefined && (near || time - before.timestamp <= tolerance) ? before : undefined
  if (direction === 'before') return b
  const a = after !== undefined && (near || after.timestamp - time <= tolerance) ? after : undefined
  return direction === 'after' ? a : nearer({ to: time }, b, a)
}

/** The rows an as-of lookup picks at each of `times` (ascending, distinct) for one symbol: one walk per side needed. */
export async function batchRowsOf(
  source: ScanSource, symbol: string, times: readonly number[], direction: AsOfDirection, tolerance: number | undefined,
): Promise<InForceRows> {
  const before = direction === 'after' ? undefined : await inForceRows(source, symbol, times, 'before')
  const after = direction === 'before' ? undefined : await inForceRows(source, symbol, times, 'after')
  const chosen = new Array<ScanRow | undefined>(times.length)
  for (let i = 0; i < times.length; i++) chosen[i] = chooseInForce(times[i] as number, before?.[i], after?.[i], direction, tolerance)
  return chosen
}
