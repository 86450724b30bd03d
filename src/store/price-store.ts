import { executePlanDeferred } from '../engine/execute.js'
import type { DeferredAnswer } from '../engine/deferred-answer.js'
import { parseQuery } from '../engine/parse-query.js'
import type { QueryPlan } from '../engine/query-plan.js'
import { typedAnswer } from '../engine/answer-form.js'
import { answerBatchAsOf, type BatchAsOfAnswer, type BatchAsOfOptions, type BatchAsOfPage, type BatchAsOfPageOptions } from './batch-as-of.js'
import type { CrossAnswerOf, CrossOptions } from '../engine/forms/cross-query.js'
import { readOptionsOf, signalOf, toCandlesQuery, toLatestQuery, toRangeQuery, toSeveralQuery, toTwapQuery, toTypedCrossQuery } from '../engine/typed-queries.js'
import type { CandleOptions, ExportOptions, FillOf, FillOptions, LatestOptions, QueryOptions, RangeOptions, SeveralOptions, TwapOptions } from '../engine/typed-queries.js'
import type { Candle, CountedBucket, EmptyCandle, FilledPoint, Limits, NewPriceRecord, PriceAnswer, PriceRecord, Provider, QueryParams, SampledRecord, Twap, TypedAnswer } from '../types.js'
import { closeStore, databaseAt, openStore, type AnyLevel } from './lifecycle/open-close.js'
import { asyncDispose, type StoreStatus } from './lifecycle/store-life.js'
import { resolveOptions, type PriceStoreOptions } from './lifecycle/store-options.js'
import { assembleStore, type StoreParts } from './lifecycle/store-parts.js'
import { readStoredProvider } from './lifecycle/stored-provider.js'
import { isPlanShaped, streamOptions, type StreamOptions } from './read/query-arguments.js'
import { answerPage, type PricePage } from './read/cursor-pages.js'
import { backupWith, type BackupOptions, type BackupResult } from './services/backup.js'
import { exportStore } from './services/export.js'
import { storeFeeds, type FeedCatalogue, type FeedOptions } from './services/feeds.js'
import { storeQuality, type QualityOptions, type QualityReport } from './services/quality.js'
import { storeStats, type StoreStats } from './services/stats.js'
import { verifyWith, type VerifyOptions, type VerifyReport } from './services/verify-report.js'
import type { SignatureCounts } from './signatures/ingest-verifier.js'
import { startWatch } from './services/watch/watch.js'
import type { WatchIterator, WatchOptions } from './services/watch/watch-options.js'
import type { PruneOptions, PruneResult } from './upkeep/prune-request.js'
import type { BatchCommit, PutBatchOptions } from './write/batch-writer.js'

export type { StoreStatus, BatchCommit, PutBatchOptions, PricePage }

/**
 * An embedded store of signed price records for one provider, answering the query forms of `GET /prices`.
 *
 * @example
 * const store = await PriceStore.open('./data/prices', { provider })
 * await store.putMany(records)
 * const [latest] = await store.latest('BTC')
 * await store.close()
 */
export class PriceStore {
  /** Every room of the store, wired together (lifecycle/store-parts.ts). */
  readonly #parts: StoreParts

  /**
   * Wraps any abstract-level database (e.g. `new MemoryLevel()`); call {@link PriceStore.open | open()} before
   * use. The store keeps its data in sublevels with their own encodings, so the database can have any options.
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS`
   */
  constructor(db: AnyLevel, options: PriceStoreOptions) {
    this.#parts = assembleStore(db, resolveOptions(options))
  }

  /**
   * Opens a store on a directory (LevelDB via classic-level, created when missing) or on an abstract-level
   * database.
   * @throws PriceStoreError `PRICE_LOCKED` when another process holds the directory,
   *   `PRICE_UNSUPPORTED_FORMAT`, `PRICE_INVALID_OPTIONS` (an empty location too), `PRICE_STORAGE_ERROR`
   */
  static async open(location: string | AnyLevel, options: PriceStoreOptions): Promise<PriceStore> {
    // Check the options before creating a database: an unopened ClassicLevel opens itself and takes the lock.
    const store = new PriceStore(databaseAt(location, resolveOptions(options).maxOpenFiles), options)
    await store.open()
    return store
  }

