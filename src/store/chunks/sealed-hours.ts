/**
 * The chunk room's face to a reader: every read of a sealed hour (one
 * symbol's chunk of one hour) goes through these methods, whichever way the
 * hour is stored: paged or whole, with delta parts or not, described by a
 * heads entry with a page table and delta keys or not. A read view
 * (read/read-view.ts) merges what they give with the open area; the chunk
 * reader (chunk-reader.ts) implements them over one snapshot and the caches.
 */
import type { HeadRows } from '../heads/heads-entry.js'
import type { RowList } from '../rows/row-list.js'
import type { SealedChunk } from './sealed-chunk.js'

/** The heads of a sealed chunk, ascending; `null` when the period has no chunk. */
export type PeriodHeads = HeadRows | null

/** What {@link SealedHours.keyColumns} reads of the hours `lo..`: per hour, its key column and whether it has a delta part. */
export interface HourKeyColumns {
  readonly lo: number
  readonly columns: readonly (Buffer | undefined)[]
  readonly deltas: readonly boolean[]
}

/** The sealed hours of a store as one view reads them. */
export interface SealedHours {
  /** The hour's heads (its ten-minute heads as rows, its record and delta counts, page table and delta keys), or `null` when it has no chunk. */
  heads(symbol: string, period: number): PeriodHeads
  /** The hours in `lo..hi` with a chunk, in order (for walks too long to look each hour up). */
  periods(symbol: string, lo: number, hi: number, reverse: boolean): AsyncIterable<number>
  /**
   * The hour's rows, ascending, searched by timestamp; `small`: only a few
   * will be read (an as-of, latest-N, a range's edge), so read pages by the
   * page table and the newest N with `takeNewest`, and cache what helps.
   */
  chunk(symbol: string, period: number, heads: HeadRows, small: boolean): RowList
  /** The hour's rows for their refs alone (id, timestamp, value): no page read where a key column holds them. */
  refs(symbol: string, period: number, heads: HeadRows): RowList
  /** The keys of the hour's records, as sealing extends the hour (no value beyond a header where it can). */
  keys(symbol: string, period: number, heads: HeadRows): SealedChunk
  /** The hour's rows when it is paged (timestamps from its key column, no page read), else `undefined`. */
  pagedChunk(symbol: string, period: number, deltas: number): RowList | undefined
  /** The key columns of hours `lo..hi` and which have delta parts, in one round trip: columns of timestamps and values. */
  keyColumns(symbol: string, lo: number, hi: number): Promise<HourKeyColumns>
  /** The rows of a paged hour with no delta part from its key column's bytes as {@link SealedHours.keyColumns} read them. */
  keyColumnList(symbol: string, period: number, column: Buffer, pages: boolean): RowList
}
