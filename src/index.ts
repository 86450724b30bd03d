/**
 * price-store: signed crypto price records in an embedded LevelDB
 * time-series store, answering RedStone-style `GET /prices` queries.
 * @packageDocumentation
 */
export { PriceStore } from './store/price-store.js'
export type { StoreStatus, BatchCommit } from './store/price-store.js'
export type { PriceStoreOptions } from './store/lifecycle/store-options.js'
export { DEFAULT_MAX_OPEN_FILES } from './store/lifecycle/store-options.js'
export type { PruneOptions, PruneResult } from './store/upkeep/prune-request.js'
export type {
  AsOfOptions, CandleOptions, FillOptions, LatestOptions, QueryOptions, RangeOptions, SeveralOptions, TwapOptions,
} from './engine/typed-queries.js'
export type { StreamOptions } from './store/read/query-arguments.js'
export type { ExportOptions } from './engine/typed-queries.js'
export type { StoreStats, SymbolStats, DiskUsage } from './store/services/stats.js'
export type { BackupOptions, BackupProgress, BackupResult } from './store/services/backup.js'
export type { WatchOptions, WatchIterator, WatchItem, WatchRecords, WatchProgress, WatchReset, WatchOverflow } from './store/services/watch/watch-options.js'

export { PriceStoreError, isPriceStoreError } from './errors.js'
export type { PriceStoreErrorCode, PriceStoreErrorDetails } from './errors.js'

export { parseQuery } from './engine/parse-query.js'
export type { QueryConfig, ProviderNames } from './engine/parse-query.js'
export { executeQuery, executePlan, executePlanDeferred, streamBuckets } from './engine/execute.js'
export { DeferredAnswer } from './engine/deferred-answer.js'
export type { DeferredItem } from './engine/deferred-answer.js'
export { costOf, READ_COST } from './engine/cost.js'
export type { DataCounts } from './engine/cost.js'
export { planQuery, LIGHT_QUERY_RECORDS } from './engine/plan.js'
export type { QueryPlan, PlannedRead, ReadRole } from './engine/plan.js'
export { sampleByInterval, minuteOfHour } from './engine/kernels/sample.js'
export { answerToJson } from './engine/answer-json.js'
export { formOf } from './engine/answer-form.js'
export type { ScanSource, ScanRow, ScanOptions } from './engine/scan-source.js'

export { DEFAULT_LIMITS } from './types.js'
export type {
  PriceRecord, NewPriceRecord, SampledRecord, Provider, Limits, PriceQuery, LatestQuery, SeveralQuery, RangeQuery,
  CandlesQuery, TwapQuery, AsOf, AsOfDirection, BucketGrid, Fill, RecordRef, FilledPoint, Candle, Twap, PriceAnswer, QueryParams,
  TypedAnswer, AnswerForm,
} from './types.js'

export { answerPrices, answerPlanned, planRequest, answerToJsonInSlices } from './adapters/http/prices/answer.js'
export type { AnswerOptions, PlannedRequest, PricesQueryable } from './adapters/http/prices/answer.js'
export type { HttpAnswer, HttpErrorCode } from './adapters/http/core/answer.js'
export {
  createPricesListener, answerClientError, answerConnect, startServer, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS,
} from './adapters/http/node.js'
export type { PricesListenerOptions, StartServerOptions, RunningServer } from './adapters/http/node.js'
export { createPricesHandler, DEFAULT_STREAM_ABOVE } from './adapters/http/handler.js'
export { DEFAULT_MAX_WRITE_BYTES, DEFAULT_WRITE_BODY_TIMEOUT_MS, DEFAULT_MAX_QUEUED_WRITES } from './adapters/http/live/write-endpoint.js'
export type { WriteEndpointOptions } from './adapters/http/live/write-endpoint.js'
export { StreamedBody, DEFAULT_SEND_STALL_MS } from './adapters/http/core/streamed-body.js'
export type { PricesHandler, PricesHandlerOptions, NextHandler } from './adapters/http/handler.js'
export { answerUdf, udfEndpoint } from './adapters/http/udf/udf.js'
export type { UdfEndpoint, UdfOptions, UdfSource } from './adapters/http/udf/udf.js'
export type { ChartPageOptions } from './adapters/http/udf/chart-page.js'
export type { AccessLogEntry, ObservationOptions } from './adapters/http/observe/access-log.js'
export type { HealthReport } from './adapters/http/live/health-endpoint.js'
export { QueryGate } from './adapters/http/admission/query-gate.js'
export {
  isQueryLimitError, DEFAULT_MAX_CONCURRENT_QUERIES, DEFAULT_MAX_QUEUED_QUERIES, DEFAULT_QUERY_TIMEOUT_MS,
  DEFAULT_MAX_ANSWERS_IN_FLIGHT, DEFAULT_LIGHT_QUERY_COST,
} from './adapters/http/admission/query-limits.js'
export type { QueryLimitOptions, QueryLoad, QueryLimitError } from './adapters/http/admission/query-limits.js'
export type { GateRequest } from './adapters/http/admission/query-gate.js'
export { statusForError } from './adapters/http/core/status.js'
export {
  DEFAULT_MAX_STREAM_SUBSCRIBERS, DEFAULT_STREAM_HEARTBEAT_MS, DEFAULT_STREAM_RETRY_MS,
} from './adapters/http/live/stream-endpoint.js'
export type { StreamEndpointOptions } from './adapters/http/live/stream-endpoint.js'
export { DEFAULT_MAX_EXPORTS } from './adapters/http/live/export-endpoint.js'
export type { ExportEndpointOptions } from './adapters/http/live/export-endpoint.js'
export { toExactJson } from './rules/exact-json.js'
