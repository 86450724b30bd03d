/**
 * price-store: signed crypto price records in an embedded LevelDB
 * time-series store, answering RedStone-style `GET /prices` queries.
 *
 * This entry holds what a host of the store needs: the store with its
 * options and results, the coded errors, and the record, query and answer
 * types. The other entries: `price-store/engine` (the pure engine, for data
 * of your own), `price-store/trust` (signature verdicts and options),
 * `price-store/http` (the HTTP adapter), `price-store/cluster` (nodes on
 * NATS JetStream), `price-store/testing` (arbitraries and the reference
 * model). Everything else is internal. test/architecture/public-surface.test.ts
 * counts these names (at most 70, types included).
 * @packageDocumentation
 */
// The store.
export { PriceStore } from './store/price-store.js'
export type { StoreStatus, BatchCommit, PutBatchOptions, PricePage } from './store/price-store.js'
export type { PriceStoreOptions } from './store/lifecycle/store-options.js'
export { REDSTONE_PROVIDER } from './store/lifecycle/redstone-provider.js'
export type { PruneOptions, PruneResult } from './store/upkeep/prune-request.js'
export type {
  AsOfOptions, CandleOptions, FillOptions, LatestOptions, QueryOptions, RangeOptions, SeveralOptions, TwapOptions, ExportOptions,
} from './engine/typed-queries.js'
export type { StreamOptions } from './store/read/query-arguments.js'
export type { StoreStats, SymbolStats, DiskUsage } from './store/services/stats.js'
export type { BackupOptions, BackupProgress, BackupResult } from './store/services/backup.js'
export type { QualityOptions, QualityReport, SymbolQuality } from './store/services/quality.js'
export type { BatchAsOfAnswer, BatchAsOfOptions } from './store/batch-as-of.js'
export type { CrossOptions } from './engine/forms/cross-query.js'
export type { WatchOptions, WatchIterator, WatchItem, WatchRecords, WatchProgress, WatchReset, WatchOverflow } from './store/services/watch/watch-options.js'

// Errors.
export { PriceStoreError, isPriceStoreError } from './errors.js'
export type { PriceStoreErrorCode, PriceStoreErrorDetails } from './errors.js'

// Records, queries and answers.
export { DEFAULT_LIMITS } from './types.js'
export type {
  PriceRecord, NewPriceRecord, SampledRecord, Provider, Limits, PriceQuery, LatestQuery, SeveralQuery, RangeQuery,
  CandlesQuery, TwapQuery, RecordRef, FilledPoint, Candle, CountedBucket, EmptyCandle, Twap, PriceAnswer, QueryParams, TypedAnswer,
  FieldSelection, SelectableQuery, CrossQuery, CrossRate, CrossSample, CrossCandle, CrossTwap,
} from './types.js'
