import type { Row } from './row.js'

/** Rows of one symbol in one period, ascending, read by position: a chunk builds its rows only when asked. */
export interface RowList {
  readonly length: number
  timestampAt(index: number): number
  rowAt(index: number): Row
  /** Every record's timestamp and value in bulk, where the list keeps them (a sealed chunk): as a sealed chunk keeps them (chunks/sealed-chunk.ts). */
  columns?(): { readonly timestamps: Float64Array; readonly values: Float64Array }
  /** The index of the first row at or after `timestamp`, for a list that finds it faster than by bisecting its timestamps (a page table). */
  seek?(timestamp: number): number
  /**
   * Appends the rows in `from..to`, newest first, to `found` until it holds
   * `limit`, for a list that finds them faster than by position (pages with
   * delta parts beside them); returns `found`.
   */
  takeNewest?(from: number, to: number, limit: number, found: Row[]): Row[]
}

/** A list over rows already built (open rows, or a chunk merged with them). */
export class RowArray implements RowList {
  static readonly EMPTY = new RowArray([])
  readonly #rows: readonly Row[]

  constructor(rows: readonly Row[]) {
    this.#rows = rows
  }

  get length(): number {
    return this.#rows.length
  }

  timestampAt(index: number): number {
    return (this.#rows[index] as Row).timestamp
  }

  rowAt(index: number): Row {
    return this.#rows[index] as Row
  }
}

/** Every row of a list, built. */
export function allRows(list: RowList): Row[] {
  const rows = new Array<Row>(list.length)
  for (let i = 0; i < list.length; i++) rows[i] = list.rowAt(i)
  return rows
}

/** The row of `list` with this timestamp and id, if any. */
export function findRow(list: RowList, timestamp: number, id: string): Row | undefined {
  for (let i = firstAtOrAfter(list, timestamp); i < list.length && list.timestampAt(i) === timestamp; i++) {
    const row = list.rowAt(i)
    if (row.id === id) return row
  }
  return undefined
}

/** The index of the first row at or after `timestamp`. */
export function firstAtOrAfter(list: RowList, timestamp: number): number {
  if (list.seek !== undefined) return list.seek(timestamp)
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (list.timestampAt(mid) < timestamp) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The index of the first row after `timestamp`. */
export function firstAfter(list: RowList, timestamp: number): number {
  return firstAtOrAfter(list, timestamp + 1)
}
