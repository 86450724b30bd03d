/**
 * Statistics of a store, read from one view: records and symbols, each
 * symbol's count and first and last timestamp, the records not sealed yet,
 * and the bytes the database takes.
 *
 * Counting reads no record: each sealed hour's count is in its heads entry
 * (one small value per symbol-hour, read in one pass over the heads index),
 * and the open area is in memory. Only an hour that is both sealed and open
 * (late records, or a seal under way) is merged row by row, since an open
 * row may replace a sealed one.
 */
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { AbstractLevel } from 'abstract-level'
import { throwIfAborted } from '../../rules/abort.js'
import { STORE_FORMAT } from '../../keys/format-version.js'
import type { Provider } from '../../types.js'
import type { HeadsIndex, SealedCounts } from '../heads/heads-index.js'
import type { ReadView } from '../read/read-view.js'
import type { StoreReader } from '../read/store-reader.js'
import type { IngestVerifier, SignatureCounts } from '../signatures/ingest-verifier.js'

/** One symbol's part of {@link StoreStats}. */
export interface SymbolStats {
  readonly symbol: string
  /** Records stored (one per symbol, timestamp and id). */
  readonly records: number
  /** The oldest record's timestamp (ms since the epoch). */
  readonly firstTimestamp: number
  /** The newest record's timestamp. */
  readonly lastTimestamp: number
}

/** How much the database takes, and how that was measured. */
export interface DiskUsage {
  readonly bytes: number
  /**
   * `directory`: the sizes of the files in the database's directory
   * (classic-level), what `du` counts, LevelDB's own log and manifest
   * included. `approximate`: the database's `approximateSize()` over every
   * key, which leaves out data not yet compacted into tables.
   */
  readonly measured: 'directory' | 'approximate'
}

/** What `store.stats()` answers: plain data, ready for `JSON.stringify`. */
export interface StoreStats {
  /** Records stored, all symbols together. */
  readonly records: number
  /** Symbols with at least one record. */
  readonly symbols: number
  /** Per symbol, in the store's order (UTF-8 bytes). */
  readonly perSymbol: readonly SymbolStats[]
  /** Records written and not sealed into chunks yet (held in the log and in memory); counted in `records` too. */
  readonly unsealedRecords: number
  /** Bytes the database takes; `null` when it is not on disk or cannot say (memory-level). */
  readonly disk: DiskUsage | null
  /** The storage format version (see docs/architecture.md). */
  readonly formatVersion: number
  /** The provider the store serves, as recorded in it. */
  readonly provider: Provider
  /**
   * Signature verification (`store.stats()` only; a backup's statistics leave it out): the store's policy, the
   * verdicts taken at ingest since the store opened (by overall verdict), and the batches refused for one.
   */
  readonly signatures?: SignatureCounts
}

/** What `store.stats()` reads. */
export interface StatsSource {
  readonly reader: StoreReader
  readonly heads: HeadsIndex
  readonly db: AbstractLevel<any, any, any>
  readonly options: { readonly provider: Provider }
  readonly ingest: IngestVerifier
}

/**
 * `store.stats()`: the statistics of one view, then the disk usage.
 * @throws PriceStoreError `PRICE_NOT_OPEN`, `PRICE_ABORTED`, `PRICE_CORRUPT_VALUE`
 */
export async function storeStats(source: StatsSource, signal: AbortSignal | undefined): Promise<StoreStats> {
  const { reader, heads, db, options: { provider }, ingest } = source
  const stats = await reader.read('read the statistics', (view) => readStats(view, heads, provider, signal))
  return Object.freeze({ ...stats, disk: await diskUsage(db), signatures: { policy: ingest.policy, ...ingest.counts() } })
}

/**
 * Reads the statistics of `view` (everything but the disk usage, which is not part of a snapshot). `sealed`: the
 * sealed hours' counts when the caller holds them for the view's sealed data (the feed catalogue keeps them between
 * seals); read from the heads index otherwise.
 */
export async function readStats(
  view: ReadView, heads: HeadsIndex, provider: Provider, signal: AbortSignal | undefined, sealed?: SealedCounts,
): Promise<Omit<StoreStats, 'disk'>> {
  // One pass over the heads index in the view's snapshot: each sealed hour's record count.
  sealed ??= await heads.sealedCounts(view.readOptions, signal)
  const open = view.openArea
  const perSymbol: SymbolStats[] = []
  let records = 0
  let unsealedRecords = 0
  for (const symbol of await view.symbols()) {
    throwIfAborted(signal)
    const hours = sealed.get(symbol) ?? new Map<number, number>()
    let count = 0
    for (const n of hours.values()) count += n
    for (const period of open.periodsOf(symbol)) {
      const rows = open.rows(symbol, period).length
      unsealedRecords += rows
      const held = hours.get(period)
      count += held === undefined ? rows : view.periodRows(symbol, period).length - held
    }
    const first = await edgeTimestamp(view, symbol, false)
    const last = await edgeTimestamp(view, symbol, true)
    // A symbol is indexed only with its first record and records are never deleted, so both exist.
    if (first === undefined || last === undefined || count === 0) continue
    perSymbol.push(Object.freeze({ symbol, records: count, firstTimestamp: first, lastTimestamp: last }))
    records += count
  }
  return Object.freeze({
    records,
    symbols: perSymbol.length,
    perSymbol: Object.freeze(perSymbol),
    unsealedRecords,
    formatVersion: STORE_FORMAT,
    provider: Object.freeze({ name: provider.name, id: provider.id, publicKey: provider.publicKey }),
  })
}

/** The timestamp of the oldest (or newest) record of `symbol`: a scan of limit 1, which reads one hour's key column. */
async function edgeTimestamp(view: ReadView, symbol: string, newest: boolean): Promise<number | undefined> {
  for await (const rows of view.scan(symbol, { reverse: newest, limit: 1, refs: true })) return rows[0]?.timestamp
  return undefined
}

/**
 * The bytes the database takes now: its directory's files when it has a
 * location (classic-level), else its `approximateSize()` over every key when
 * it has one, else `null` (memory-level: nothing on disk).
 */
export async function diskUsage(db: AbstractLevel<any, any, any>): Promise<DiskUsage | null> {
  const { location, approximateSize } = db as { location?: unknown; approximateSize?: unknown }
  if (typeof location === 'string') return { bytes: await directoryBytes(location), measured: 'directory' }
  if (typeof approximateSize === 'function') {
    const size = approximateSize as (start: Uint8Array, end: Uint8Array, options: object) => Promise<number>
    return { bytes: await size.call(db, new Uint8Array([0]), new Uint8Array([0xff, 0xff, 0xff, 0xff]), { keyEncoding: 'view' }), measured: 'approximate' }
  }
  return null
}

/** The sizes of the files in a directory and its subdirectories (LevelDB's is flat), a file removed meanwhile (compaction) skipped. */
export async function directoryBytes(path: string): Promise<number> {
  let bytes = 0
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const full = join(path, entry.name)
    if (entry.isDirectory()) bytes += await directoryBytes(full)
    else if (entry.isFile()) bytes += (await stat(full).catch(() => undefined))?.size ?? 0
  }
  return bytes
}
