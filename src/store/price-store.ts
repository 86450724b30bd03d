import type { AbstractLevel } from 'abstract-level'
import { ClassicLevel } from 'classic-level'
import { PriceStoreError } from '../errors.js'
import { executeQuery, streamRange } from '../engine/execute.js'
import { parseQuery } from '../engine/parse-query.js'
import { toLatestQuery, toRangeQuery, toSeveralQuery } from '../engine/typed-queries.js'
import type { LatestOptions, RangeOptions, SeveralOptions } from '../engine/typed-queries.js'
import { compareIds } from '../engine/compare-ids.js'
import { encodeKey } from '../keys/key-codec.js'
import { encodeValue } from '../keys/value-codec.js'
import type { StoredRecord } from '../records/stored-record.js'
import { validateRecord } from '../records/validate-record.js'
import type { Limits, PriceAnswer, PriceQuery, PriceRecord, Provider, QueryParams, SampledRecord } from '../types.js'
import { bucketIndexUpdates } from './bucket-index.js'
import type { IndexEntry } from './bucket-index.js'
import { isCopyLevel } from '../keys/bucket-key.js'
import { HeadCache } from './head-cache.js'
import type { HeadUpdate } from './head-cache.js'
import { HotTails } from './hot-tails.js'
import type { TailView } from './hot-tails.js'
import { LevelScanSource } from './level-source.js'
import type { BytesSublevel, SymbolSublevel } from './level-source.js'
import { STORE_FORMAT, readFormat } from './format.js'
import { resolveOptions } from './store-options.js'
import type { PriceStoreOptions, ResolvedOptions } from './store-options.js'
import { RootBatch, prefixOf } from './root-batch.js'
import { toStorageError } from './storage-errors.js'
import { StoredRow } from './stored-row.js'

/** Hot tails captured when the store had taken in `applied` batches. */
interface TailsAt {
  readonly view: TailView
  readonly applied: number
}

/** Where a store is in its life. Queries and writes need `'open'`. */
export type StoreStatus = 'opening' | 'open' | 'closing' | 'closed'

type AnyLevel = AbstractLevel<any, any, any>

const EMPTY = Buffer.alloc(0)

/** How many symbols' tails load from disk at once. */
const TAIL_LOAD_CONCURRENCY = 64

/** Options for the on-disk database the store creates from a location. */
const CLASSIC_LEVEL_OPTIONS = {
  // A larger memtable halves LevelDB's write stalls on bulk ingest (PERF-NOTES: 55k -> 115k records/s).
  writeBufferSize: 64 * 1024 * 1024,
} as const

/**
 * An embedded store of signed price records for one provider, answering the
 * query forms of `GET /prices`.
 *
 * @example
 * const store = await PriceStore.open('./data/prices', { provider })
 * await store.putMany(records)
 * const [latest] = await store.latest('BTC')
 * await store.close()
 */
export class PriceStore {
  readonly #db: AnyLevel
  readonly #options: ResolvedOptions
  readonly #prices: BytesSublevel
  readonly #symbols: SymbolSublevel
  readonly #buckets: BytesSublevel
  readonly #meta: AbstractLevel<any, string, string>
  /** Each sublevel's key prefix in the root database, for writing batches there directly. */
  readonly #prefixes: { readonly prices: Uint8Array; readonly symbols: Uint8Array; readonly buckets: Uint8Array }
  /** Symbols already in the symbol index, so a batch only adds new ones. */
  readonly #knownSymbols = new Set<string>()
  /** The same symbols in UTF-8 byte order, rebuilt only when a batch adds one. */
  #sortedSymbols: readonly string[] = []
  #status: StoreStatus = 'closed'
  /** Writes run one after another, so the symbol index bookkeeping never races. */
  #writeQueue: Promise<unknown> = Promise.resolve()
  /** The newest records of each symbol, in memory; `undefined` when the cache is off. */
  #tails: HotTails | undefined
  /** Bucket heads of the copying index levels, in memory; `undefined` when that cache is off. */
  #heads: HeadCache | undefined
  /** True from the moment a batch goes to the database until the caches have taken it in. */
  #committing = false
  /** Batches the caches have taken in (or been cleared for), so a view of them can be matched to a snapshot. */
  #appliedBatches = 0
  /** The open database's format version; from 2 the bucket index keeps minute directories. */
  #format = STORE_FORMAT

