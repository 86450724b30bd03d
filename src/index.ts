/**
 * price-store: signed crypto price records in an embedded LevelDB
 * time-series store, answering RedStone-style `GET /prices` queries.
 *
 * This entry holds what a host of the store needs: the store with its
 * options and results, the coded errors, the record, query and answer
 * types, and the pure engine for other data sources. The HTTP adapter is
 * `price-store/http` (src/http.ts), the test helpers `price-store/testing`.
 * Everything else is internal. test/architecture/public-surface.test.ts
 * counts these names (at most 100, types included).
 * @packageDocumentation
 */
// The store.
export { PriceStore } from './store/price-store.js'
export type { StoreStatus, BatchCommit, PutBatchOptions, PricePage } from './store/price-store.js'
export type { PriceStoreOptions } from './store/lifecycle/store-options.js'
export { DEFAULT_MAX_OPEN_FILES } from './store/lifecycle/store-options.js'
export { REDSTONE_PROVIDER } from './store/lifecycle/redstone-provider.js'
export type { PruneOptions, PruneResult } from './store/upkeep/prune-request.js'
export type {
  AsOfOptions, CandleOptions, FillOptions, LatestOptions, QueryOptions, RangeOptions, SeveralOptions, TwapOptions, ExportOptions,
} from './engine/typed-queries.js'
export type { StreamOptions } from './store/read/query-arguments.js'
export type { StoreStats, SymbolStats, DiskUsage } from './store/services/stats.js'
export type { BackupOptions, BackupProgress, BackupResult } from './store/services/backup.js'
export type { SignatureOptions, SignaturePolicy } from './store/signatures/signature-options.js'
export type { VerifyOptions, VerifyReport } from './store/services/verify-report.js'
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
  CandlesQuery, TwapQuery, RecordRef, FilledPoint, Candle, CountedBucket, EmptyCandle, Twap, PriceAnswer, QueryParams, TypedAnswer, AnswerForm,
  FieldSelection, SelectableQuery, CrossQuery, CrossRate, CrossSample, CrossCandle, CrossTwap,
} from './types.js'

// The pure engine, for hosts that answer queries over data of their own (a ScanSource).
export { parseQuery } from './engine/parse-query.js'
export type { QueryConfig, ProviderNames } from './engine/parse-query.js'
export { planQuery } from './engine/plan.js'
export type { QueryPlan } from './engine/query-plan.js'
export { executeQuery, executePlan, streamBuckets } from './engine/execute.js'
export { costOf } from './engine/cost.js'
export type { DataCounts } from './engine/data-counts.js'
export { formOf } from './engine/answer-form.js'
export { sampleByInterval } from './engine/kernels/sample.js'
export type { ScanSource, ScanRow, ScanOptions } from './engine/scan-source.js'

// Signature verification: the verdict of a record, checked in the calling thread or in worker threads.
export { verifyRecord } from './trust/verify-record.js'
export { SignatureVerifier } from './trust/signature-verifier.js'
export type { SignatureVerifierOptions } from './trust/signature-verifier.js'
export { fieldCoverage } from './trust/verdict.js'
export type { RecordVerdict, SignatureCheck, SignatureKind } from './trust/verdict.js'
export type { AllowedSigners } from './trust/allowed-signers.js'
