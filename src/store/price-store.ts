import type { AbstractLevel } from 'abstract-level'
import { ClassicLevel } from 'classic-level'
import { PriceStoreError, isPriceStoreError } from '../errors.js'
import { executePlan, executePlanDeferred, streamBuckets } from '../engine/execute.js'
import type { DeferredAnswer } from '../engine/deferred-answer.js'
import { costOf } from '../engine/cost.js'
import { parseQuery } from '../engine/parse-query.js'
import { checkPlan, planQuery, type QueryPlan } from '../engine/plan.js'
import { releaseOnAbort, throwIfAborted } from '../rules/abort.js'
import { typedAnswer } from '../engine/answer-form.js'
import { signalOf, toCandlesQuery, toExportSelection, toLatestQuery, toRangeQuery, toSeveralQuery, toTwapQuery } from '../engine/typed-queries.js'
import type { CandleOptions, ExportOptions, FillOptions, LatestOptions, QueryOptions, RangeOptions, SeveralOptions, TwapOptions } from '../engine/typed-queries.js'
import { compareIds } from '../rules/compare-ids.js'
import { describeLog, logKey, periodOf, readChunkPeriod, readLogKey, symbolKey } from '../keys/key-layout.js'
import { LogEntryWriter, readLogEntry } from '../keys/log-codec.js'
import type { LogPlace } from '../keys/log-codec.js'
import { writeValue } from '../keys/value-codec.js'
import type { StoredRecord } from '../records/stored-record.js'
import { validateBatch } from '../records/validate-batch.js'
import type {
  Candle, FilledPoint, Limits, NewPriceRecord, PriceAnswer, PriceQuery, PriceRecord, Provider, QueryParams, SampledRecord, Twap, TypedAnswer,
} from '../types.js'
import type { ScanSource } from '../engine/scan-source.js'
import { backupStore } from './backup.js'
import type { BackupOptions, BackupResult } from './backup.js'
import { exportRecords } from './export.js'
import { CommitJournal } from './commit-journal.js'
import { rowsInCommitOrder } from './commit-notice.js'
import { checkFormat } from './format.js'
import type { HotTails } from './hot-tails.js'
import { OpenArea } from './open-area.js'
import { PruneRun, Pruner, toPruneRequest } from './pruner.js'
import type { PruneOptions, PruneResult } from './pruner.js'
import { Retention } from './retention.js'
import type { OpenWrite } from './open-area.js'
import { ReadState } from './read-view.js'
import type { BytesSublevel, HourSpan, ReadSublevels, ReadView } from './read-view.js'
import { RootBatch, prefixOf } from './root-batch.js'
import { Row } from './row.js'
import { Sealer } from './sealer.js'
import { diskUsage, readStats } from './stats.js'
import type { StoreStats } from './stats.js'
import { resolveOptions } from './store-options.js'
import type { PriceStoreOptions, ResolvedOptions } from './store-options.js'
import { toStorageError } from './storage-errors.js'
import { Watch } from './watch.js'
import { WatchHub } from './watch-hub.js'
import { resolveWatchOptions } from './watch-options.js'
import type { WatchIterator, WatchOptions } from './watch-options.js'

/**
 * The well-known symbol `await using` calls, present from Node 20.4. On an
 * older runtime (no polyfill loaded first) the method is keyed by a private
 * symbol instead of the property name "undefined", and `close()` remains.
 */
const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? (Symbol('Symbol.asyncDispose') as typeof Symbol.asyncDispose)

/** Where a store is in its life. Queries and writes need `'open'`. */
export type StoreStatus = 'opening' | 'open' | 'closing' | 'closed'