  /**
   * Wraps any abstract-level database (e.g. `new MemoryLevel()`); call
   * {@link PriceStore.open | open()} before use. The store keeps its data in
   * sublevels with their own encodings, so the database can have any options.
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS`
   */
  constructor(db: AnyLevel, options: PriceStoreOptions) {
    this.#options = resolveOptions(options)
    this.#db = db
    try {
      this.#prices = db.sublevel<Uint8Array, Uint8Array>('p', { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as BytesSublevel
      this.#symbols = db.sublevel<string, string>('s', { keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as SymbolSublevel
      this.#buckets = db.sublevel<Uint8Array, Uint8Array>('b', { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as BytesSublevel
      this.#meta = db.sublevel<string, string>('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as AbstractLevel<any, string, string>
      this.#prefixes = { prices: prefixOf(this.#prices), symbols: prefixOf(this.#symbols), buckets: prefixOf(this.#buckets) }
    } catch (err) {
      throw new PriceStoreError(
        'PRICE_INVALID_OPTIONS',
        'the database cannot hold binary keys and values (e.g. memory-level with storeEncoding "utf8"); use one that stores buffers or views',
        { cause: err, details: { field: 'db' } },
      )
    }
  }

  /**
   * Opens a store on a directory (LevelDB via classic-level, created when
   * missing) or on an abstract-level database.
   * @throws PriceStoreError `PRICE_LOCKED` when another process holds the directory,
   *   `PRICE_UNSUPPORTED_FORMAT`, `PRICE_INVALID_OPTIONS`, `PRICE_STORAGE_ERROR`
   */
  static async open(location: string | AnyLevel, options: PriceStoreOptions): Promise<PriceStore> {
    // Check the options before creating a database: an unopened ClassicLevel opens itself and takes the lock.
    resolveOptions(options)
    const db = typeof location === 'string' ? new ClassicLevel(location, CLASSIC_LEVEL_OPTIONS) : location
    const store = new PriceStore(db, options)
    await store.open()
    return store
  }

  /** The provider this store serves. */
  get provider(): Provider {
    return this.#options.provider
  }

  /** The query caps in force. */
  get limits(): Limits {
    return this.#options.limits
  }

  /** Where the store is in its life: queries and writes need `'open'`. */
  get status(): StoreStatus {
    return this.#status
  }

