/**
 * How a view reads the sealed chunk of one (hour, symbol): from the chunk
 * cache, or from the view's snapshot. A paged chunk is read through its
 * key column, each page only when one of its records is asked for, or, for
 * a read of a few records, through its heads entry's page table, with no
 * key column; a chunk too large for a key column is read whole. Delta parts
 * are merged in either way: for reads of keys alone or of a few records, as
 * the heads entry's delta keys, a delta part read only for a delta record
 * returned.
 */
import type { AbstractSnapshot } from 'abstract-level'
import { PriceStoreError } from '../../errors.js'
import { asBuffer } from '../../keys/bytes.js'
import { checkKeyColumn, readPartCount } from '../../keys/chunk-codec.js'
import { undecodable } from '../../keys/entry-errors.js'
import { DELTA_PART, KEYS_PART, chunkKey, describeChunk } from '../../keys/key-layout.js'
import type { Provider } from '../../types.js'
import type { SublevelReads } from '../db/root-reads.js'
import type { BytesSublevel } from '../db/sublevels.js'
import type { HeadRows } from '../heads/heads-entry.js'
import type { HeadsIndex } from '../heads/heads-index.js'
import { DeltaOverPages } from './delta-over-pages.js'
import { PageTableChunk } from './page-table-chunk.js'
import { PagedChunk, PagedIndex } from './paged-chunk.js'
import { type RowList } from '../rows/row-list.js'
import { SealedChunk } from './sealed-chunk.js'
import type { HourKeyColumns, PeriodHeads, SealedHours } from './sealed-hours.js'

export type { HourKeyColumns, PeriodHeads } from './sealed-hours.js'

/** What the chunk cache holds of a sealed hour: a chunk read whole (too large for a key column), or a paged chunk's index. */
export type CachedChunk = SealedChunk | PagedIndex


/**
 * The caches a view reads and fills, each call given the version the view
 * was captured at and whether a seal was under way then (rules 3 and 4 of read-state.ts).
 */
export interface ViewCaches {
  readonly provider: Provider
  cachedHeads(key: string, version: number): PeriodHeads | undefined
  cachedChunk(key: string, version: number): CachedChunk | undefined
  installHeads(key: string, heads: PeriodHeads, version: number, sealing: boolean): void
  installChunk(key: string, chunk: CachedChunk, version: number, sealing: boolean): void
}


/** Where chunks are read: the chunks' sublevel, its entries read straight from the root database, and the heads index that describes them. */
export interface ChunkSources {
  readonly level: BytesSublevel
  readonly reads: SublevelReads
  readonly heads: HeadsIndex
}

/**
 * The delta keys of a heads entry parsed as a list, once per entry read:
 * kept beside the entry (in the heads cache) for as long as it is, since
 * every read of a few records of the hour merges them.
 */
const deltaKeyLists = new WeakMap<HeadRows, SealedChunk>()

/**
 * The heads entry's delta keys as a list, or `undefined` when it has none.
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` naming the heads entry when they do not parse
 */
function deltaKeyList(heads: HeadRows, symbol: string, period: number, provider: Provider): SealedChunk | undefined {
  if (heads.deltaKeys === undefined) return undefined
  let list = deltaKeyLists.get(heads)
  if (list === undefined) {
    try {
      list = new SealedChunk(symbol, period, [heads.deltaKeys], provider, 0, KEYS_PART)
    } catch (err) {
      if (err instanceof PriceStoreError) throw err
      throw undecodable(heads.entry, err)
    }
    deltaKeyLists.set(heads, list)
  }
  return list
}

/** The key of a chunk's entries in the caches. */
export function cacheKey(symbol: string, period: number): string {
  return `${period}:${symbol}`
}

/** One view's reader of sealed chunks: its snapshot, and the caches as of the view's version. */
export class ChunkReader implements SealedHours {
  readonly #caches: ViewCaches
  readonly #chunks: BytesSublevel
  readonly #reads: SublevelReads
  readonly #heads: HeadsIndex
  readonly #pin: { readonly snapshot: AbstractSnapshot }
  readonly #version: number
  readonly #sealing: boolean

  constructor(caches: ViewCaches, chunks: ChunkSources, pin: { readonly snapshot: AbstractSnapshot }, version: number, sealing: boolean) {
    this.#caches = caches
    this.#chunks = chunks.level
    this.#reads = chunks.reads
    this.#heads = chunks.heads
    this.#pin = pin
    this.#version = version
    this.#sealing = sealing
  }

  /** The heads of the chunk of `symbol` in `period`, or `null` when there is none: from the heads cache, else the snapshot (then cached, if rule 4 allows). */
  heads(symbol: string, period: number): PeriodHeads {
    const key = cacheKey(symbol, period)
    // Taken while a seal was under way, the snapshot may hold it already and the caches not: read the snapshot alone (rule 3).
    const cached = this.#sealing ? undefined : this.#caches.cachedHeads(key, this.#version)
    if (cached !== undefined) return cached
    const heads = this.#heads.read(symbol, period, this.#pin)
    this.#caches.installHeads(key, heads, this.#version, this.#sealing)
    return heads
  }

