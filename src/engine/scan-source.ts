import type { BucketGrid, PriceRecord, RecordRef, SampledRecord } from '../types.js'
import type { QualitySeries } from './quality/series.js'

/**
 * One stored record as a scan yields it. The timestamp is known without
 * decoding; `record()` decodes on demand, so sampling decodes only the rows
 * it returns.
 */
export interface ScanRow {
  readonly timestamp: number
  /** The full record, `providerPublicKey` joined. May throw `PRICE_CORRUPT_VALUE`. */
  record(): PriceRecord
  /**
   * Optional: the record with `minutes`, as the range form returns it, built
   * in one step (otherwise the engine copies `record()` to add `minutes`).
   */
  sampled?(): SampledRecord
  /**
   * Optional: the record's id, timestamp and value without decoding the
   * rest (candles and TWAP read the value of every row). May throw
   * `PRICE_CORRUPT_VALUE`.
   */
  ref?(): RecordRef
  /**
   * Optional: the record's JSON text exactly as the answers write it
   * (`toExactJson` of `record()`, or of `sampled()` when `withMinutes`),
   * built without decoding the record when the source can. May throw
   * `PRICE_CORRUPT_VALUE`.
   */
  json?(withMinutes: boolean): string
}

/** Bounds of a scan over one symbol's records; both ends inclusive, each optional. */
export interface ScanOptions {
  readonly from?: number
  readonly to?: number
  /** Newest first when true; otherwise oldest first. */
  readonly reverse: boolean
  /** Stop after this many rows. */
  readonly limit?: number
  /**
   * The reader calls only `ref()` (and reads `timestamp`) of each row, as
   * candles and TWAP do: a source may then yield rows that hold no more
   * (a store's key-column rows, read without their bodies' pages), whose
   * `record()` it need not be able to build.
   */
  readonly refs?: boolean
}

/**
 * The port the engine reads through. A store implements it over key ranges;
 * tests implement it over an array. Rows come in (timestamp, id) order,
 * ascending or descending, where ids compare by UTF-8 bytes. One source must
 * present a single consistent view of the data for as long as it is used.
 */
export interface ScanSource {
  /** The rows of `symbol` inside the bounds, in batches, in order. */
  scan(symbol: string, options: ScanOptions): AsyncIterable<readonly ScanRow[]>
  /**
   * Optional: the same rows as `scan`, at once, for sources that can read
   * them synchronously; `undefined` when this scan cannot be (the engine
   * then calls `scan`). The engine then answers without a single await per symbol.
   */
  scanNow?(symbol: string, options: ScanOptions): readonly ScanRow[] | undefined
  /** Every symbol that has at least one record, in UTF-8 byte order. */
  symbols(): Promise<readonly string[]>
  /**
   * Optional shortcut for bucket sampling: rows of `symbol` inside
   * `from..to`, ascending, such that the last row yielded in each
   * bucket of the range's grid is that bucket's latest record. A source
   * with an index of bucket heads yields far fewer rows than `scan`. The
   * rows come at once (an array) or in batches. Returns `undefined` when it
   * cannot serve this grid; the engine then scans.
   */
  bucketHeads?(symbol: string, range: SampleRange): AsyncIterable<readonly ScanRow[]> | readonly ScanRow[] | undefined
  /**
   * Optional shortcut for batch as-of: for each of `times` (ascending,
   * distinct), the newest row of `symbol` at or before it (`side` `before`)
   * or the oldest at or after it (`after`), `undefined` where none; one walk
   * over the symbol's rows instead of a seek per time. The engine falls back
   * to `scan`/`scanNow` seeks without it (kernels/batch-as-of.ts).
   */
  inForce?(symbol: string, times: readonly number[], side: InForceSide): Promise<readonly (ScanRow | undefined)[]> | readonly (ScanRow | undefined)[]
  /**
   * Optional shortcut for the quality report: each of `symbols`' records in
   * the window as columns, one series a symbol, in the order asked. A source
   * that keeps timestamps and values in columns fills them without building
   * rows. A series may be reused for the next symbol: read it before asking
   * for the next. The engine scans without it (quality/scan-series.ts).
   */
  series?(symbols: readonly string[], window: SeriesWindow): AsyncIterable<QualitySeries>
}

/** What {@link ScanSource.series} reads: `from..to` (inclusive), with each record's value and its `source` or without. */
export interface SeriesWindow {
  readonly from: number
  readonly to: number
  /** Read values (otherwise the series' `values` is `undefined`). */
  readonly values: boolean
  /** Each record's `source` is read too (`sourceAt`); needs `values`. */
  readonly sources: boolean
  readonly signal?: AbortSignal | undefined
}

/** Which record in force {@link ScanSource.inForce} finds: at or before each time, or at or after it. */
export type InForceSide = 'before' | 'after'

/**
 * A range to sample: the bucket grid of a range (both ends inclusive;
 * buckets start at `origin`, which is 0 for the epoch and always below the
 * bucket width). Bucket math on it lives in grid.ts.
 */
export type SampleRange = BucketGrid
