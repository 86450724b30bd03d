/**
 * Key columns read ahead: the quality report parses the key columns of a
 * symbol's hours block by block, and the next blocks are read off the main
 * thread while this one is parsed.
 */
import type { HourKeyColumns } from './chunk-reader.js'

/** Hours whose key columns are read in one round trip: two days of a symbol, about 0.5 MB at one record per 10 s (5 MB at one a second). */
const BLOCK_HOURS = 48
/** Blocks read ahead of the one being parsed: enough that the main thread seldom waits for the disk. */
const READ_AHEAD = 2

/** Reads the key columns of `symbol`'s hours `lo..hi` in one round trip (a view's {@link ChunkReader.keyColumns}). */
export type KeyColumnRead = (symbol: string, lo: number, hi: number) => Promise<HourKeyColumns>

/** The key columns of every symbol's hours `lo..hi`, a block at a time, in order, the next blocks asked for before this one is parsed. */
export class KeyColumnPrefetch {
  readonly #read: KeyColumnRead
  readonly #blocks: { readonly symbol: string; readonly lo: number; readonly hi: number }[] = []
  #next = 0
  readonly #pending: Promise<HourKeyColumns>[] = []

  constructor(read: KeyColumnRead, symbols: readonly string[], lo: number, hi: number) {
    this.#read = read
    for (const symbol of symbols) for (let first = lo; first <= hi; first += BLOCK_HOURS) this.#blocks.push({ symbol, lo: first, hi: Math.min(hi, first + BLOCK_HOURS - 1) })
  }

  /** The next block (blocks are taken in order: each symbol's, ascending, symbol by symbol). */
  take(): Promise<HourKeyColumns> {
    while (this.#pending.length <= READ_AHEAD && this.#next < this.#blocks.length) this.#pending.push(this.#readNext())
    return this.#pending.shift() as Promise<HourKeyColumns>
  }

  /** Waits for the blocks read ahead, if any (their failures are not the reader's: they were not asked for). */
  async settle(): Promise<void> {
    await Promise.all(this.#pending.splice(0).map((read) => read.catch(() => undefined)))
  }

  #readNext(): Promise<HourKeyColumns> {
    const { symbol, lo, hi } = this.#blocks[this.#next++] as { symbol: string; lo: number; hi: number }
    const read = this.#read(symbol, lo, hi)
    // Read ahead, it may never be taken (the report failed or was aborted first): its failure must not go unhandled.
    read.catch(() => undefined)
    return read
  }
}
