import type { PriceRecord, SampledRecord } from '../types.js'
import type { ScanRow } from './scan-source.js'

/** An item of a deferred answer: a record of the latest-N form, or of the range form with `minutes`. */
export type DeferredItem = PriceRecord | SampledRecord

/**
 * An array answer whose records are decoded only as they are read. The
 * latest-N and range forms choose their rows without decoding them; a host
 * that serialises the answer piece by piece (the HTTP service streams large
 * answers) then never holds the whole answer decoded, nor its whole JSON.
 * The rows are views of bytes already read, so no snapshot is held open.
 *
 * @example
 * const answer = await executePlanDeferred(plan, source)
 * if (answer instanceof DeferredAnswer) for (let i = 0; i < answer.length; i++) send(answer.item(i))
 */
export class DeferredAnswer {
  readonly #rows: readonly ScanRow[]
  readonly #build: (row: ScanRow) => DeferredItem
  readonly #withMinutes: boolean
  readonly #rowsWriteJson: boolean

  /**
   * @param build turns a chosen row into its answer item (may throw `PRICE_CORRUPT_VALUE`)
   * @param withMinutes whether the items are the range form's (with `minutes`), for rows that write their own JSON
   * @param rowsWriteJson false when `build` changes what a row would write (a `fields` selection)
   */
  constructor(rows: readonly ScanRow[], build: (row: ScanRow) => DeferredItem, withMinutes: boolean, rowsWriteJson = true) {
    this.#rows = rows
    this.#build = build
    this.#withMinutes = withMinutes
    this.#rowsWriteJson = rowsWriteJson
  }

  /**
   * The same rows, each item passed through `select` once decoded (a
   * `fields` selection): its items are always built, never written straight
   * from a row's bytes.
   */
  mapItems(select: (item: DeferredItem) => DeferredItem): DeferredAnswer {
    const build = this.#build
    return new DeferredAnswer(this.#rows, (row) => select(build(row)), this.#withMinutes, false)
  }

  /** How many records the answer holds. */
  get length(): number {
    return this.#rows.length
  }

  /**
   * The record at `index`, decoded now (rows decode once and keep the result).
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` when its stored value does not decode
   */
  item(index: number): DeferredItem {
    return this.#build(this.#rows[index] as ScanRow)
  }

  /**
   * The JSON text of the record at `index` when its row can write it
   * without decoding (see `ScanRow.json`); otherwise `undefined`.
   */
  json(index: number): string | undefined {
    if (!this.#rowsWriteJson) return undefined
    return (this.#rows[index] as ScanRow).json?.(this.#withMinutes)
  }

  /** Every record, decoded: the answer `executePlan` gives. */
  toArray(): DeferredItem[] {
    return this.#rows.map(this.#build)
  }
}
