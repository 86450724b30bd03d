import type { BucketGrid, Candle, RecordRef } from '../../types.js'
import { bucketAge } from './gap-fill.js'
import { bucketOf, bucketStart, type GridLines } from '../grid.js'
import type { ScanRow } from '../scan-source.js'
import { refOf } from './rows.js'

/** One bucket's candle while it is being built. */
interface OpenCandle {
  bucket: number
  open: RecordRef
  high: RecordRef
  low: RecordRef
  close: RecordRef
  closeRow: ScanRow
  count: number
}

/**
 * Builds candles from rows pushed in ascending (timestamp, id) order: per
 * bucket the first and last record, the greatest and least value (equal
 * values go to the later record, as "latest" does everywhere), and the
 * count. `emit` gets each bucket's candle and closing row once the next
 * bucket starts (or on `flush`), and returns false to stop.
 */
export class CandleBuilder {
  readonly #grid: GridLines
  readonly #emit: (bucket: number, candle: Candle, close: ScanRow) => boolean
  #current: OpenCandle | undefined
  #stopped = false

  constructor(grid: GridLines, emit: (bucket: number, candle: Candle, close: ScanRow) => boolean) {
    this.#grid = grid
    this.#emit = emit
  }

  /** Takes the next row; false once stopped. */
  push(row: ScanRow): boolean {
    if (this.#stopped) return false
    const bucket = bucketOf(this.#grid, row.timestamp)
    const current = this.#current
    const ref = refOf(row)
    if (current !== undefined && current.bucket === bucket) {
      if (ref.value >= current.high.value) current.high = ref
      if (ref.value <= current.low.value) current.low = ref
      current.close = ref
      current.closeRow = row
      current.count++
      return true
    }
    if (current !== undefined && !this.#send(current)) return false
    this.#current = { bucket, open: ref, high: ref, low: ref, close: ref, closeRow: row, count: 1 }
    return true
  }

  /** Emits the last bucket's candle, unless stopped. */
  flush(): void {
    if (!this.#stopped && this.#current !== undefined) this.#send(this.#current)
    this.#current = undefined
  }

  #send(open: OpenCandle): boolean {
    const { bucket, open: first, high, low, close, count } = open
    const candle: Candle = { bucket: bucketStart(this.#grid, bucket), open: first, high, low, close, count }
    if (!this.#emit(bucket, candle, open.closeRow)) this.#stopped = true
    return !this.#stopped
  }
}

/** The flat candle of a bucket that carries `row` from before it (gap fill). */
export function carriedCandle(grid: BucketGrid, index: number, row: ScanRow): Candle {
  const ref = refOf(row)
  const { bucket, age } = bucketAge(grid, index, ref.timestamp)
  return { bucket, open: ref, high: ref, low: ref, close: ref, count: 0, carried: true, age }
}
