import type { ScanOptions, ScanRow, ScanSource } from '../../src/engine/scan-source.js'
import type { PriceRecord } from '../../src/types.js'
import { compareRecords, compareUtf8 } from '../../src/testing/reference-model.js'

/**
 * A {@link ScanSource} over a plain array of stored records (returned shape,
 * one per (symbol, timestamp, id)), so the pure engine runs without a
 * database. Rows come in batches of `batchSize` to exercise the engine's
 * batch boundaries.
 */
export class ArraySource implements ScanSource {
  readonly #records: readonly PriceRecord[]
  readonly #batchSize: number
  /** How many rows were decoded through `record()`: lets tests see lazy decoding. */
  decoded = 0

  constructor(records: readonly PriceRecord[], options: { batchSize?: number } = {}) {
    this.#records = [...records].sort(compareRecords)
    this.#batchSize = options.batchSize ?? 16
  }

  async *scan(symbol: string, options: ScanOptions): AsyncIterable<readonly ScanRow[]> {
    let rows = this.#records.filter(
      (r) =>
        r.symbol === symbol &&
        (options.from === undefined || r.timestamp >= options.from) &&
        (options.to === undefined || r.timestamp <= options.to),
    )
    if (options.reverse) rows = rows.reverse()
    if (options.limit !== undefined) rows = rows.slice(0, options.limit)
    for (let i = 0; i < rows.length; i += this.#batchSize) {
      yield rows.slice(i, i + this.#batchSize).map((r) => this.#row(r))
    }
  }

  async symbols(): Promise<readonly string[]> {
    return [...new Set(this.#records.map((r) => r.symbol))].sort(compareUtf8)
  }

  #row(record: PriceRecord): ScanRow {
    return {
      timestamp: record.timestamp,
      // A fresh copy each time, like a decoder, so the engine cannot alias or mutate our data.
      record: () => {
        this.decoded++
        return structuredClone(record)
      },
    }
  }
}
