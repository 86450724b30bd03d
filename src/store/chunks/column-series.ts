/**
 * A quality series (engine/quality/series.ts) filled from stored rows: the
 * lists of sealed and open hours, or a paged key column's bytes parsed in
 * one pass, each record remembered by its list and place in it so that its
 * id (and source) is read only when the report names it.
 */
import type { QualitySeries } from '../../engine/quality/series.js'
import { readKeyColumnSeries, type KeptRecords, type SeriesSink } from '../../keys/key-column-series.js'
import { PERIOD_MS } from '../../keys/key-layout.js'
import { peekValue } from '../../keys/value-codec.js'
import type { Row } from '../rows/row.js'
import type { RowList } from '../rows/row-list.js'

/** A growing {@link QualitySeries} over lists of stored rows, each record remembered by its list and place in it. */
export class SegmentSeries implements QualitySeries, SeriesSink {
  length = 0
  timestamps: Float64Array = new Float64Array(1024)
  values: Float64Array | undefined
  readonly sourceAt: ((index: number) => unknown) | undefined
  readonly #lists: { rowAt(index: number): Row }[] = []
  readonly #kept: KeptRecords = { first: 0, end: 0 }
  #listOf: Int32Array = new Int32Array(1024)
  #placeIn: Int32Array = new Int32Array(1024)

  constructor(values: boolean, sources: boolean) {
    this.values = values ? new Float64Array(1024) : undefined
    // `decode`, not `record`: the rows may be shared with the open area and caches, which must not grow by these.
    this.sourceAt = sources ? (index) => this.#row(index).decode().source : undefined
  }

  /** Empties the series (keeping its arrays) for the next symbol. */
  reset(): void {
    this.length = 0
    this.#lists.length = 0
  }

  /** Makes room for `more` records after `length` (see {@link SeriesSink}). */
  reserve(more: number): void {
    while (this.length + more > this.timestamps.length) this.#grow()
  }

  /**
   * Appends the records of a sealed hour inside `from..to` straight from its
   * paged key column `bytes` (the hour has no delta part and no open row:
   * the caller knows). Their ids are read later,
   * from `list()` (the list the hour is otherwise read as), for the few
   * records the report names. False, with nothing appended, when the hour
   * column is not a sound paged key column (or a value header is damaged): push its list then.
   */
  pushKeyColumn(bytes: Buffer, period: number, from: number, to: number, list: () => RowList): boolean {
    const start = this.length
    if (!readKeyColumnSeries(bytes, period * PERIOD_MS, from, to, this, this.#kept)) return false
    if (this.length === start) return true
    const listNumber = this.#lists.push(new LazyList(list)) - 1
    const placeIn = this.#placeIn
    this.#listOf.fill(listNumber, start, this.length)
    for (let at = start, place = this.#kept.first; at < this.length; at++, place++) placeIn[at] = place
    return true
  }

  /** Appends the rows `lo..hi-1` of `list`. */
  push(list: RowList, lo: number, hi: number): void {
    if (hi <= lo) return
    while (this.length + hi - lo > this.timestamps.length) this.#grow()
    const listNumber = this.#lists.push(list) - 1
    const { timestamps, values } = this
    const listOf = this.#listOf
    const placeIn = this.#placeIn
    const columns = list.columns?.()
    if (columns !== undefined) {
      // A sealed chunk keeps its timestamps and values in arrays: copied in bulk, no row built.
      const start = this.length
      timestamps.set(columns.timestamps.subarray(lo, hi), start)
      if (values !== undefined) values.set(columns.values.subarray(lo, hi), start)
      listOf.fill(listNumber, start, start + hi - lo)
      for (let i = lo, at = start; i < hi; i++, at++) {
        placeIn[at] = i
        // A damaged header (NaN) is decoded in full, which fails with the store's own corruption error.
        if (values !== undefined && Number.isNaN(values[at])) values[at] = list.rowAt(i).record().value
      }
      this.length = start + hi - lo
      return
    }
    let at = this.length
    for (let i = lo; i < hi; i++, at++) {
      timestamps[at] = list.timestampAt(i)
      listOf[at] = listNumber
      placeIn[at] = i
      if (values === undefined) continue
      const row = list.rowAt(i)
      const bytes = row.value
      // A damaged header is decoded in full, which fails with the store's own corruption error.
      values[at] = peekValue(bytes, 0, bytes.length) ?? row.record().value
    }
    this.length = at
  }

  idAt(index: number): string {
    return this.#row(index).id
  }

  #row(index: number): Row {
    return (this.#lists[this.#listOf[index] as number] as { rowAt(index: number): Row }).rowAt(this.#placeIn[index] as number)
  }

  #grow(): void {
    const size = this.timestamps.length * 2
    this.timestamps = grown(this.timestamps, size)
    if (this.values !== undefined) this.values = grown(this.values, size)
    this.#listOf = grown(this.#listOf, size)
    this.#placeIn = grown(this.#placeIn, size)
  }
}

/** An hour's list read only when one of its records is asked for (most hours never are). */
class LazyList {
  readonly #read: () => RowList
  #list: RowList | undefined

  constructor(read: () => RowList) {
    this.#read = read
  }

  rowAt(index: number): Row {
    this.#list ??= this.#read()
    return this.#list.rowAt(index)
  }
}

function grown<T extends Float64Array | Int32Array>(array: T, size: number): T {
  const bigger = new (array.constructor as new (size: number) => T)(size)
  bigger.set(array)
  return bigger
}