  /**
   * Opens the database and checks its format version. Opening an open store does nothing.
   * @throws PriceStoreError `PRICE_LOCKED`, `PRICE_UNSUPPORTED_FORMAT`, `PRICE_STORAGE_ERROR`
   */
  async open(): Promise<void> {
    if (this.#status === 'open') return
    if (this.#status !== 'closed') throw new PriceStoreError('PRICE_NOT_OPEN', `cannot open a store that is ${this.#status}`)
    this.#status = 'opening'
    try {
      await this.#db.open({ createIfMissing: true })
      // Closing a database closes its sublevels too, and reopening it does not reopen them.
      await Promise.all([this.#prices, this.#symbols, this.#buckets, this.#meta].map((sublevel) => sublevel.open()))
      this.#format = await readFormat(this.#meta, this.#prices)
      this.#knownSymbols.clear()
      for (const symbol of await this.#symbols.keys().all()) this.#knownSymbols.add(symbol)
      this.#sortedSymbols = [...this.#knownSymbols].sort(compareIds)
      // The database may have changed while the store was closed: start with an empty cache.
      this.#resetCaches()
      this.#heads = this.#options.bucketHeads > 0 ? new HeadCache(this.#options.bucketHeads) : undefined
      this.#status = 'open'
    } catch (err) {
      this.#status = 'closed'
      await this.#db.close().catch(() => {})
      const coded = toStorageError(err, 'open the store')
      throw coded.code === 'PRICE_NOT_OPEN'
        ? new PriceStoreError('PRICE_STORAGE_ERROR', 'cannot open the store: the database failed to open', { cause: err })
        : coded
    }
  }

  /**
   * Waits for pending writes, then closes the database. Closing a closed store does nothing.
   */
  async close(): Promise<void> {
    if (this.#status === 'closed' || this.#status === 'closing') return
    this.#status = 'closing'
    try {
      await this.#writeQueue
      await this.#db.close()
    } finally {
      this.#status = 'closed'
    }
  }

  /**
   * Writes one record. See {@link PriceStore.putMany}.
   * @throws PriceStoreError `PRICE_INVALID_RECORD`, `PRICE_NOT_OPEN`, `PRICE_STORAGE_ERROR`
   */
  async put(record: unknown): Promise<void> {
    await this.putMany([record])
  }

  /**
   * Validates and writes a batch of records atomically: if any record is
   * bad, nothing is written. A record with the same symbol, timestamp and id
   * as a stored one replaces it. Resolves with the number of records written.
   * @throws PriceStoreError `PRICE_INVALID_RECORD` (with `details.index` and
   *   `details.field`), `PRICE_NOT_OPEN`, `PRICE_STORAGE_ERROR`
   */
  async putMany(records: Iterable<unknown>): Promise<number> {
    this.#assertOpen()
    const stored: StoredRecord[] = []
    let index = 0
    for (const record of records) stored.push(validateRecord(record, index++, this.#options.provider))
    if (stored.length === 0) return 0
    const write = this.#writeQueue.then(() => this.#writeBatch(stored))
    this.#writeQueue = write.catch(() => {})
    return write
  }

  /**
   * The latest `limit` records of a symbol, newest first; with `to` (and/or
   * `from`), the records as of that time. An unknown symbol gives `[]`.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`
   */
  async latest(symbol: string, options: LatestOptions = {}): Promise<PriceRecord[]> {
    return this.#answer(toLatestQuery(symbol, options, this.limits)) as Promise<PriceRecord[]>
  }

  /**
   * The latest record of each symbol (every symbol in the store when
   * `symbols` is left out), within the optional window, keyed by symbol.
   * Symbols with no record in the window are left out. All symbols are read
   * from one snapshot.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`
   */
  async several(symbols?: readonly string[], options: SeveralOptions = {}): Promise<Record<string, PriceRecord>> {
    return this.#answer(toSeveralQuery(symbols, options, this.limits)) as Promise<Record<string, PriceRecord>>
  }

  /**
   * One record per epoch-aligned `interval` bucket of `from..to` (both
   * inclusive), the bucket's latest, oldest first, each with `minutes`;
   * then `offset` and `limit`. Refuses answers over `maxRangePoints`.
   * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE`, `PRICE_INVALID_INTERVAL`, `PRICE_INVALID_RANGE`,
   *   `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_NOT_OPEN`
   */
  async range(symbol: string, options: RangeOptions): Promise<SampledRecord[]> {
    return this.#answer(toRangeQuery(symbol, options, this.limits)) as Promise<SampledRecord[]>
  }

  /**
   * The range form as a stream, without the `maxRangePoints` cap, read from
   * one consistent view. Arguments are checked when it is called.
   * @throws PriceStoreError (synchronously) for bad arguments or a closed store
   */
  rangeStream(symbol: string, options: { from: number; to: number; interval: number }): AsyncIterable<SampledRecord> {
    // Only the range itself: a stream takes no offset or limit.
    const range = typeof options === 'object' && options !== null ? { from: options.from, to: options.to, interval: options.interval } : options
    const query = toRangeQuery(symbol, range, this.limits)
    this.#assertOpen()
    const store = this
    return {
      [Symbol.asyncIterator]: async function* () {
        // The stream may read both the bucket index and the records: one snapshot for its whole life.
        const source = store.#openSource(true)
        try {
          yield* streamRange(source, query.symbol, query)
        } catch (err) {
          throw toStorageError(err, 'stream a price range')
        } finally {
          await source.close()
        }
      },
    }
  }

  /**
   * Answers a `GET /prices` parameter set exactly as the HTTP service does:
   * an array for single-symbol forms, an object keyed by symbol otherwise.
   * @throws PriceStoreError with a `PRICE_INVALID_*`, `PRICE_UNSUPPORTED_PROVIDER`,
   *   `PRICE_RANGE_TOO_LARGE` or `PRICE_NOT_OPEN` code
   */
  async query(params: QueryParams): Promise<PriceAnswer> {
    return this.#answer(parseQuery(params, this.#options))
  }

  /** Every symbol with at least one record, in UTF-8 byte order. */
  async symbols(): Promise<string[]> {
    this.#assertOpen()
    return [...this.#sortedSymbols]
  }

  // No open check here: close() waits for queued writes, which still run while it is 'closing'.
  async #writeBatch(records: readonly StoredRecord[]): Promise<number> {
    const batch = new RootBatch()
    const values: Buffer[] = []
    const rowsBySymbol = new Map<string, StoredRow[]>()
    const batchRows: StoredRow[] = []
    const newSymbols = new Set<string>()
    for (const record of records) {
      const key = encodeKey(record.symbol, record.timestamp, record.id)
      const value = encodeValue(record)
      values.push(value)
      batch.put(this.#prefixes.prices, key, value)
      let rows = rowsBySymbol.get(record.symbol)
      if (rows === undefined) rowsBySymbol.set(record.symbol, (rows = []))
      const row = new StoredRow(key, value, record.symbol, Buffer.byteLength(record.symbol) + 1, this.#options.provider)
      rows.push(row)
      batchRows.push(row)
      if (!this.#knownSymbols.has(record.symbol)) newSymbols.add(record.symbol)
    }
    for (const symbol of newSymbols) batch.put(this.#prefixes.symbols, Buffer.from(symbol, 'utf8'), EMPTY)
    let indexEntries: IndexEntry[]
    try {
      indexEntries = await bucketIndexUpdates(this.#buckets, records, values, this.#format >= 2)
      for (const { key, value } of indexEntries) batch.put(this.#prefixes.buckets, key, value)
      // A snapshot taken from here on may hold the batch before the caches do.
      this.#committing = true
      await batch.write(this.#db, this.#options.sync)
    } catch (err) {
      // A failed write may still have reached the disk: the caches can no longer vouch for what they hold.
      if (this.#committing) this.#resetCaches()
      throw toStorageError(err, 'write the records')
    } finally {
      // One synchronous step after the commit (or its failure), so readers see all of the batch or none of it.
      this.#committing = false
    }
    for (const symbol of newSymbols) this.#knownSymbols.add(symbol)
    if (newSymbols.size > 0) this.#sortedSymbols = [...this.#knownSymbols].sort(compareIds)
    this.#tails?.apply(rowsBySymbol, newSymbols)
    this.#heads?.apply(this.#headUpdates(indexEntries, batchRows))
    this.#appliedBatches++
    return records.length
  }

  /** The committed batch's new heads at the cached levels, as rows sharing the batch's key and value bytes. */
  #headUpdates(entries: readonly IndexEntry[], rows: readonly StoredRow[]): HeadUpdate[] {
    if (this.#heads === undefined || this.#heads.size === 0) return []
    const updates: HeadUpdate[] = []
    for (const { symbol, level, bucket, position } of entries) {
      if (isCopyLevel(level)) updates.push({ symbol, level, bucket, row: rows[position] as StoredRow })
    }
    return updates
  }

  #resetCaches(): void {
    this.#appliedBatches++
    this.#tails = this.#options.recordsPerSymbol > 0 ? new HotTails(this.#options.recordsPerSymbol) : undefined
    this.#heads?.clear()
  }

  /**
   * Answers a validated query from the hot tails when they hold all it
   * needs (loading missing tails first), otherwise from disk; a several-tokens
   * query on disk reads one snapshot.
   */
  async #answer(query: PriceQuery): Promise<PriceAnswer> {
    this.#assertOpen()
    const tails = this.#tails
    if (tails !== undefined) {
      const symbols = query.kind !== 'several' ? [query.symbol] : query.symbols === 'all' ? this.#sortedSymbols : query.symbols
      let view = tails.capture(symbols, this.#knownSymbols)
      if (view === undefined) {
        await this.#loadTails(tails, symbols)
        view = tails.capture(symbols, this.#knownSymbols)
      }
      if (view?.canAnswer(query)) return executeQuery(query, view, this.limits)
      // A range may still find the end of its last bucket in the tail, as of the same batches.
      if (view !== undefined && query.kind === 'range') {
        const tailsAt = { view, applied: this.#appliedBatches }
        return this.#read('answer the query', (source) => executeQuery(query, source, this.limits), true, tailsAt)
      }
    }
    // Several tokens and bucket-index sampling make more than one read: pin them to one snapshot.
    return this.#read('answer the query', (source) => executeQuery(query, source, this.limits), query.kind !== 'latest')
  }

  async #loadTails(tails: HotTails, symbols: readonly string[]): Promise<void> {
    const missing = symbols.filter((symbol) => this.#knownSymbols.has(symbol) && !tails.has(symbol))
    await this.#read('load the newest records', async (source) => {
      for (let start = 0; start < missing.length; start += TAIL_LOAD_CONCURRENCY) {
        await Promise.all(missing.slice(start, start + TAIL_LOAD_CONCURRENCY).map(async (symbol) => {
          const version = tails.version(symbol)
          const rows: StoredRow[] = []
          for await (const batch of source.scan(symbol, { reverse: true, limit: tails.perSymbol })) rows.push(...batch)
          tails.install(symbol, version, rows)
        }))
      }
    })
  }

  /**
   * Runs a read with a scan source; `pinned` reads share one explicit
   * snapshot. `tailsAt`: hot tails captured after `applied` batches, for the
   * source to use if the snapshot shows the same batches.
   */
  async #read<T>(action: string, run: (source: LevelScanSource) => Promise<T>, pinned = false, tailsAt?: TailsAt): Promise<T> {
    const source = this.#openSource(pinned, tailsAt)
    try {
      return await run(source)
    } catch (err) {
      throw toStorageError(err, action)
    } finally {
      await source.close()
    }
  }

  #openSource(pinned: boolean, tailsAt?: TailsAt): LevelScanSource {
    this.#assertOpen()
    const snapshot = pinned && this.#db.supports.explicitSnapshots ? this.#db.snapshot() : undefined
    // The caches match a snapshot taken while no batch is between the database and the caches.
    const heads = snapshot !== undefined && this.#heads !== undefined ? { cache: this.#heads, epoch: this.#committing ? -1 : this.#heads.epoch } : undefined
    const tails = snapshot !== undefined && !this.#committing && tailsAt?.applied === this.#appliedBatches ? tailsAt.view : undefined
    return new LevelScanSource({ prices: this.#prices, symbols: this.#symbols, buckets: this.#buckets }, this.#options.provider, {
      snapshot, heads, tails, directories: this.#format >= 2,
    })
  }

  #assertOpen(): void {
    if (this.#status !== 'open') throw new PriceStoreError('PRICE_NOT_OPEN', `the store is ${this.#status}, not open`)
  }
}