  /** The provider a database records, or `undefined` if none yet; creates nothing (see {@link readStoredProvider}). */
  static storedProvider(location: string | AnyLevel): Promise<Provider | undefined> {
    return readStoredProvider(location)
  }

  /** The provider this store serves. */
  get provider(): Provider { return this.#parts.options.provider }

  /** The query caps in force. */
  get limits(): Limits { return this.#parts.options.limits }

  /** Where the store is in its life: queries and writes need `'open'`. */
  get status(): StoreStatus { return this.#parts.life.status }

  /**
   * Opens the database, checks its format version and provider (recording them in a new database) and replays
   * the unsealed records of its log. Opening an open store does nothing.
   * @throws PriceStoreError `PRICE_LOCKED`, `PRICE_UNSUPPORTED_FORMAT`, `PRICE_PROVIDER_MISMATCH`, `PRICE_STORAGE_ERROR`
   */
  async open(): Promise<void> { await openStore(this.#parts) }

  /**
   * Waits for pending writes, seals every open hour (so a closed store is all chunks and reopens without
   * replaying its log), then closes the database. Closing a closed store does nothing.
   */
  async close(): Promise<void> { await closeStore(this.#parts) }

  /**
   * Closes the store (as {@link PriceStore.close}) when a scope declared with `await using` ends, so a store
   * cannot be left open by an early return or a throw:
   * @example
   * await using store = await PriceStore.open('./data/prices', { provider })
   */
  async [asyncDispose](): Promise<void> { await this.close() }

  /**
   * Writes one record. See {@link PriceStore.putMany}.
   * @throws PriceStoreError `PRICE_INVALID_RECORD`, `PRICE_NOT_OPEN`, `PRICE_STORAGE_ERROR`
   */
  async put(record: NewPriceRecord): Promise<void> { await this.putMany([record]) }

  /**
   * Validates and writes a batch of records atomically: if any record is bad, nothing is written. A record with
   * the same symbol, timestamp and id as a stored one replaces it. Resolves with the number of records written.
   * The parameter is typed for TypeScript callers; the same rules are checked at run time, so untyped input
   * (JSON) may be passed as it is. An error thrown by the iterable itself passes through unchanged.
   * @throws PriceStoreError `PRICE_INVALID_RECORD` (with `details.index` and
   *   `details.field`, or `details.parameter` `records` when the batch is not
   *   an iterable), `PRICE_NOT_OPEN`, `PRICE_STORAGE_ERROR`
   */
  async putMany(records: Iterable<NewPriceRecord>): Promise<number> { return (await this.putBatch(records)).stored }

  /**
   * {@link PriceStore.putMany}, resolving with the batch's commit position as well: the position `watch` and
   * {@link PriceStore.position} give this very commit, which reading `position` after `putMany` cannot promise
   * when other batches are written meanwhile. An empty batch commits nothing: its `position` is then the newest
   * commit's. A replication log gives each batch its `position` (see {@link PutBatchOptions}).
   * @throws PriceStoreError as {@link PriceStore.putMany}; `PRICE_INVALID_OPTIONS` (parameter `position` or
   *   `commitId`) for a position that is not an integer above the store's, or a commit id that is not 1-256 characters
   * @example
   * const { stored, position } = await store.putBatch(records)
   */
  putBatch(records: Iterable<NewPriceRecord>, options: PutBatchOptions = {}): Promise<BatchCommit> { return this.#parts.writer.putBatch(records, options) }

  /**
   * Under `signatures.policy` `reject`, refuses a batch as `putBatch` would, writing nothing (else does nothing): for a
   * writer that sends it elsewhere first. @throws PriceStoreError `PRICE_INVALID_SIGNATURE`, `PRICE_INVALID_RECORD`
   */
  checkSignatures(records: Iterable<NewPriceRecord>): Promise<void> { return this.#parts.writer.checkSignatures(records) }

  /**
   * The latest `limit` records of a symbol, newest first; with `to` (and/or `from`), the records as of that
   * time. An unknown symbol gives `[]`.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`,
   *   `PRICE_ABORTED` (`options.signal`)
   */
  async latest(symbol: string, options: LatestOptions = {}): Promise<PriceRecord[]> {
    return this.#parts.reader.answerQuery(toLatestQuery(symbol, options, this.limits), signalOf(options)) as Promise<PriceRecord[]>
  }

  /**
   * The latest record of each symbol (every symbol in the store when `symbols` is left out), within the
   * optional window, keyed by symbol. Symbols with no record in the window are left out. All symbols are read
   * from one snapshot.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`,
   *   `PRICE_ABORTED` (`options.signal`)
   */
  async several(symbols?: readonly string[], options: SeveralOptions = {}): Promise<Record<string, PriceRecord>> {
    return this.#parts.reader.answerQuery(toSeveralQuery(symbols, options, this.limits), signalOf(options)) as Promise<Record<string, PriceRecord>>
  }

  /** Batch as-of, symbols × times, keyed by symbol then time (docs/semantics.md, "Batch as-of"). @throws PriceStoreError */
  batchAsOf(options: BatchAsOfPageOptions): Promise<BatchAsOfPage>
  batchAsOf(options: BatchAsOfOptions): Promise<BatchAsOfAnswer>
  batchAsOf(options: BatchAsOfOptions): Promise<BatchAsOfAnswer | BatchAsOfPage> { return answerBatchAsOf(this.#parts, options) }

  /**
   * One record per `interval` bucket of `from..to` (both inclusive), the bucket's latest, oldest first, each
   * with `minutes`; then `offset` and `limit`. With `fill: 'prev'`, one point per bucket instead, an empty
   * bucket carrying the latest record before it (see docs/semantics.md). Refuses answers over `maxRangePoints`.
   * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE`, `PRICE_INVALID_INTERVAL`, `PRICE_INVALID_RANGE`,
   *   `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_NOT_OPEN`, `PRICE_ABORTED` (`options.signal`)
   */
  range(symbol: string, options: RangeOptions & { readonly fill?: never; readonly maxAge?: never }): Promise<SampledRecord[]>
  range(symbol: string, options: RangeOptions & { readonly fill: 'prev'; readonly maxAge?: number }): Promise<FilledPoint[]>
  range(symbol: string, options: RangeOptions & FillOptions): Promise<SampledRecord[] | FilledPoint[] | CountedBucket[]>
  async range(symbol: string, options: RangeOptions & FillOptions): Promise<SampledRecord[] | FilledPoint[] | CountedBucket[]> {
    return this.#parts.reader.answerQuery(toRangeQuery(symbol, options, this.limits), signalOf(options)) as Promise<SampledRecord[] | FilledPoint[] | CountedBucket[]>
  }

  /**
   * Candles of `symbol` over `from..to`: per `interval` bucket the open, high, low and close, each naming its
   * record, and the count; gap-filled with `fill: 'prev'`. Then `offset` and `limit`; refuses answers over
   * `maxRangePoints`.
   * @throws PriceStoreError as {@link PriceStore.range}
   * @example
   * await store.candles('BTC', { from, to, interval: 3_600_000 }) // hourly candles
   */
  async candles<O extends CandleOptions>(symbol: string, options: O): Promise<'none' extends FillOf<O> ? (Candle | EmptyCandle)[] : Candle[]> {
    return this.#parts.reader.answerQuery(toCandlesQuery(symbol, options, this.limits), signalOf(options)) as Promise<never>
  }

  /**
   * The time-weighted average value of each symbol (every symbol when `symbols` is left out) over `from..to`,
   * keyed by symbol, the record in force at `from` carried in; symbols with no record in force are left out.
   * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_INVALID_RANGE`, `PRICE_NOT_OPEN`,
   *   `PRICE_ABORTED` (`options.signal`)
   */
  async twap(symbols: readonly string[] | undefined, options: TwapOptions): Promise<Record<string, Twap>> {
    return this.#parts.reader.answerQuery(toTwapQuery(symbols, options, this.limits), signalOf(options)) as Promise<Record<string, Twap>>
  }

  /** The price of one `quote` in `base`, each rate naming its two records (docs/semantics.md, "Cross rates"). @throws PriceStoreError */
  cross<O extends CrossOptions>(quote: string, base: string, options?: O): Promise<CrossAnswerOf<O>> {
    return this.#parts.reader.answerQuery(toTypedCrossQuery(quote, base, options, this.limits), signalOf(options)) as Promise<CrossAnswerOf<O>>
  }

  /**
   * The range form as a stream, without the `maxRangePoints` cap, read from one consistent view; gap-filled
   * points with `fill: 'prev'`. Arguments are checked when it is called. With `signal`, an abort makes the next
   * pull reject with `PRICE_ABORTED` and releases the view at once, even if the stream is never pulled again.
   * @throws PriceStoreError (synchronously) for bad arguments or a closed store
   */
  rangeStream(symbol: string, options: StreamOptions<RangeOptions> & { readonly fill?: never; readonly maxAge?: never }): AsyncIterable<SampledRecord>
  rangeStream(symbol: string, options: StreamOptions<RangeOptions> & { readonly fill: 'prev'; readonly maxAge?: number }): AsyncIterable<FilledPoint>
  rangeStream(symbol: string, options: StreamOptions<RangeOptions> & FillOptions): AsyncIterable<SampledRecord | FilledPoint | CountedBucket>
  rangeStream(symbol: string, options: StreamOptions<RangeOptions> & FillOptions): AsyncIterable<SampledRecord | FilledPoint | CountedBucket> {
    return this.#parts.reader.stream(toRangeQuery(symbol, streamOptions(options), this.limits), signalOf(options), 'stream a price range') as AsyncIterable<SampledRecord | FilledPoint | CountedBucket>
  }

  /**
   * The candles form as a stream, without the `maxRangePoints` cap, read from one consistent view; `signal` as
   * for {@link PriceStore.rangeStream}.
   * @throws PriceStoreError (synchronously) for bad arguments or a closed store
   */
  candleStream<O extends StreamOptions<CandleOptions>>(symbol: string, options: O): AsyncIterable<'none' extends FillOf<O> ? Candle | EmptyCandle : Candle> {
    return this.#parts.reader.stream(toCandlesQuery(symbol, streamOptions(options), this.limits), signalOf(options), 'stream candles') as AsyncIterable<never>
  }

  /**
   * Answers a `GET /prices` parameter set exactly as the HTTP service does: an array for single-symbol forms,
   * an object keyed by symbol otherwise.
   * @throws PriceStoreError with a `PRICE_INVALID_*`, `PRICE_UNSUPPORTED_PROVIDER`,
   *   `PRICE_RANGE_TOO_LARGE`, `PRICE_NOT_OPEN` or `PRICE_ABORTED` (`options.signal`) code
   */
  async query(params: QueryParams, options: QueryOptions = {}): Promise<PriceAnswer> {
    return this.#parts.reader.answer(this.plan(params), readOptionsOf(options))
  }

  /**
   * One page of a list answer (latest-N, history, range, candles) and the `next` cursor, absent on the last page:
   * pass it back as `cursor` with the same parameters. Stable while records are written (docs/semantics.md, "Cursors").
   * @throws PriceStoreError as {@link PriceStore.query}; `PRICE_INVALID_QUERY` (parameter `cursor`) for a bad cursor
   */
  page(params: QueryParams, options: QueryOptions = {}): Promise<PricePage> { return answerPage(this.#parts, params, readOptionsOf(options)) }

  /**
   * Answers a `GET /prices` parameter set, or a plan made by {@link PriceStore.plan}, as
   * {@link PriceStore.query} does, but with the answer's form named: switch on `form` and `answer` has its
   * exact type.
   * @throws PriceStoreError as {@link PriceStore.query}
   * @example
   * const result = await store.ask(new URLSearchParams(search))
   * if (result.form === 'candles') draw(result.answer) // Candle[]
   */
  async ask(request: QueryParams | QueryPlan, options: QueryOptions = {}): Promise<TypedAnswer> {
    const plan = isPlanShaped(request) ? request : this.plan(request)
    return typedAnswer(plan.query, await this.#parts.reader.answerGiven(plan, readOptionsOf(options)))
  }

  /**
   * Compiles a `GET /prices` parameter set into a plan without reading anything: the form, the reads it makes
   * and its cost (`heavy`), which a host can act on before running it with {@link PriceStore.run}.
   * @throws PriceStoreError with a `PRICE_INVALID_*` or `PRICE_UNSUPPORTED_PROVIDER` code
   */
  plan(params: QueryParams): QueryPlan { return this.#parts.reader.plan(parseQuery(params, this.#parts.options)) }

  /**
   * Answers a plan made by {@link PriceStore.plan}.
   * @throws PriceStoreError `PRICE_INVALID_QUERY` for anything else, and as {@link PriceStore.query}
   */
  run(plan: QueryPlan, options: QueryOptions = {}): Promise<PriceAnswer> { return this.#parts.reader.answerGiven(plan, readOptionsOf(options)) }

  /**
   * The work a plan will do, in records: 1 for each record it returns and 1/8 for each it only reads, with the
   * records a range covers estimated from the store's own counts (a few heads entries, no records read). The
   * HTTP service admits queries by it. A range whose answer is sure to pass the cap is refused here, before any
   * record is read.
   * @throws PriceStoreError `PRICE_RANGE_TOO_LARGE`, `PRICE_INVALID_QUERY` for anything but a plan, `PRICE_NOT_OPEN`
   * @example
   * const plan = store.plan(params)
   * if (store.cost(plan) > 5_000) queueForLater(plan)
   */
  cost(plan: QueryPlan): number { return this.#parts.reader.cost(plan) }

  /**
   * Answers a plan as {@link PriceStore.run} does, except that the latest-N and range forms give a
   * {@link DeferredAnswer}: their records are chosen, counted and checked against the cap, then decoded only as
   * they are read. The HTTP service streams large answers from it, so neither the decoded records nor their
   * JSON are ever whole in memory.
   * @throws PriceStoreError as {@link PriceStore.run}; reading an item may throw `PRICE_CORRUPT_VALUE`
   */
  runDeferred(plan: QueryPlan, options: QueryOptions = {}): Promise<PriceAnswer | DeferredAnswer> {
    return this.#parts.reader.answerGiven(plan, readOptionsOf(options), executePlanDeferred)
  }

  /**
   * The position of the newest commit (0 before the first): every batch `putMany` writes is one commit,
   * numbered one more than the one before, across restarts. `watch({ after: store.position })` starts from now.
   */
  get position(): number { return this.#parts.journal.head }

  /** The replication log's id of the commit at {@link PriceStore.position}, when `putBatch` was given one (see {@link PutBatchOptions}). */
  get positionId(): string | undefined { return this.#parts.journal.headId }

  /** The `signatures` policy, the verdicts taken since the store opened and the batches refused for one (no I/O). */
  get signatures(): SignatureCounts { return { policy: this.#parts.ingest.policy, ...this.#parts.ingest.counts() } }

  /** The `signatures` options that decide a record's verdict, as JSON `{ policy, evmSigners, evmChainId }` in one canonical form. */
  get signatureRule(): string { return this.#parts.ingest.ruleText }

  /**
   * Records committed since the store was opened, by every writer of this store (each `putMany`/`put` counts
   * its records once committed; a failed batch counts nothing). A counter for monitoring, read without I/O: it
   * starts again from 0 at each `open()`.
   */
  get recordsWritten(): number { return this.#parts.step.recordsWritten }

  /**
   * When the newest commit since the store was opened landed (ms since the epoch, this process's clock), or
   * `undefined` before the first one.
   */
  get lastCommitAt(): number | undefined { return this.#parts.step.lastCommitAt }

  /**
   * The records each commit writes, in commit order, as they are committed: with `after`, first the commits
   * after that position replayed from the store's journal, then the live ones, with no gap and no repeat. Ends
   * when the store closes or the loop is left; an abort of `signal` rejects the pull with `PRICE_ABORTED`.
   * Arguments are checked when it is called. See docs/api.md for the items (`records`, `progress`, `reset`,
   * `overflow`).
   * @throws PriceStoreError (synchronously) `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`, `PRICE_NOT_OPEN`
   * @example
   * for await (const item of store.watch({ symbols: ['BTC'], after: lastSeen })) {
   *   if (item.type === 'records') show(item.records)
   *   lastSeen = item.position
   * }
   */
  watch(options: WatchOptions = {}): WatchIterator { return startWatch(this.#parts, options, this.limits) }

  /**
   * Removes every record with `timestamp < before` (of `symbol`, or of every symbol) and never one at or after
   * it; resolves with what was removed. Runs in steps between writes, each one atomic write (an hour's chunks),
   * so a crash leaves a consistent store holding everything at or after `before`, where pruning again finishes
   * the work. The open hours it reaches are sealed first. A symbol left with no record leaves `symbols()`.
   * Records written while it runs may survive it. Prunes run one at a time; `close()` stops one between steps
   * (`PRICE_NOT_OPEN`).
   * @throws PriceStoreError `PRICE_INVALID_RANGE` (`before`), `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`,
   *   `PRICE_NOT_OPEN`, `PRICE_ABORTED` (`options.signal`), `PRICE_STORAGE_ERROR`, `PRICE_CORRUPT_VALUE`
   * @example
   * await store.prune({ before: Date.parse('2024-01-01T00:00:00Z') }) // { records, hours, symbols }
   */
  async prune(options: PruneOptions): Promise<PruneResult> { return this.#parts.upkeep.prune(options) }

  /** Every symbol with at least one record, in UTF-8 byte order. */
  async symbols(): Promise<string[]> { return this.#parts.reader.symbols() }

  /**
   * Every stored record (of `symbols`, within `from..to` when given), read from one consistent view: each
   * symbol's records oldest first in (timestamp, id) order, the symbols in the store's order, each record as
   * {@link PriceStore.latest} returns it. Nothing is sampled or capped. The view is taken at the first pull and
   * released when the iteration ends, is left, fails or `signal` aborts (see {@link PriceStore.rangeStream}).
   * @throws PriceStoreError (synchronously) `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_RANGE`,
   *   `PRICE_INVALID_QUERY`, `PRICE_NOT_OPEN`; on a pull, `PRICE_ABORTED`
   * @example
   * for await (const record of store.export({ symbols: ['BTC'] })) out.write(`${JSON.stringify(record)}\n`)
   */
  export(options: ExportOptions = {}): AsyncIterable<PriceRecord> { return exportStore(this.#parts.reader, options) }

  /**
   * Counts and facts about the store from one consistent view: records and symbols, each symbol's record count
   * and first and last timestamp, the records not sealed yet, the bytes on disk, the format version and the
   * provider. Reads no record: sealed hours are counted from the heads index.
   * @throws PriceStoreError `PRICE_NOT_OPEN`, `PRICE_ABORTED` (`options.signal`), `PRICE_CORRUPT_VALUE`
   */
  async stats(options: QueryOptions = {}): Promise<StoreStats> { return storeStats(this.#parts, signalOf(options)) }

  /** Feed quality per symbol over `from..to` (docs/semantics.md, "Feed quality"). @throws PriceStoreError `PRICE_INVALID_*`, `PRICE_RANGE_TOO_LARGE`, `PRICE_NOT_OPEN`, `PRICE_ABORTED` */
  quality(options: QualityOptions): Promise<QualityReport> { return storeQuality(this.#parts, options) }

  /** A page of the feed catalogue: per symbol its counts, heartbeat, decimals, verdicts, sources, status (docs/api.md). @throws PriceStoreError */
  feeds(options: FeedOptions = {}): Promise<FeedCatalogue> { return storeFeeds(this.#parts, options) }

  /**
   * A report on the signatures of the records `options` selects (as {@link PriceStore.export}'s): counts by the
   * verdict kept at ingest, the failing records and, with `recheck`, every record verified again from what the
   * store returns (docs/semantics.md, "Signature verdicts"). Reads one consistent view.
   * @throws PriceStoreError as `export`, `PRICE_INVALID_QUERY` (`recheck`, `limit`), `PRICE_NOT_OPEN`, `PRICE_ABORTED`
   */
  async verify(options: VerifyOptions = {}): Promise<VerifyReport> { return verifyWith(this.#parts, options) }

  /**
   * Writes a consistent copy of the store, from one snapshot, into a new store directory `dir` (classic-level)
   * while this store goes on serving and taking writes. The copy is written into `DIR.partial`, checked by
   * opening it, and renamed to `dir` only when complete.
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (parameter `dir`: it exists and is
   *   not an empty directory), `PRICE_NOT_OPEN`, `PRICE_ABORTED`, `PRICE_STORAGE_ERROR`
   */
  async backup(dir: string, options: BackupOptions = {}): Promise<BackupResult> {
    const { name, id, publicKey } = this.provider
    return backupWith(this.#parts, (location) => PriceStore.open(location, { provider: { name, id, publicKey } }), dir, options, signalOf(options))
  }
}