  /** The hours in `lo..hi` with a chunk of `symbol`, in order, from the heads index (an iterator over this view's snapshot). */
  periods(symbol: string, lo: number, hi: number, reverse: boolean): AsyncIterable<number> {
    return this.#heads.periods(symbol, lo, hi, reverse, this.#pin)
  }

  /**
   * The chunk of `symbol` in `period` as its heads entry describes it. For
   * a `small` read (a few records: an as-of, latest-N, a range's edge) of a
   * chunk with a page table, read by its page table (one page a search,
   * nothing cached), with its delta parts, if any, read whole beside the
   * pages for newest-first reads (delta-over-pages.ts); otherwise through
   * its key column, cached when `small`.
   */
  chunk(symbol: string, period: number, heads: HeadRows, small: boolean): RowList {
    const cached = this.#cached(symbol, period)
    if (cached !== undefined) return this.#listOf(cached, symbol, period)
    if (small && heads.pageStarts.timestamps.length > 0) {
      const base = new PageTableChunk(symbol, period, heads, (page) => this.part(symbol, period, page), this.#caches.provider)
      if (heads.deltas === 0) return base
      return new DeltaOverPages(base, {
        symbol, period, entry: heads.entry, deltas: heads.deltas, records: heads.records,
        deltaKeys: deltaKeyList(heads, symbol, period, this.#caches.provider),
        readDelta: (delta) => this.#deltaPart(symbol, period, delta),
        readFull: () => this.#read(symbol, period, this.#keyColumn(symbol, period), heads.deltas, true),
      })
    }
    return this.#read(symbol, period, this.#keyColumn(symbol, period), heads.deltas, small)
  }

  /**
   * The chunk's records for their refs alone (id, timestamp, value): a paged
   * chunk's key column with its delta parts merged in, no page read (its
   * rows' `record()` cannot be built); any other chunk read whole. From the
   * chunk cache when there, else read and not cached (a read of every
   * record of an hour, as `chunk` does for one that is not small).
   */
  refs(symbol: string, period: number, heads: HeadRows): RowList {
    const cached = this.#cached(symbol, period)
    if (cached !== undefined) return cached instanceof PagedIndex ? cached.keys : cached
    const column = this.#keyColumn(symbol, period)
    // The delta records' keys are in the heads entry: the key column and they are the hour's refs, no delta part read.
    const keys = heads.deltaKeys === undefined || column === undefined ? undefined : this.#keysWithDeltaKeys(symbol, period, column, heads)
    if (keys !== undefined) return keys
    const chunk = this.#load(symbol, period, column, heads.deltas, false)
    return chunk instanceof PagedIndex ? chunk.keys : chunk
  }

  /** The chunk when it is paged (its key column read and cached), else `undefined`, with nothing more read. */
  pagedChunk(symbol: string, period: number, deltas: number): PagedChunk | undefined {
    const cached = this.#cached(symbol, period)
    if (cached !== undefined) return cached instanceof PagedIndex ? (this.#listOf(cached, symbol, period) as PagedChunk) : undefined
    const column = this.#keyColumn(symbol, period)
    if (column === undefined) return undefined
    return this.#read(symbol, period, column, deltas, true) as PagedChunk
  }

  /**
   * The keys of the chunk's records, as sealing extends it: its key column
   * and its heads entry's delta keys, or its delta parts when the entry has
   * none (no value beyond a header, nothing cached), or the chunk read whole
   * when it has no key column.
   */
  keys(symbol: string, period: number, heads: HeadRows): SealedChunk {
    const { deltas } = heads
    const column = this.#keyColumn(symbol, period)
    if (column === undefined) return this.#load(symbol, period, undefined, deltas, false) as SealedChunk
    if (heads.deltaKeys !== undefined) return this.#keysWithDeltaKeys(symbol, period, column, heads)
    const parts = [column, ...this.#deltaParts(symbol, period, deltas)]
    return this.#decoding(symbol, period, KEYS_PART, () => new SealedChunk(symbol, period, parts, this.#caches.provider, deltas, KEYS_PART))
  }

  /**
   * For each hour `lo..hi` of `symbol`, in order: its chunk's key column as
   * stored (`undefined`: none) and whether the chunk has a delta part. One
   * round trip from this view's snapshot, run off the main thread; nothing
   * cached.
   */
  async keyColumns(symbol: string, lo: number, hi: number): Promise<HourKeyColumns> {
    const keys: Buffer[] = []
    for (let period = lo; period <= hi; period++) keys.push(chunkKey(period, symbol, KEYS_PART), chunkKey(period, symbol, DELTA_PART))
    const values = (await this.#chunks.getMany(keys, this.#pin)) as (Uint8Array | undefined)[]
    const columns: (Buffer | undefined)[] = []
    const deltas: boolean[] = []
    for (let at = 0; at < values.length; at += 2) {
      const column = values[at]
      columns.push(column === undefined ? column : asBuffer(column))
      deltas.push(values[at + 1] !== undefined)
    }
    return { lo, columns, deltas }
  }

  /**
   * The list of a chunk that has a paged key column and no delta part, from
   * the column's bytes as read from this view's snapshot (by
   * {@link ChunkReader.keyColumns}), not read again: with `pages`, as
   * `chunk` reads it (each record from its page); without, as `keys` does
   * (the key column's own rows). Nothing cached.
   */
  keyColumnList(symbol: string, period: number, column: Buffer, pages: boolean): RowList {
    const provider = this.#caches.provider
    return this.#decoding(symbol, period, KEYS_PART, () =>
      pages
        ? new PagedChunk(new PagedIndex(symbol, period, column, [], provider), (page) => this.part(symbol, period, page))
        : new SealedChunk(symbol, period, [column], provider, 0, KEYS_PART))
  }

  /**
   * One stored part of the chunk.
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` when it is missing (the heads index lists the chunk)
   */
  part(symbol: string, period: number, part: number): Buffer {
    const bytes = this.#reads.getSync(chunkKey(period, symbol, part), this.#pin)
    if (bytes === undefined) {
      const entry = describeChunk(period, symbol, part)
      throw new PriceStoreError('PRICE_CORRUPT_VALUE', `${entry} is missing though the heads index lists it`, { details: { key: entry } })
    }
    return bytes
  }

  #cached(symbol: string, period: number): CachedChunk | undefined {
    // Taken while a seal was under way, the snapshot may hold a newer chunk than the caches: read the snapshot alone (rule 3).
    return this.#sealing ? undefined : this.#caches.cachedChunk(cacheKey(symbol, period), this.#version)
  }

  #keyColumn(symbol: string, period: number): Buffer | undefined {
    return this.#reads.getSync(chunkKey(period, symbol, KEYS_PART), this.#pin)
  }

  /** Reads the chunk given its key column (if it has one) as this view's list, and caches it when `install`. */
  #read(symbol: string, period: number, column: Buffer | undefined, deltas: number, install: boolean): RowList {
    return this.#listOf(this.#load(symbol, period, column, deltas, install), symbol, period)
  }

  /** Reads the chunk given its key column (if it has one), and caches it when `install`. */
  #load(symbol: string, period: number, column: Buffer | undefined, deltas: number, install: boolean): CachedChunk {
    const chunk: CachedChunk = column !== undefined
      ? this.#decoding(symbol, period, KEYS_PART, () => {
          checkKeyColumn(column)
          return new PagedIndex(symbol, period, column, this.#deltaParts(symbol, period, deltas), this.#caches.provider)
        })
      : this.#decoding(symbol, period, 0, () => {
          const first = this.part(symbol, period, 0)
          const parts = [first]
          for (let more = 1, count = readPartCount(first); more < count; more++) parts.push(this.part(symbol, period, more))
          parts.push(...this.#deltaParts(symbol, period, deltas))
          return new SealedChunk(symbol, period, parts, this.#caches.provider, deltas)
        })
    if (install) this.#caches.installChunk(cacheKey(symbol, period), chunk, this.#version, this.#sealing)
    return chunk
  }

  /** A cached chunk as this view's list: a paged one reads its pages from this view's snapshot. */
  #listOf(chunk: CachedChunk, symbol: string, period: number): RowList {
    return chunk instanceof PagedIndex ? new PagedChunk(chunk, (page) => this.part(symbol, period, page)) : chunk
  }

  /** The chunk's `deltas` delta parts, oldest first. */
  #deltaParts(symbol: string, period: number, deltas: number): Buffer[] {
    return Array.from({ length: deltas }, (_, delta) => this.part(symbol, period, DELTA_PART + delta))
  }

  /** Delta part `delta` of the chunk, parsed. */
  #deltaPart(symbol: string, period: number, delta: number): SealedChunk {
    return this.#decoding(symbol, period, DELTA_PART + delta, () =>
      new SealedChunk(symbol, period, [this.part(symbol, period, DELTA_PART + delta)], this.#caches.provider, 0, DELTA_PART + delta))
  }

  /** A paged chunk's keys (key column) with the heads entry's delta keys merged over them, as its delta parts would be. */
  #keysWithDeltaKeys(symbol: string, period: number, column: Buffer, heads: HeadRows): SealedChunk {
    // The delta keys parse first, named on the heads entry: what does not parse after them is the key column.
    deltaKeyList(heads, symbol, period, this.#caches.provider)
    return this.#decoding(symbol, period, KEYS_PART, () => {
      checkKeyColumn(column)
      return new SealedChunk(symbol, period, [column, heads.deltaKeys as Buffer], this.#caches.provider, 1, KEYS_PART)
    })
  }


  /** Runs `decode`; what does not decode is `PRICE_CORRUPT_VALUE` naming part `part` of the chunk. */
  #decoding<T>(symbol: string, period: number, part: number, decode: () => T): T {
    try {
      return decode()
    } catch (err) {
      if (err instanceof PriceStoreError) throw err
      throw undecodable(describeChunk(period, symbol, part), err)
    }
  }
}
