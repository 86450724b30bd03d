import type { PriceRecord, SampledRecord } from '../types.js'
import { refOf } from './kernels/rows.js'
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
  /** Each item's `validUntil` (docs/semantics.md, "Validity windows"), when the query asked for it. */
  readonly #validUntil: readonly (number | null)[] | undefined

  /**
   * @param build turns a chosen row into its answer item (may throw `PRICE_CORRUPT_VALUE`)
   * @param withMinutes whether the items are the range form's (with `minutes`), for rows that write their own JSON
   * @param rowsWriteJson false when `build` changes what a row would write (a `fields` selection)
   * @param validUntil each item's `validUntil`, added (last) to the item once built
   */
  constructor(rows: readonly ScanRow[], build: (row: ScanRow) => DeferredItem, withMinutes: boolean, rowsWriteJson = true, validUntil?: readonly (number | null)[]) {
    this.#rows = rows
    this.#build = build
    this.#withMinutes = withMinutes
    this.#rowsWriteJson = rowsWriteJson
    this.#validUntil = validUntil
  }

  /** The id and timestamp of each chosen row, in the answer's order (read without decoding the records where the rows can). */
  refs(): { readonly timestamp: number; readonly id: string }[] {
    return this.#rows.map(refOf)
  }

  /** The same answer with `validUntil[i]` added to item `i` (after any `fields` selection: a selection never drops it). */
  withValidUntil(validUntil: readonly (number | null)[]): DeferredAnswer {
    return new DeferredAnswer(this.#rows, this.#build, this.#withMinutes, this.#rowsWriteJson, validUntil)
  }

  /**
   * The same rows, each item passed through `select` once decoded (a
   * `fields` selection): its items are always built, never written straight
   * from a row's bytes.
   */
  mapItems(select: (item: DeferredItem) => DeferredItem): DeferredAnswer {
    const build = this.#build
    return new DeferredAnswer(this.#rows, (row) => select(build(row)), this.#withMinutes, false, this.#validUntil)
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
    const item = this.#build(this.#rows[index] as ScanRow)
    return this.#validUntil === undefined ? item : { ...item, validUntil: this.#validUntil[index] as number | null }
  }

  /**
   * The JSON text of the record at `index` when its row can write it
   * without decoding (see `ScanRow.json`); otherwise `undefined`.
   */
  json(index: number): string | undefined {
    if (!this.#rowsWriteJson) return undefined
    const json = (this.#rows[index] as ScanRow).json?.(this.#withMinutes)
    if (json === undefined || this.#validUntil === undefined) return json
    // `validUntil` goes last, as the built item has it; a stored field of that name keeps its place there instead.
    if (json.includes('"validUntil":')) return undefined
    return `${json.slice(0, -1)},"validUntil":${JSON.stringify(this.#validUntil[index] as number | null)}}`
  }

  /** Every record, decoded: the answer `executePlan` gives. */
  toArray(): DeferredItem[] {
    return this.#validUntil === undefined ? this.#rows.map(this.#build) : this.#rows.map((_row, index) => this.item(index))
  }
}
