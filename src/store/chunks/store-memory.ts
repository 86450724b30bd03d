/**
 * The writers' port onto what a store keeps in memory for reading: the
 * commit step, the sealer and the pruner change sealed data and the open
 * area, and tell the read side through these methods (read/read-state.ts
 * implements them, and states the rule they keep). They read the hours they
 * rewrite through {@link HourView}, which a read view implements, so no
 * writer depends on the read room.
 */
import type { ScanOptions } from '../../engine/scan-source.js'
import type { HeadRows } from '../heads/heads-entry.js'
import type { OpenArea, OpenWrite } from '../rows/open-area.js'
import type { Row } from '../rows/row.js'
import type { SealedChunk } from './sealed-chunk.js'

/** A chunk a prune step deletes or rewrites: the records of `symbol` in `period` with `from <= timestamp < to` go. */
export interface PrunedChunk {
  readonly symbol: string
  readonly period: number
  readonly from: number
  readonly to: number
}

/** What a writer reads of the hours it seals or prunes: one consistent capture of sealed data and the open area. */
export interface HourView {
  /** The open area captured with the view's snapshot. */
  readonly openArea: OpenArea
  /** The sealed part of `symbol`'s `period` as sealing extends it (its heads entry, its records' keys), or `undefined` when it has none. */
  sealedPeriod(symbol: string, period: number): { readonly heads: HeadRows; readonly keys: SealedChunk } | undefined
  /** Every row of `symbol` in `period`, ascending, sealed and open merged. */
  periodRows(symbol: string, period: number): readonly Row[]
  /** The hours in `lo..hi` holding records of `symbol` (sealed or open), ascending. */
  hoursOf(symbol: string, lo: number, hi: number): AsyncGenerator<number>
  /** The rows of `symbol` in a window, a batch per hour, in order. */
  scan(symbol: string, options: ScanOptions): AsyncGenerator<readonly Row[]>
  /** Releases the view's snapshot. */
  close(): Promise<void>
}

/** The read side's memory, as the writers change it: each `apply*` call follows the commit it mirrors. */
export interface StoreMemory {
  /** The open area as of the last commit. */
  readonly open: OpenArea
  /** Every symbol with a record, as of the last commit. */
  readonly symbols: readonly string[]
  /** Whether `symbol` has a record, as of the last commit. */
  has(symbol: string): boolean
  /** A consistent view of sealed data and the open area. */
  view(): HourView
  /** Takes in a committed batch: its open rows, its rows by symbol, the symbols it introduced. */
  applyBatch(writes: readonly OpenWrite[], rowsBySymbol: ReadonlyMap<string, readonly Row[]>, newSymbols: ReadonlySet<string>): void
  /** A seal is about to go to the database. */
  beginSeal(): void
  /** Takes in a committed seal step: the new chunks' heads, by hour, then symbol. */
  applySealStep(heads: ReadonlyMap<number, ReadonlyMap<string, HeadRows>>): void
  /** Takes in the committed end of a seal: per period, how many of its log entries (oldest first) it deleted. */
  applySealEnd(sealed: ReadonlyMap<number, number>): void
  /** A prune step is about to go to the database, deleting or rewriting these chunks. */
  beginPrune(chunks: readonly PrunedChunk[]): void
  /** Takes in a committed prune step, and the symbols it left without records. */
  applyPrune(chunks: readonly PrunedChunk[], emptied: readonly string[]): void
  /** After a write whose outcome is unknown: memory of sealed data may no longer match the disk. */
  writeFailed(): void
}
