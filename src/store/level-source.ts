import type { AbstractLevel, AbstractSnapshot, AbstractSublevel } from 'abstract-level'
import { PriceStoreError } from '../errors.js'
import type { SampleRange, ScanOptions, ScanSource } from '../engine/scan-source.js'
import {
  BUCKET_LEVELS, DIRECTORY_LEVEL, FIRST_COPY_LEVEL, decodeBucketValue, decodeDirectory, describeBucketKey, encodeBucketKey, levelFor,
  readBucketNumber,
} from '../keys/bucket-key.js'
import type { DirectoryEntry } from '../keys/bucket-key.js'
import { describeKey, encodeKey, symbolPrefix, symbolRange } from '../keys/key-codec.js'
import type { Provider } from '../types.js'
import { StoredRow } from './stored-row.js'
import { BUCKETS_PER_BLOCK, blockOf } from './head-cache.js'
import type { HeadCache } from './head-cache.js'
import type { TailView } from './hot-tails.js'

/** How a scan source reads. */
export interface LevelSourceOptions {
  /** One consistent view for every read. */
  readonly snapshot?: AbstractSnapshot | undefined
  /** Cached bucket heads; only with a `snapshot` they match (cached heads and disk reads must show the same batches). */
  readonly heads?: HeadsAtSnapshot | undefined
  /** Hot tails for the edge of a range; only with a `snapshot` they match. */
  readonly tails?: TailView | undefined
  /** The index keeps minute directories (format 2), so a range's edge can be found with synchronous gets. */
  readonly directories?: boolean
}

/** The head cache as of a source's snapshot: `epoch` is the cache's epoch then, or -1 when they may differ. */
export interface HeadsAtSnapshot {
  readonly cache: HeadCache
  readonly epoch: number
}

/** A sublevel whose keys and values are raw bytes. */
export type BytesSublevel = AbstractSublevel<AbstractLevel<any, any, any>, any, Uint8Array, Uint8Array>
/** A sublevel whose keys are symbols (UTF-8) and whose values are unused. */
export type SymbolSublevel = AbstractSublevel<AbstractLevel<any, any, any>, any, string, string>

/** The store's sublevels a scan reads. */
export interface StoreSublevels {
  readonly prices: BytesSublevel
  readonly symbols: SymbolSublevel
  readonly buckets: BytesSublevel
}

// One round trip to LevelDB's thread pool costs 30-190 µs, so fetch many entries per call.
const SCAN_BATCH = 4096
const SCAN_READ_AHEAD_BYTES = 4 * 1024 * 1024
// Up to this many minute buckets, pointers and records are read with synchronous gets
// instead of an iterator plus getMany, each a thread-pool round trip.
const SYNC_BUCKET_READS = 64

const MINUTE_MS = 60_000
// Minute directories read at most this many minutes back from a range's `to` (about 15 µs a get)
// before the edge is sought instead (one round trip, 100-200 µs on a large store).
const MAX_DIRECTORY_WALK = 16

// Spans of more buckets than this (over a year of hours) read the index range directly: the cache
// would walk every block of the span, however few hold data.
const MAX_CACHED_SPAN = 256 * BUCKETS_PER_BLOCK

/**
 * The store's side of the engine's port: scans of key ranges and of the
 * bucket index, optionally pinned to a snapshot so several reads share one
 * view of the data. {@link LevelScanSource.close} releases the snapshot.
 */
export class LevelScanSource implements ScanSource {
  readonly #levels: StoreSublevels
  readonly #provider: Provider
  readonly #snapshot: AbstractSnapshot | undefined
  readonly #heads: HeadsAtSnapshot | undefined

  readonly #tails: TailView | undefined

  readonly #directories: boolean

  constructor(levels: StoreSublevels, provider: Provider, options: LevelSourceOptions = {}) {
    const { snapshot, heads, tails, directories = false } = options
    this.#levels = levels
    this.#provider = provider
    this.#snapshot = snapshot
    this.#heads = snapshot === undefined ? undefined : heads
    this.#tails = snapshot === undefined ? undefined : tails
    this.#directories = directories && (levels.buckets.supports as { getSync?: boolean }).getSync === true
  }