/** What {@link PriceStore.putBatch} wrote: the records of the batch, and the position of its commit. */
export interface BatchCommit {
  /** Records written (as {@link PriceStore.putMany} counts them). */
  readonly stored: number
  /** The batch's commit position (see {@link PriceStore.position}). */
  readonly position: number
}

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
  readonly #levels: ReadSublevels & { readonly log: BytesSublevel; readonly symbols: BytesSublevel; readonly journal: BytesSublevel }
  readonly #meta: AbstractLevel<any, string, string>
  /** Each sublevel's key prefix in the root database, for writing batches there directly. */
  readonly #prefixes: {
    readonly log: Uint8Array; readonly chunks: Uint8Array; readonly heads: Uint8Array; readonly symbols: Uint8Array; readonly journal: Uint8Array
  }
  /** What queries read from memory, and the rule for mixing it with the disk. */
  readonly #state: ReadState
  /** Symbols already in the symbol index, so a batch only adds new ones. */
  readonly #knownSymbols = new Set<string>()
  #status: StoreStatus = 'closed'
  /** Writes and seals run one after another, so index bookkeeping never races. */
  #writeQueue: Promise<unknown> = Promise.resolve()
  /** Numbers each batch (its commit position, also its log entries' sequence) and keeps the journal watchers replay. */
  readonly #journal: CommitJournal
  /** The live watchers, told of each commit in the step that makes it visible. */
  readonly #hub = new WatchHub()
  /** Moves closed hours from the log into chunks, in the write queue. */
  readonly #sealer: Sealer
  /** Removes old records, in the write queue. */
  readonly #pruner: Pruner
  /** Prunes run one after another, each in turns of the write queue. */
  #pruning: Promise<unknown> = Promise.resolve()
  /** The `retention` option at work, while open. */
  #retention: Retention | undefined
  /** Records committed since the store was opened (see {@link PriceStore.recordsWritten}). */
  #recordsWritten = 0
  /** When the last commit since opening landed (ms since the epoch). */
  #lastCommitAt: number | undefined

  /**
   * Wraps any abstract-level database (e.g. `new MemoryLevel()`); call
   * {@link PriceStore.open | open()} before use. The store keeps its data in
   * sublevels with their own encodings, so the database can have any options.
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS`
   */
  constructor(db: AnyLevel, options: PriceStoreOptions) {
    this.#options = resolveOptions(options)
    this.#db = db
    if ((db.supports as { getSync?: boolean }).getSync !== true || db.supports.explicitSnapshots !== true) {
      throw new PriceStoreError('PRICE_INVALID_OPTIONS', 'the database must support getSync() and explicit snapshots (abstract-level 3, e.g. classic-level or memory-level)', {
        details: { field: 'db' },
      })
    }
    try {
      const bytes = (name: string): BytesSublevel =>
        db.sublevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as BytesSublevel
      this.#levels = { log: bytes('l'), chunks: bytes('c'), heads: bytes('h'), symbols: bytes('s'), journal: bytes('j') }
      this.#meta = db.sublevel<string, string>('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' }) as unknown as AbstractLevel<any, string, string>
      const { log, chunks, heads, symbols, journal } = this.#levels
      this.#prefixes = { log: prefixOf(log), chunks: prefixOf(chunks), heads: prefixOf(heads), symbols: prefixOf(symbols), journal: prefixOf(journal) }
    } catch (err) {
      throw new PriceStoreError(
        'PRICE_INVALID_OPTIONS',
        'the database cannot hold binary keys and values (e.g. memory-level with storeEncoding "utf8"); use one that stores buffers or views',
        { cause: err, details: { field: 'db' } },
      )
    }
    this.#state = new ReadState({
      provider: this.#options.provider,
      recordsPerSymbol: this.#options.recordsPerSymbol,
      headBytes: this.#options.headBytes,
      chunkBytes: this.#options.chunkBytes,
    })
    this.#journal = new CommitJournal(this.#levels.journal, this.#prefixes.journal, this.#options.journal)
    this.#sealer = new Sealer({
      db, levels: this.#levels, state: this.#state, provider: this.#options.provider, prefixes: this.#prefixes,
      sync: this.#options.sync, openBytes: this.#options.openBytes,
    })
    this.#pruner = new Pruner({
      db, levels: this.#levels, state: this.#state, sealer: this.#sealer, provider: this.#options.provider, prefixes: this.#prefixes,
      sync: this.#options.sync, knownSymbols: this.#knownSymbols,
    })
  }

  /**
   * Opens a store on a directory (LevelDB via classic-level, created when
   * missing) or on an abstract-level database.
   * @throws PriceStoreError `PRICE_LOCKED` when another process holds the directory,
   *   `PRICE_UNSUPPORTED_FORMAT`, `PRICE_INVALID_OPTIONS`, `PRICE_STORAGE_ERROR`
   */
  static async open(location: string | AnyLevel, options: PriceStoreOptions): Promise<PriceStore> {
    // Check the options before creating a database: an unopened ClassicLevel opens itself and takes the lock.
    const { maxOpenFiles } = resolveOptions(options)
    const db = typeof location === 'string' ? new ClassicLevel(location, { ...CLASSIC_LEVEL_OPTIONS, maxOpenFiles }) : location
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
   * Opens the database, checks its format version and provider (recording
   * them in a new database) and replays the unsealed records of its log.
   * Opening an open store does nothing.
   * @throws PriceStoreError `PRICE_LOCKED`, `PRICE_UNSUPPORTED_FORMAT`, `PRICE_PROVIDER_MISMATCH`, `PRICE_STORAGE_ERROR`
   */
  async open(): Promise<void> {
    if (this.#status === 'open') return
    if (this.#status !== 'closed') throw new PriceStoreError('PRICE_NOT_OPEN', `cannot open a store that is ${this.#status}`)
    this.#status = 'opening'
    try {
      await this.#db.open({ createIfMissing: true })
      // Closing a database closes its sublevels too, and reopening it does not reopen them.
      await Promise.all([...Object.values(this.#levels), this.#meta].map((sublevel) => sublevel.open()))
      await checkFormat(this.#meta, this.#db, this.#options.provider)
      this.#knownSymbols.clear()
      this.#recordsWritten = 0
      this.#lastCommitAt = undefined
      for (const key of await this.#levels.symbols.keys().all()) this.#knownSymbols.add(Buffer.from(key).toString('utf8'))
      // The database may have changed while the store was closed: start from what it holds now.
      const { area, nextSequence } = await this.#replayLog()
      await this.#journal.load(nextSequence)
      const sealedHours = await this.#sealedHours()
      this.#state.load(area, [...this.#knownSymbols].sort(compareIds), sealedHours)
      this.#status = 'open'
      // Hours a crash left unsealed are sealed in the background, as after a batch.
      this.#enqueueSeal()
      const { retentionDays } = this.#options
      this.#retention = retentionDays === undefined ? undefined : new Retention(retentionDays)
      this.#applyRetention(Math.max(sealedHours.last, periodOf(this.#sealer.horizon)))
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
   * Waits for pending writes, seals every open hour (so a closed store is
   * all chunks and reopens without replaying its log), then closes the
   * database. Closing a closed store does nothing.
   */
  async close(): Promise<void> {
    if (this.#status === 'closed' || this.#status === 'closing') return
    this.#status = 'closing'
    try {
      await this.#writeQueue
      this.#hub.end()
      // A failed seal leaves its hours in the log, which the next open replays: nothing is lost.
      await this.#sealer.runAll().catch(() => {})
      await this.#db.close()
    } finally {
      this.#status = 'closed'
    }
  }

  /**
   * Closes the store (as {@link PriceStore.close}) when a scope declared
   * with `await using` ends, so a store cannot be left open by an early
   * return or a throw:
   * @example
   * await using store = await PriceStore.open('./data/prices', { provider })
   */
  async [asyncDispose](): Promise<void> {
    await this.close()
  }

  /**
   * Writes one record. See {@link PriceStore.putMany}.
   * @throws PriceStoreError `PRICE_INVALID_RECORD`, `PRICE_NOT_OPEN`, `PRICE_STORAGE_ERROR`
   */
  async put(record: NewPriceRecord): Promise<void> {
    await this.putMany([record])
  }

  /**
   * Validates and writes a batch of records atomically: if any record is
   * bad, nothing is written. A record with the same symbol, timestamp and id
   * as a stored one replaces it. Resolves with the number of records written.
   * The parameter is typed for TypeScript callers; the same rules are
   * checked at run time, so untyped input (JSON) may be passed as it is.
   * An error thrown by the iterable itself passes through unchanged.
   * @throws PriceStoreError `PRICE_INVALID_RECORD` (with `details.index` and
   *   `details.field`, or `details.parameter` `records` when the batch is not
   *   an iterable), `PRICE_NOT_OPEN`, `PRICE_STORAGE_ERROR`
   */
  async putMany(records: Iterable<NewPriceRecord>): Promise<number> {
    return (await this.putBatch(records)).stored
  }

  /**
   * {@link PriceStore.putMany}, resolving with the batch's commit position as
   * well: the position `watch` and {@link PriceStore.position} give this very
   * commit, which reading `position` after `putMany` cannot promise when
   * other batches are written meanwhile. An empty batch commits nothing: its
   * `position` is then the newest commit's.
   * @throws PriceStoreError as {@link PriceStore.putMany}
   * @example
   * const { stored, position } = await store.putBatch(records)
   */
  async putBatch(records: Iterable<NewPriceRecord>): Promise<BatchCommit> {
    this.#assertOpen()
    const stored = validateBatch(records, this.#options.provider)
    if (stored.length === 0) return { stored: 0, position: this.position }
    const write = this.#writeQueue.then(() => this.#writeBatch(stored))
    this.#writeQueue = write.catch(() => {})
    this.#enqueueSeal()
    return write
  }

  /**
   * The latest `limit` records of a symbol, newest first; with `to` (and/or
   * `from`), the records as of that time. An unknown symbol gives `[]`.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`,
   *   `PRICE_ABORTED` (`options.signal`)
   */
  async latest(symbol: string, options: LatestOptions = {}): Promise<PriceRecord[]> {
    return this.#answer(this.#plan(toLatestQuery(symbol, options, this.limits)), signalOf(options)) as Promise<PriceRecord[]>
  }

  /**
   * The latest record of each symbol (every symbol in the store when
   * `symbols` is left out), within the optional window, keyed by symbol.
   * Symbols with no record in the window are left out. All symbols are read
   * from one snapshot.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`,
   *   `PRICE_ABORTED` (`options.signal`)
   */
  async several(symbols?: readonly string[], options: SeveralOptions = {}): Promise<Record<string, PriceRecord>> {
    return this.#answer(this.#plan(toSeveralQuery(symbols, options, this.limits)), signalOf(options)) as Promise<Record<string, PriceRecord>>
  }

  /**
   * One record per `interval` bucket of `from..to` (both inclusive), the
   * bucket's latest, oldest first, each with `minutes`; then `offset` and
   * `limit`. With `fill: 'prev'`, one point per bucket instead, an empty
   * bucket carrying the latest record before it (see docs/semantics.md).
   * Refuses answers over `maxRangePoints`.
   * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE`, `PRICE_INVALID_INTERVAL`, `PRICE_INVALID_RANGE`,
   *   `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_NOT_OPEN`, `PRICE_ABORTED` (`options.signal`)
   */
  range(symbol: string, options: RangeOptions & { readonly fill?: never; readonly maxAge?: never }): Promise<SampledRecord[]>
  range(symbol: string, options: RangeOptions & { readonly fill: 'prev'; readonly maxAge?: number }): Promise<FilledPoint[]>
  range(symbol: string, options: RangeOptions & FillOptions): Promise<SampledRecord[] | FilledPoint[]>
  async range(symbol: string, options: RangeOptions & FillOptions): Promise<SampledRecord[] | FilledPoint[]> {
    return this.#answer(this.#plan(toRangeQuery(symbol, options, this.limits)), signalOf(options)) as Promise<SampledRecord[] | FilledPoint[]>
  }

  /**
   * Candles of `symbol` over `from..to`: per `interval` bucket the open,
   * high, low and close, each naming its record, and the count; gap-filled
   * with `fill: 'prev'`. Then `offset` and `limit`; refuses answers over
   * `maxRangePoints`.
   * @throws PriceStoreError as {@link PriceStore.range}
   * @example
   * await store.candles('BTC', { from, to, interval: 3_600_000 }) // hourly candles
   */
  async candles(symbol: string, options: CandleOptions): Promise<Candle[]> {
    return this.#answer(this.#plan(toCandlesQuery(symbol, options, this.limits)), signalOf(options)) as Promise<Candle[]>
  }

  /**
   * The time-weighted average value of each symbol (every symbol when
   * `symbols` is left out) over `from..to`, keyed by symbol, the record in
   * force at `from` carried in; symbols with no record in force are left out.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`,
   *   `PRICE_ABORTED` (`options.signal`)
   */
  async twap(symbols: readonly string[] | undefined, options: TwapOptions): Promise<Record<string, Twap>> {
    return this.#answer(this.#plan(toTwapQuery(symbols, options, this.limits)), signalOf(options)) as Promise<Record<string, Twap>>
  }

  /**
   * The range form as a stream, without the `maxRangePoints` cap, read from
   * one consistent view; gap-filled points with `fill: 'prev'`. Arguments
   * are checked when it is called. With `signal`, an abort makes the next
   * pull reject with `PRICE_ABORTED` and releases the view at once, even
   * if the stream is never pulled again.
   * @throws PriceStoreError (synchronously) for bad arguments or a closed store
   */
  rangeStream(symbol: string, options: StreamOptions<RangeOptions> & { readonly fill?: never; readonly maxAge?: never }): AsyncIterable<SampledRecord>
  rangeStream(symbol: string, options: StreamOptions<RangeOptions> & { readonly fill: 'prev'; readonly maxAge?: number }): AsyncIterable<FilledPoint>
  rangeStream(symbol: string, options: StreamOptions<RangeOptions> & FillOptions): AsyncIterable<SampledRecord | FilledPoint>
  rangeStream(symbol: string, options: StreamOptions<RangeOptions> & FillOptions): AsyncIterable<SampledRecord | FilledPoint> {
    return this.#stream(toRangeQuery(symbol, streamOptions(options), this.limits), signalOf(options), 'stream a price range') as AsyncIterable<SampledRecord | FilledPoint>
  }

  /**
   * The candles form as a stream, without the `maxRangePoints` cap, read
   * from one consistent view; `signal` as for {@link PriceStore.rangeStream}.
   * @throws PriceStoreError (synchronously) for bad arguments or a closed store
   */
  candleStream(symbol: string, options: StreamOptions<CandleOptions>): AsyncIterable<Candle> {
    return this.#stream(toCandlesQuery(symbol, streamOptions(options), this.limits), signalOf(options), 'stream candles') as AsyncIterable<Candle>
  }

  /**
   * Answers a `GET /prices` parameter set exactly as the HTTP service does:
   * an array for single-symbol forms, an object keyed by symbol otherwise.
   * @throws PriceStoreError with a `PRICE_INVALID_*`, `PRICE_UNSUPPORTED_PROVIDER`,
   *   `PRICE_RANGE_TOO_LARGE`, `PRICE_NOT_OPEN` or `PRICE_ABORTED` (`options.signal`) code
   */
  async query(params: QueryParams, options: QueryOptions = {}): Promise<PriceAnswer> {
    return this.#answer(this.plan(params), signalOf(options))
  }

  /**
   * Answers a `GET /prices` parameter set, or a plan made by
   * {@link PriceStore.plan}, as {@link PriceStore.query} does, but with the
   * answer's form named: switch on `form` and `answer` has its exact type.
   * @throws PriceStoreError as {@link PriceStore.query}
   * @example
   * const result = await store.ask(new URLSearchParams(search))
   * if (result.form === 'candles') draw(result.answer) // Candle[]
   */
  async ask(request: QueryParams | QueryPlan, options: QueryOptions = {}): Promise<TypedAnswer> {
    const plan = isPlanShaped(request) ? request : this.plan(request)
    checkPlan(plan)
    return typedAnswer(plan.query, await this.#answer(plan, signalOf(options)))
  }

  /**
   * Compiles a `GET /prices` parameter set into a plan without reading
   * anything: the form, the reads it makes and its cost (`heavy`), which a
   * host can act on before running it with {@link PriceStore.run}.
   * @throws PriceStoreError with a `PRICE_INVALID_*` or `PRICE_UNSUPPORTED_PROVIDER` code
   */
  plan(params: QueryParams): QueryPlan {
    return this.#plan(parseQuery(params, this.#options))
  }

  /**
   * Answers a plan made by {@link PriceStore.plan}.
   * @throws PriceStoreError `PRICE_INVALID_QUERY` for anything else, and as {@link PriceStore.query}
   */
  async run(plan: QueryPlan, options: QueryOptions = {}): Promise<PriceAnswer> {
    checkPlan(plan)
    return this.#answer(plan, signalOf(options))
  }

  /**
   * The work a plan will do, in records: 1 for each record it returns and
   * 1/8 for each it only reads, with the records a range covers estimated
   * from the store's own counts (a few heads entries, no records read).
   * The HTTP service admits queries by it. A range whose answer is sure to
   * pass the cap is refused here, before any record is read.
   * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE`, `PRICE_INVALID_QUERY` for anything but a plan, `PRICE_NOT_OPEN`
   * @example
   * const plan = store.plan(params)
   * if (store.cost(plan) > 5_000) queueForLater(plan)
   */
  cost(plan: QueryPlan): number {
    checkPlan(plan)
    this.#assertOpen()
    const kind = plan.query.kind
    if (kind === 'latest' || kind === 'several') return costOf(plan, { symbols: this.#state.symbols, records: () => 0 })
    const view = this.#view()
    try {
      return costOf(plan, {
        symbols: this.#state.symbols,
        records: (symbol, from, to) => view.estimateRecords(symbol, from, to),
        bucketsSurelyHeld: (symbol, grid) => view.bucketsSurelyHeld(symbol, grid),
        rowsOnGrid: (_symbol, grid) => view.headsRead(grid),
      })
    } finally {
      void view.close().catch(() => {})
    }
  }

  /**
   * Answers a plan as {@link PriceStore.run} does, except that the latest-N
   * and range forms give a {@link DeferredAnswer}: their records are chosen,
   * counted and checked against the cap, then decoded only as they are read.
   * The HTTP service streams large answers from it, so neither the decoded
   * records nor their JSON are ever whole in memory.
   * @throws PriceStoreError as {@link PriceStore.run}; reading an item may throw `PRICE_CORRUPT_VALUE`
   */
  async runDeferred(plan: QueryPlan, options: QueryOptions = {}): Promise<PriceAnswer | DeferredAnswer> {
    checkPlan(plan)
    return this.#answer(plan, signalOf(options), executePlanDeferred)
  }

  /**
   * The position of the newest commit (0 before the first): every batch
   * `putMany` writes is one commit, numbered one more than the one before,
   * across restarts. `watch({ after: store.position })` starts from now.
   */
  get position(): number {
    return this.#journal.head
  }

  /**
   * Records committed since the store was opened, by every writer of this
   * store (each `putMany`/`put` counts its records once committed; a failed
   * batch counts nothing). A counter for monitoring, read without I/O: it
   * starts again from 0 at each `open()`.
   */
  get recordsWritten(): number {
    return this.#recordsWritten
  }

  /**
   * When the newest commit since the store was opened landed (ms since the
   * epoch, this process's clock), or `undefined` before the first one.
   */
  get lastCommitAt(): number | undefined {
    return this.#lastCommitAt
  }

  /**
   * The records each commit writes, in commit order, as they are committed:
   * with `after`, first the commits after that position replayed from the
   * store's journal, then the live ones, with no gap and no repeat. Ends
   * when the store closes or the loop is left; an abort of `signal` rejects
   * the pull with `PRICE_ABORTED`. Arguments are checked when it is called.
   * See docs/api.md for the items (`records`, `progress`, `reset`, `overflow`).
   * @throws PriceStoreError (synchronously) `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_NOT_OPEN`
   * @example
   * for await (const item of store.watch({ symbols: ['BTC'], after: lastSeen })) {
   *   if (item.type === 'records') show(item.records)
   *   lastSeen = item.position
   * }
   */
  watch(options: WatchOptions = {}): WatchIterator {
    const resolved = resolveWatchOptions(options, this.limits)
    this.#assertOpen()
    return new Watch({
      start: (subscriber) => {
        if (this.#status !== 'open') return undefined
        const view = this.#view()
        this.#hub.subscribe(subscriber)
        return { view, head: this.#journal.head }
      },
      journal: this.#levels.journal,
      hub: this.#hub,
    }, resolved, this.#journal.head)
  }

  /**
   * Removes every record with `timestamp < before` (of `symbol`, or of every
   * symbol) and never one at or after it; resolves with what was removed.
   * Runs in steps between writes, each one atomic write (an hour's chunks),
   * so a crash leaves a consistent store holding everything at or after
   * `before`, where pruning again finishes the work. The open hours it
   * reaches are sealed first. A symbol left with no record leaves
   * `symbols()`. Records written while it runs may survive it. Prunes run one
   * at a time; `close()` stops one between steps (`PRICE_NOT_OPEN`).
   * @throws PriceStoreError `PRICE_INVALID_RANGE` (`before`), `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`,
   *   `PRICE_NOT_OPEN`, `PRICE_ABORTED` (`options.signal`), `PRICE_STORAGE_ERROR`, `PRICE_CORRUPT_VALUE`
   * @example
   * await store.prune({ before: Date.parse('2024-01-01T00:00:00Z') }) // { records, hours, symbols }
   */
  async prune(options: PruneOptions): Promise<PruneResult> {
    this.#assertOpen()
    const request = toPruneRequest(options)
    const pruned = this.#pruning.then(() => this.#runPrune(new PruneRun(request)))
    this.#pruning = pruned.catch(() => {})
    return pruned
  }

  /** Every symbol with at least one record, in UTF-8 byte order. */
  async symbols(): Promise<string[]> {
    this.#assertOpen()
    return [...this.#state.symbols]
  }

  /**
   * Every stored record (of `symbols`, within `from..to` when given), read
   * from one consistent view: each symbol's records oldest first in
   * (timestamp, id) order, the symbols in the store's order, each record as
   * {@link PriceStore.latest} returns it. Nothing is sampled or capped. The
   * view is taken at the first pull and released when the iteration ends,
   * is left, fails or `signal` aborts (see {@link PriceStore.rangeStream}).
   * @throws PriceStoreError (synchronously) `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_RANGE`,
   *   `PRICE_INVALID_QUERY`, `PRICE_NOT_OPEN`; on a pull, `PRICE_ABORTED`
   * @example
   * for await (const record of store.export({ symbols: ['BTC'] })) out.write(`${JSON.stringify(record)}\n`)
   */
  export(options: ExportOptions = {}): AsyncIterable<PriceRecord> {
    const selection = toExportSelection(options)
    const signal = signalOf(options)
    return this.#viewStream('export the records', signal, (view) => exportRecords(view, selection, signal))
  }

  /**
   * Counts and facts about the store from one consistent view: records and
   * symbols, each symbol's record count and first and last timestamp, the
   * records not sealed yet, the bytes on disk, the format version and the
   * provider. Reads no record: sealed hours are counted from the heads index.
   * @throws PriceStoreError `PRICE_NOT_OPEN`, `PRICE_ABORTED` (`options.signal`), `PRICE_CORRUPT_VALUE`
   */
  async stats(options: QueryOptions = {}): Promise<StoreStats> {
    const signal = signalOf(options)
    this.#assertOpen()
    const stats = await this.#read('read the statistics', (view) => readStats(view, this.#levels.heads, this.#options.provider, signal))
    return Object.freeze({ ...stats, disk: await diskUsage(this.#db) })
  }

  /**
   * Writes a consistent copy of the store, from one snapshot, into a new
   * store directory `dir` (classic-level) while this store goes on serving
   * and taking writes. The copy is written into `DIR.partial`, checked by
   * opening it, and renamed to `dir` only when complete.
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (parameter `dir`: it exists and is
   *   not an empty directory), `PRICE_NOT_OPEN`, `PRICE_ABORTED`, `PRICE_STORAGE_ERROR`
   */
  async backup(dir: string, options: BackupOptions = {}): Promise<BackupResult> {
    const signal = signalOf(options)
    this.#assertOpen()
    const provider = this.#options.provider
    const meta = this.#db.sublevel<Uint8Array, Uint8Array>('m', { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as BytesSublevel
    const { symbols, heads, log, chunks } = this.#levels
    return this.#read('back up the store', (view) => backupStore({
      view, provider, levels: { meta, symbols, heads, log, chunks },
      openCopy: (location) => PriceStore.open(location, { provider: { name: provider.name, id: provider.id, publicKey: provider.publicKey } }),
    }, dir, { ...options, ...(signal === undefined ? {} : { signal }) }))
  }

  // No open check here: close() waits for queued writes, which still run while it is 'closing'.
  async #writeBatch(records: readonly StoredRecord[]): Promise<BatchCommit> {
    const entries = new Map<number, LogEntryWriter>()
    const newSymbols = new Set<string>()
    let horizon = this.#sealer.horizon
    for (const record of records) {
      const period = periodOf(record.timestamp)
      let entry = entries.get(period)
      if (entry === undefined) entries.set(period, (entry = new LogEntryWriter()))
      entry.add(record.symbol, record.timestamp, record.id, (writer) => writeValue(writer, record))
      if (!this.#knownSymbols.has(record.symbol)) newSymbols.add(record.symbol)
      if (record.timestamp > horizon) horizon = record.timestamp
    }
    const batch = new RootBatch()
    // The journal entry goes in the records' own atomic write: after a crash it lists exactly the batches stored.
    const position = this.#journal.stage(batch, records)
    const writes: OpenWrite[] = []
    for (const [period, entry] of entries) {
      const key = logKey(period, position)
      const { bytes, places } = entry.finish()
      batch.put(this.#prefixes.log, key, bytes)
      writes.push(this.#openWrite(period, position, key, bytes, places))
    }
    for (const symbol of newSymbols) batch.put(this.#prefixes.symbols, symbolKey(symbol), EMPTY)
    try {
      await batch.write(this.#db, this.#options.sync)
    } catch (err) {
      // LevelDB may have committed it: the caches can no longer vouch for what they hold.
      this.#state.writeFailed()
      const error = toStorageError(err, 'write the records')
      // Watchers cannot tell whether this commit landed: they end, and a resumed watch replays what did.
      this.#hub.end(error)
      throw error
    }
    // One synchronous step after the commit, so readers see all of the batch or none of it.
    for (const symbol of newSymbols) this.#knownSymbols.add(symbol)
    const symbols = newSymbols.size > 0 ? [...this.#knownSymbols].sort(compareIds) : this.#state.symbols
    this.#state.applyBatch(writes, rowsBySymbol(writes), newSymbols, symbols)
    this.#journal.committed(position)
    this.#recordsWritten += records.length
    this.#lastCommitAt = Date.now()
    this.#hub.publish(position, () => rowsInCommitOrder(records, writes))
    this.#sealer.horizon = horizon
    this.#applyRetention(periodOf(horizon))
    return { stored: records.length, position }
  }

  /** A prune's turns, queued one after another behind the writes queued meanwhile. */
  async #runPrune(run: PruneRun): Promise<PruneResult> {
    const { signal } = run.request
    for (;;) {
      throwIfAborted(signal)
      if (this.#status !== 'open') throw new PriceStoreError('PRICE_NOT_OPEN', `the store is ${this.#status}: the prune stopped (what it removed stays removed)`)
      const turn = this.#writeQueue.then(() => this.#pruner.turn(run))
      this.#writeQueue = turn.catch(() => {})
      const done = await turn
      run.request.onProgress?.(run.result())
      if (done) return run.result()
    }
  }

  /** Starts the prune the `retention` option makes due now that the store holds a record in `newestHour`. */
  #applyRetention(newestHour: number): void {
    const retention = this.#retention
    const before = retention?.due(newestHour)
    if (retention === undefined || before === undefined) return
    // In the background: a failure (or close) leaves the records for the next attempt.
    this.prune({ before }).catch(() => retention.failed())
  }

  /** One log entry's records as open rows (views into the entry's bytes), by symbol; parsed when `places` are not known. */
  #openWrite(period: number, sequence: number, key: Buffer, entry: Buffer, places?: readonly LogPlace[]): OpenWrite {
    const rows = new Map<string, Row[]>()
    const name = (): string => describeLog(period, sequence)
    const add = (symbol: string, timestamp: number, idStart: number, idEnd: number, valueStart: number, valueEnd: number): void => {
      let list = rows.get(symbol)
      if (list === undefined) rows.set(symbol, (list = []))
      list.push(new Row(symbol, timestamp, entry, idStart, idEnd, valueStart, valueEnd, name, this.#options.provider))
    }
    if (places === undefined) readLogEntry(entry, add)
    else for (const place of places) add(place.symbol, place.timestamp, place.idStart, place.idEnd, place.valueStart, place.valueEnd)
    return { period, logKey: key, bytes: entry.length, rows }
  }

  /** The first and last hour with a chunk: chunk keys start with the hour, so these are the first and last keys. */
  async #sealedHours(): Promise<HourSpan> {
    const [first] = await this.#levels.chunks.keys({ limit: 1 }).all()
    const [last] = await this.#levels.chunks.keys({ limit: 1, reverse: true }).all()
    if (first === undefined || last === undefined) return { first: Number.POSITIVE_INFINITY, last: Number.NEGATIVE_INFINITY }
    return { first: readChunkPeriod(first), last: readChunkPeriod(last) }
  }

  /** Reads the log into a new open area: the records written and not yet sealed, in commit order; and the next free sequence. */
  async #replayLog(): Promise<{ area: OpenArea; nextSequence: number }> {
    const writes: OpenWrite[] = []
    let nextSequence = 0
    this.#sealer.horizon = 0
    for await (const [key, entry] of this.#levels.log.iterator()) {
      let write: OpenWrite
      try {
        const { period, sequence } = readLogKey(key)
        write = this.#openWrite(period, sequence, Buffer.from(key), Buffer.from(entry))
        nextSequence = Math.max(nextSequence, sequence + 1)
      } catch (err) {
        const name = key.length === 12 ? describeLog(readLogKey(key).period, readLogKey(key).sequence) : `log entry 0x${Buffer.from(key).toString('hex')}`
        throw new PriceStoreError('PRICE_CORRUPT_VALUE', `${name} cannot be decoded: ${(err as Error).message}`, { cause: err, details: { key: name } })
      }
      writes.push(write)
      for (const rows of write.rows.values()) for (const row of rows) this.#sealer.horizon = Math.max(this.#sealer.horizon, row.timestamp)
    }
    // One new area for the whole log: entries are taken in key order, which within an hour is commit order.
    return { area: OpenArea.EMPTY.withWrites(writes), nextSequence }
  }

  /** Queues a turn of sealing after the writes queued so far. */
  #enqueueSeal(): void {
    this.#writeQueue = this.#writeQueue
      .then(async () => {
        // A failed step leaves its rows open (readers still see them); it runs again after the next batch.
        if (this.#status !== 'closed' && (await this.#sealer.runDue())) this.#enqueueSeal()
      })
      .catch(() => {})
  }

  #plan(query: PriceQuery): QueryPlan {
    return planQuery(query, this.limits.maxRangePoints)
  }

  /**
   * Answers a plan from the hot tails when they hold every row its reads
   * need (loading missing tails first), otherwise from a view.
   */
  async #answer<T = PriceAnswer>(
    plan: QueryPlan, signal: AbortSignal | undefined,
    execute: (plan: QueryPlan, source: ScanSource, options: QueryOptions) => Promise<T> = executePlan as never,
  ): Promise<T> {
    this.#assertOpen()
    throwIfAborted(signal)
    const options = signal === undefined ? {} : { signal }
    const tails = this.#state.tails
    if (tails !== undefined) {
      const symbols = plan.symbols === 'all' ? this.#state.symbols : plan.symbols
      let captured = tails.capture(symbols, this.#knownSymbols)
      if (captured === undefined) {
        await this.#loadTails(tails, symbols, signal)
        captured = tails.capture(symbols, this.#knownSymbols)
      }
      if (captured?.canAnswer(plan)) return execute(plan, captured, options)
    }
    return this.#read('answer the query', (view) => execute(plan, view, options))
  }

  /**
   * A bucketed form as a stream over one view (a snapshot and the open area)
   * for its whole life; the view is taken at the first pull and released
   * when the stream ends, is left, fails or its signal aborts.
   */
  #stream(query: PriceQuery, signal: AbortSignal | undefined, action: string): AsyncIterable<SampledRecord | FilledPoint | Candle> {
    const plan = this.#plan(query)
    return this.#viewStream(action, signal, (view) => streamBuckets(plan, view, signal === undefined ? {} : { signal }))
  }

  /** The items `produce` yields from one view, held for the stream's whole life (see {@link PriceStore.#stream}). */
  #viewStream<T>(action: string, signal: AbortSignal | undefined, produce: (view: ReadView) => AsyncIterable<T>): AsyncIterable<T> {
    this.#assertOpen()
    const store = this
    async function* items(): AsyncGenerator<T> {
      const view = store.#view()
      try {
        yield* produce(view)
      } catch (err) {
        throw toStorageError(err, action)
      } finally {
        await view.close()
      }
    }
    return { [Symbol.asyncIterator]: () => (signal === undefined ? items() : releaseOnAbort(items(), signal)) }
  }

  async #loadTails(tails: HotTails, symbols: readonly string[], signal: AbortSignal | undefined): Promise<void> {
    const missing = symbols.filter((symbol) => this.#knownSymbols.has(symbol) && !tails.has(symbol))
    // Each tail's write version is taken with the view, in one synchronous step: a batch that
    // lands while the loads run must make them stale, whichever symbol they reach last.
    const versions = new Map(missing.map((symbol) => [symbol, tails.version(symbol)]))
    await this.#read('load the newest records', async (view) => {
      for (let start = 0; start < missing.length; start += TAIL_LOAD_CONCURRENCY) {
        // Tails already loaded stay installed: an aborted query leaves useful work behind.
        throwIfAborted(signal)
        await Promise.all(missing.slice(start, start + TAIL_LOAD_CONCURRENCY).map(async (symbol) => {
          const version = versions.get(symbol) as number
          const rows: Row[] = []
          try {
            for await (const batch of view.scan(symbol, { reverse: true, limit: tails.perSymbol })) rows.push(...batch)
          } catch (err) {
            // A damaged entry among a symbol's newest records: that symbol gets no tail, and its
            // queries read the disk, where only those that need the damaged entry fail.
            if (isPriceStoreError(err, 'PRICE_CORRUPT_VALUE')) return
            throw err
          }
          tails.install(symbol, version, rows)
        }))
      }
    })
  }

  /** Runs a read with one view: a snapshot and the open area, taken together. */
  async #read<T>(action: string, run: (view: ReadView) => Promise<T>): Promise<T> {
    const view = this.#view()
    try {
      return await run(view)
    } catch (err) {
      throw toStorageError(err, action)
    } finally {
      await view.close()
    }
  }

  #view(): ReadView {
    this.#assertOpen()
    return this.#state.view(this.#db, this.#levels)
  }

  #assertOpen(): void {
    if (this.#status !== 'open') throw new PriceStoreError('PRICE_NOT_OPEN', `the store is ${this.#status}, not open`)
  }
}

/** The rows of a batch's writes by symbol, for the hot tails. */
function rowsBySymbol(writes: readonly OpenWrite[]): Map<string, Row[]> {
  const bySymbol = new Map<string, Row[]>()
  for (const write of writes) {
    for (const [symbol, rows] of write.rows) {
      const list = bySymbol.get(symbol)
      if (list === undefined) bySymbol.set(symbol, [...rows])
      else list.push(...rows)
    }
  }
  return bySymbol
}

/**
 * Whether `ask` was given a plan rather than parameters: parameters hold
 * only strings (or arrays of them), a plan holds its query as an object.
 * Whether it really is a plan is then checked by `checkPlan`.
 */
function isPlanShaped(request: QueryParams | QueryPlan): request is QueryPlan {
  if (request instanceof URLSearchParams) return false
  const query = (request as { readonly query?: unknown }).query
  return typeof query === 'object' && query !== null && !Array.isArray(query)
}

/** A stream's options: a bucketed form's, without `offset` and `limit`. */
export type StreamOptions<T> = Omit<T, 'offset' | 'limit'>

/** Only the range itself: a stream takes no offset or limit (a JavaScript caller may pass anything). */
function streamOptions(options: unknown): unknown {
  if (typeof options !== 'object' || options === null) return options
  const { offset: _offset, limit: _limit, ...rest } = options as Record<string, unknown>
  return rest
}
