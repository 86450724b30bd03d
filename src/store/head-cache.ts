import type { StoredRow } from './stored-row.js'

/** Consecutive buckets of one symbol and level that load and leave the cache together. */
export const BUCKETS_PER_BLOCK = 64

/** The heads of one block, by bucket offset inside the block; a hole is an empty bucket. */
type Block = (StoredRow | undefined)[]

/** One head as a committed batch wrote it. */
export interface HeadUpdate {
  readonly symbol: string
  readonly level: number
  readonly bucket: number
  readonly row: StoredRow
}

/** What {@link HeadCache.lookup} found: rows of cached blocks, and the blocks that must be read. */
export interface HeadLookup {
  /** Heads of the cached blocks in the bucket range, ascending, by block number. */
  readonly cached: ReadonlyMap<number, readonly StoredRow[]>
  /** Block numbers not in the cache, ascending. */
  readonly missing: readonly number[]
}

/**
 * Bucket heads of the copying index levels (10 min, 1 h, 1 day) kept in
 * memory, in blocks of {@link BUCKETS_PER_BLOCK} buckets, least recently used
 * first out once more than `capacity` heads are held. A sparse range whose
 * blocks are cached reads no index entry from disk.
 *
 * Kept equal to the disk the way the hot tails are: every committed batch's
 * new heads are applied before its `putMany` resolves, and a block read from
 * a snapshot is installed only if no batch was applied since that snapshot
 * was taken (the caller checks {@link HeadCache.epoch}).
 */
export class HeadCache {
  readonly capacity: number
  /** Blocks by `level:block:symbol`, in least-recently-used order. */
  readonly #blocks = new Map<string, Block>()
  #held = 0
  #epoch = 0

  constructor(capacity: number) {
    this.capacity = capacity
  }

  /** Counts applied batches: a snapshot taken at one epoch matches the cache only while the epoch holds. */
  get epoch(): number {
    return this.#epoch
  }

  /** How many heads the cached blocks hold (an empty block counts as one). */
  get size(): number {
    return this.#held
  }

  /** The cached heads of buckets `first..end-1`, and which blocks of that span are not cached. */
  lookup(symbol: string, level: number, first: number, end: number): HeadLookup {
    const cached = new Map<number, readonly StoredRow[]>()
    const missing: number[] = []
    for (let block = blockOf(first); block <= blockOf(end - 1); block++) {
      const key = blockKey(symbol, level, block)
      const heads = this.#blocks.get(key)
      if (heads === undefined) {
        missing.push(block)
        continue
      }
      // Most recently used goes last.
      this.#blocks.delete(key)
      this.#blocks.set(key, heads)
      cached.set(block, headsIn(heads, block, first, end))
    }
    return { cached, missing }
  }

  /**
   * Installs a block read from disk: `heads` are the block's rows with their
   * bucket numbers. Does nothing when a batch was applied after `epoch`.
   */
  install(symbol: string, level: number, block: number, epoch: number, heads: readonly (readonly [number, StoredRow])[]): void {
    if (epoch !== this.#epoch || this.capacity === 0) return
    const rows: Block = new Array(BUCKETS_PER_BLOCK)
    for (const [bucket, row] of heads) rows[bucket - block * BUCKETS_PER_BLOCK] = row
    const key = blockKey(symbol, level, block)
    this.#drop(key)
    this.#blocks.set(key, rows)
    this.#held += weight(heads.length)
    this.#evict()
  }

  /** Applies a committed batch's new heads. Call synchronously after the commit. */
  apply(updates: readonly HeadUpdate[]): void {
    this.#epoch++
    for (const { symbol, level, bucket, row } of updates) {
      const block = this.#blocks.get(blockKey(symbol, level, blockOf(bucket)))
      if (block === undefined) continue
      const offset = bucket - blockOf(bucket) * BUCKETS_PER_BLOCK
      if (block[offset] === undefined && countHeads(block) > 0) this.#held++
      block[offset] = row
    }
    this.#evict()
  }

  /** Forgets every block, and every load under way (after a write whose outcome is unknown). */
  clear(): void {
    this.#epoch++
    this.#blocks.clear()
    this.#held = 0
  }

  #drop(key: string): void {
    const block = this.#blocks.get(key)
    if (block === undefined) return
    this.#blocks.delete(key)
    this.#held -= weight(countHeads(block))
  }

  #evict(): void {
    for (const key of this.#blocks.keys()) {
      if (this.#held <= this.capacity) return
      this.#drop(key)
    }
  }
}

/** The block holding a bucket. */
export function blockOf(bucket: number): number {
  return Math.floor(bucket / BUCKETS_PER_BLOCK)
}

function blockKey(symbol: string, level: number, block: number): string {
  return `${level}:${block}:${symbol}`
}

/** The heads of a block that fall in buckets `first..end-1`, ascending. */
function headsIn(block: Block, blockNumber: number, first: number, end: number): StoredRow[] {
  const start = blockNumber * BUCKETS_PER_BLOCK
  const rows: StoredRow[] = []
  for (let offset = Math.max(0, first - start); offset < BUCKETS_PER_BLOCK && start + offset < end; offset++) {
    const row = block[offset]
    if (row !== undefined) rows.push(row)
  }
  return rows
}

function countHeads(block: Block): number {
  let count = 0
  for (const row of block) if (row !== undefined) count++
  return count
}

/** An empty block still takes a map entry, so it counts as one head. */
function weight(heads: number): number {
  return Math.max(1, heads)
}