  async *scan(symbol: string, options: ScanOptions): AsyncGenerator<readonly StoredRow[]> {
    const prefixLength = symbolPrefix(symbol).length
    const range = symbolRange(symbol, options.from, options.to)
    for await (const entries of this.#entries(this.#levels.prices, range, options.reverse, options.limit)) {
      yield entries.map(([key, value]) => new StoredRow(key, value, symbol, prefixLength, this.#provider))
    }
  }

  async symbols(): Promise<readonly string[]> {
    return this.#levels.symbols.keys(this.#pin()).all()
  }

  /**
   * Bucket heads from the index level whose width divides the interval:
   * one pointer per level bucket, then one `getMany` for their records. The
   * level bucket holding `to` may have a head after `to`, so its latest
   * record up to `to` is sought directly instead.
   */
  bucketHeads(symbol: string, range: SampleRange): AsyncIterable<readonly StoredRow[]> | undefined {
    const level = levelFor(range.interval)
    if (level === undefined) return undefined
    return this.#bucketHeads(symbol, range, level, BUCKET_LEVELS[level] as number)
  }

  /** Releases the snapshot, if any. */
  async close(): Promise<void> {
    await this.#snapshot?.close()
  }

  async *#bucketHeads(symbol: string, range: SampleRange, level: number, width: number): AsyncGenerator<readonly StoredRow[]> {
    const prefixLength = symbolPrefix(symbol).length
    const firstBucket = Math.floor(range.from / width)
    const lastBucket = Math.floor(range.to / width)
    const lastIsWhole = (range.to + 1) % width === 0
    const endBucket = lastIsWhole ? lastBucket + 1 : lastBucket
    // The edge seek is independent of the index reads: start its round trip first, unless the hot tail holds the edge.
    const edge = lastIsWhole ? undefined : this.#edge(symbol, Math.max(range.from, lastBucket * width), range.to)
    edge?.catch(() => {}) // awaited below; this only keeps an early exit from leaving it unhandled
    const toRow = (key: Buffer, value: Uint8Array | undefined): StoredRow => {
      if (value === undefined) throw corruptIndex(describeKey(key), 'points to a missing record')
      return new StoredRow(key, value, symbol, prefixLength, this.#provider)
    }
    if (level >= FIRST_COPY_LEVEL && this.#heads !== undefined && endBucket - firstBucket <= MAX_CACHED_SPAN) {
      const rows = await this.#cachedHeads(this.#heads, symbol, level, firstBucket, endBucket)
      // The first level bucket may start before `from`; a head before `from` means nothing of it is in range.
      yield rows.filter((row) => row.timestamp >= range.from)
      const edgeRow = await edge
      if (edgeRow !== undefined) yield [edgeRow]
      return
    }
    // The heads in range: record keys, with their values where the level keeps copies.
    const heads = (entries: Iterable<[Uint8Array, Uint8Array]>): { key: Buffer; value: Uint8Array | undefined }[] => {
      const found: { key: Buffer; value: Uint8Array | undefined }[] = []
      for (const [indexKey, entry] of entries) {
        const head = decodeBucketValue(level, entry)
        if (head === undefined) throw corruptIndex(describeBucketKey(indexKey), 'holds a malformed entry')
        // The first level bucket may start before `from`; a head before `from` means nothing of it is in range.
        if (head.timestamp >= range.from) found.push({ key: encodeKey(symbol, head.timestamp, head.id), value: head.value })
      }
      return found
    }
    const copies = level >= FIRST_COPY_LEVEL

    if (!copies && endBucket - firstBucket <= SYNC_BUCKET_READS && (this.#levels.buckets.supports as { getSync?: boolean }).getSync === true) {
      // Few minute pointers: synchronous gets beat an iterator plus a getMany, two round trips.
      const found = heads(this.#pointersNow(symbol, level, firstBucket, endBucket))
      yield found.map(({ key }) => toRow(key, this.#levels.prices.getSync(key, this.#pin())))
    } else {
      // Copies are read in one contiguous range: measured on a 3.4 GB store, one seek and a sequential
      // read beat even 25 random gets, each of which may search several table files.
      const indexRange = { gte: encodeBucketKey(symbol, level, firstBucket), lt: encodeBucketKey(symbol, level, endBucket) }
      for await (const entries of this.#entries(this.#levels.buckets, indexRange, false, undefined)) {
        const found = heads(entries)
        const values = copies ? found.map((head) => head.value) : await this.#levels.prices.getMany(found.map((head) => head.key), this.#pin())
        yield found.map(({ key }, i) => toRow(key, values[i]))
      }
    }
    const edgeRow = await edge
    if (edgeRow !== undefined) yield [edgeRow]
  }

  /**
   * The heads of level buckets `first..end-1`, ascending: the cached blocks
   * taken at once (the cache equals the snapshot only until the next batch
   * lands), the others read from the snapshot in one range and cached.
   */
  async #cachedHeads(heads: HeadsAtSnapshot, symbol: string, level: number, first: number, end: number): Promise<StoredRow[]> {
    const usable = heads.epoch === heads.cache.epoch
    const found = usable ? heads.cache.lookup(symbol, level, first, end) : { cached: new Map<number, readonly StoredRow[]>(), missing: allBlocks(first, end) }
    const rows: (readonly StoredRow[])[] = []
    const read = await this.#readHeadBlocks(symbol, level, found.missing)
    for (const block of allBlocks(first, end)) {
      const cached = found.cached.get(block)
      if (cached !== undefined) {
        rows.push(cached)
        continue
      }
      const { heads: blockHeads, damaged } = read.get(block) ?? { heads: [], damaged: [] }
      const inRange = (bucket: number): boolean => bucket >= first && bucket < end
      const damage = damaged.find(([bucket]) => inRange(bucket))
      if (damage !== undefined) throw corruptIndex(describeBucketKey(damage[1]), 'holds a malformed entry')
      // A block with a damaged entry is not cached, so the query that needs that entry reads and reports it.
      if (damaged.length === 0) heads.cache.install(symbol, level, block, heads.epoch, blockHeads)
      rows.push(blockHeads.filter(([bucket]) => inRange(bucket)).map(([, row]) => row))
    }
    return rows.flat()
  }

  /** Whole blocks of a copying index level, read from the snapshot in one range: their heads and any malformed entries. */
  async #readHeadBlocks(symbol: string, level: number, blocks: readonly number[]): Promise<Map<number, HeadBlock>> {
    const read = new Map<number, HeadBlock>(blocks.map((block) => [block, { heads: [], damaged: [] }]))
    if (blocks.length === 0) return read
    const indexRange = {
      gte: encodeBucketKey(symbol, level, (blocks[0] as number) * BUCKETS_PER_BLOCK),
      lt: encodeBucketKey(symbol, level, ((blocks[blocks.length - 1] as number) + 1) * BUCKETS_PER_BLOCK),
    }
    const prefixLength = symbolPrefix(symbol).length
    for await (const entries of this.#entries(this.#levels.buckets, indexRange, false, undefined)) {
      for (const [indexKey, entry] of entries) {
        const bucket = readBucketNumber(indexKey)
        // Blocks between missing ones may be cached already: their entries read here are not needed.
        const block = read.get(blockOf(bucket))
        if (block === undefined) continue
        const head = decodeBucketValue(level, entry)
        if (head?.value === undefined) block.damaged.push([bucket, indexKey])
        else block.heads.push([bucket, new StoredRow(encodeKey(symbol, head.timestamp, head.id), head.value, symbol, prefixLength, this.#provider)])
      }
    }
    return read
  }

  /** The index pointers of level buckets `first..end-1` that exist, read synchronously. */
  *#pointersNow(symbol: string, level: number, first: number, end: number): Generator<[Uint8Array, Uint8Array]> {
    for (let bucket = first; bucket < end; bucket++) {
      const key = encodeBucketKey(symbol, level, bucket)
      const pointer = this.#levels.buckets.getSync(key, this.#pin())
      if (pointer !== undefined) yield [key, pointer]
    }
  }

  /**
   * The latest row of `symbol` in `from..to`: from the hot tail when it
   * holds that window, else from the minute directories with synchronous
   * gets, else sought on disk (one thread-pool round trip).
   */
  #edge(symbol: string, from: number, to: number): Promise<StoredRow | undefined> {
    const tails = this.#tails
    if (tails?.holdsAll(symbol, { from, to }) === true) return Promise.resolve(tails.scanNow(symbol, { from, to, reverse: true, limit: 1 })[0])
    if (this.#directories) {
      const found = this.#edgeFromDirectories(symbol, from, to)
      if (found !== 'unknown') return Promise.resolve(found)
    }
    return this.#latestIn(symbol, from, to)
  }

  /**
   * Walks the minute directories back from the minute of `to`: the first
   * entry inside `from..to` names the row, read with one more get. Gives up
   * (`'unknown'`) at a minute that overflowed or after
   * {@link MAX_DIRECTORY_WALK} minutes, where a seek is cheaper.
   */
  #edgeFromDirectories(symbol: string, from: number, to: number): StoredRow | undefined | 'unknown' {
    const first = Math.floor(from / MINUTE_MS)
    const last = Math.floor(to / MINUTE_MS)
    for (let minute = last; minute >= first; minute--) {
      if (last - minute >= MAX_DIRECTORY_WALK) return 'unknown'
      const indexKey = encodeBucketKey(symbol, DIRECTORY_LEVEL, minute)
      const stored = this.#levels.buckets.getSync(indexKey, this.#pin())
      if (stored === undefined) continue
      const directory = decodeDirectory(stored)
      if (directory === undefined) throw corruptIndex(describeBucketKey(indexKey), 'holds a malformed entry')
      if (directory === 'overflow') return 'unknown'
      for (let i = directory.length - 1; i >= 0; i--) {
        const { timestamp, id } = directory[i] as DirectoryEntry
        if (timestamp > to) continue
        if (timestamp < from) return undefined
        const key = encodeKey(symbol, timestamp, id)
        const value = this.#levels.prices.getSync(key, this.#pin())
        if (value === undefined) throw corruptIndex(describeBucketKey(indexKey), `lists ${describeKey(key)}, a missing record`)
        return new StoredRow(key, value, symbol, symbolPrefix(symbol).length, this.#provider)
      }
    }
    return undefined
  }

  /** The latest row of `symbol` in `from..to`, if any. */
  async #latestIn(symbol: string, from: number, to: number): Promise<StoredRow | undefined> {
    for await (const batch of this.scan(symbol, { from, to, reverse: true, limit: 1 })) return batch[0]
    return undefined
  }

  async *#entries(
    sublevel: BytesSublevel,
    range: { gte: Uint8Array; lt: Uint8Array },
    reverse: boolean,
    limit: number | undefined,
  ): AsyncGenerator<[Uint8Array, Uint8Array][]> {
    const iterator = sublevel.iterator({
      ...range,
      reverse,
      limit: limit ?? -1,
      // classic-level's read-ahead; other implementations ignore it.
      highWaterMarkBytes: SCAN_READ_AHEAD_BYTES,
      ...this.#pin(),
    } as Parameters<BytesSublevel['iterator']>[0])
    try {
      const batchSize = Math.min(limit ?? SCAN_BATCH, SCAN_BATCH)
      for (;;) {
        const entries = await iterator.nextv(batchSize)
        if (entries.length === 0) return
        yield entries as [Uint8Array, Uint8Array][]
      }
    } finally {
      await iterator.close()
    }
  }

  #pin(): { snapshot?: AbstractSnapshot } {
    return this.#snapshot === undefined ? {} : { snapshot: this.#snapshot }
  }
}

/** One block of index entries as read: heads by bucket, and the keys of entries that do not decode. */
interface HeadBlock {
  readonly heads: [number, StoredRow][]
  readonly damaged: [number, Uint8Array][]
}

/** Every block number of buckets `first..end-1`. */
function allBlocks(first: number, end: number): number[] {
  const blocks: number[] = []
  for (let block = blockOf(first); block <= blockOf(end - 1); block++) blocks.push(block)
  return blocks
}

function corruptIndex(key: string, problem: string): PriceStoreError {
  return new PriceStoreError('PRICE_CORRUPT_VALUE', `bucket index entry ${key} ${problem}`, { details: { key } })
}
