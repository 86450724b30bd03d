/**
 * The parts a sealed hour holds on disk, listed by their keys (no value
 * read), and the deletion of those a rewrite leaves behind: what pruning
 * needs of the chunks' key space.
 */
import { readPartRecordCount } from '../../keys/chunk-codec.js'
import { KEYS_PART, chunkKey, chunkPeriodStart, readChunkKey, readChunkPeriod } from '../../keys/key-layout.js'
import type { RootBatch } from '../db/root-batch.js'
import type { BytesSublevel } from '../db/sublevels.js'

/** The first hour found by {@link ChunkParts.firstHour}: its symbols' parts, in key order. */
export interface HourParts {
  readonly period: number
  readonly parts: Map<string, number[]>
  /** The listing hit its limit inside this hour: the last symbol's parts may be cut short. */
  readonly cut: boolean
  /** The last symbol listed. */
  readonly last: string
}

/** Lists the parts of sealed hours by key. */
export class ChunkParts {
  readonly #chunks: BytesSublevel

  constructor(chunks: BytesSublevel) {
    this.#chunks = chunks
  }

  /**
   * The parts of the first hour with chunks after `cursor` (see
   * {@link cursorAfter}) and before hour `end`, from at most `limit` keys;
   * `undefined` when there is none.
   */
  async firstHour(cursor: Uint8Array | undefined, end: number, limit: number): Promise<HourParts | undefined> {
    const range = { ...(cursor === undefined ? {} : { gt: cursor }), lt: chunkPeriodStart(end) }
    const keys = await this.#chunks.keys({ ...range, limit }).all()
    if (keys.length === 0) return undefined
    const parsed = keys.map(readChunkKey)
    const period = (parsed[0] as { period: number }).period
    const parts = new Map<string, number[]>()
    for (const key of parsed) {
      if (key.period !== period) break
      let list = parts.get(key.symbol)
      if (list === undefined) parts.set(key.symbol, (list = []))
      list.push(key.part)
    }
    const { symbol: last, period: lastPeriod } = parsed[parsed.length - 1] as { symbol: string; period: number }
    return { period, parts, cut: keys.length === limit && lastPeriod === period, last }
  }

  /** The first and last hour holding a chunk; `first > last` when there is none. */
  async sealedHours(): Promise<{ readonly first: number; readonly last: number }> {
    const [first] = await this.#chunks.keys({ limit: 1 }).all()
    const [last] = await this.#chunks.keys({ limit: 1, reverse: true }).all()
    if (first === undefined || last === undefined) return { first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY }
    return { first: readChunkPeriod(first), last: readChunkPeriod(last) }
  }

  /** The parts of `symbol`'s chunk in `period`. */
  async of(period: number, symbol: string): Promise<number[]> {
    const keys = await this.#chunks.keys({ gte: chunkKey(period, symbol, 0), lte: chunkKey(period, symbol, 0xffff) }).all()
    return keys.map((key) => readChunkKey(key).part)
  }
}

/** A listing cursor past every part of `symbol`'s chunk in `period`. */
export function cursorAfter(period: number, symbol: string): Buffer {
  return chunkKey(period, symbol, 0xffff)
}

/**
 * Deletes the parts of a chunk (`held`) that a rewrite in `written` base
 * parts leaves behind (all of them when `written` is 0); the rewrite itself
 * wrote or deleted the key column.
 */
export function deleteLeftParts(batch: RootBatch, chunksPrefix: Uint8Array, period: number, symbol: string, held: readonly number[], written: number): void {
  for (const part of held) if (part >= written && (written === 0 || part !== KEYS_PART)) batch.del(chunksPrefix, chunkKey(period, symbol, part))
}

/**
 * How many records a stored chunk part holds, from its header alone (for a
 * copy's progress).
 * @throws MalformedBytes when the header does not parse
 */
export function recordsInPart(bytes: Buffer): number {
  return readPartRecordCount(bytes)
}
