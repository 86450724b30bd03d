/**
 * price-store/http: the HTTP adapter a host mounts in front of a store
 * (`GET /prices`, the TradingView UDF endpoints and chart page, writes,
 * the live stream and WebSocket subscriptions, export, stats, health, metrics): a server, a `node:http`
 * listener, a handler for any framework, the socket-free cores, their
 * options with their defaults, and the exact JSON of answers. The admission
 * gate, streamed bodies and the request plumbing behind them are internal.
 * @packageDocumentation
 */
// A server, a listener, a handler.
export {
  startServer, createPricesListener, answerClientError, answerConnect, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS,
} from './adapters/http/node.js'
export type { StartServerOptions, RunningServer, PricesListenerOptions } from './adapters/http/node.js'
export { createPricesHandler, DEFAULT_STREAM_ABOVE } from './adapters/http/handler.js'
export type { PricesHandler, PricesHandlerOptions, NextHandler } from './adapters/http/handler.js'

// The socket-free cores: parameters in, { status, headers, body } out.
export { answerPrices } from './adapters/http/prices/answer.js'
export type { AnswerOptions, PricesQueryable } from './adapters/http/prices/answer.js'
export type { HttpAnswer, HttpErrorCode } from './adapters/http/core/answer.js'
export { answerUdf, udfEndpoint } from './adapters/http/udf/udf.js'
export type { UdfEndpoint, UdfOptions, UdfSource } from './adapters/http/udf/udf.js'
export { statusForError } from './adapters/http/core/status.js'

// Options of the handler and their defaults.
export {
  isQueryLimitError, DEFAULT_MAX_CONCURRENT_QUERIES, DEFAULT_MAX_QUEUED_QUERIES, DEFAULT_QUERY_TIMEOUT_MS,
  DEFAULT_MAX_ANSWERS_IN_FLIGHT, DEFAULT_LIGHT_QUERY_COST,
} from './adapters/http/admission/query-limits.js'
export type { QueryLimitOptions, QueryLoad, QueryLimitError } from './adapters/http/admission/query-limits.js'
export { DEFAULT_SEND_STALL_MS } from './adapters/http/core/streamed-body.js'
export { DEFAULT_MAX_WRITE_BYTES, DEFAULT_WRITE_BODY_TIMEOUT_MS, DEFAULT_MAX_QUEUED_WRITES } from './adapters/http/live/write-endpoint.js'
export type { WriteEndpointOptions } from './adapters/http/live/write-endpoint.js'
export { DEFAULT_MAX_STREAM_SUBSCRIBERS, DEFAULT_STREAM_HEARTBEAT_MS, DEFAULT_STREAM_RETRY_MS } from './adapters/http/live/stream-endpoint.js'
export type { StreamEndpointOptions } from './adapters/http/live/stream-endpoint.js'
export { DEFAULT_MAX_EXPORTS } from './adapters/http/live/export-endpoint.js'
export { DEFAULT_MAX_WS_CONNECTIONS, WS_CLOSE_CODES } from './adapters/http/ws/ws-options.js'
export type { WebSocketOptions } from './adapters/http/ws/ws-options.js'
export { createWsEndpoint } from './adapters/http/ws/ws-endpoint.js'
export type { WsEndpoint, WsEndpointOptions, WsLoad } from './adapters/http/ws/ws-endpoint.js'
export type { ExportEndpointOptions } from './adapters/http/live/export-endpoint.js'
export type { ChartPageOptions } from './adapters/http/udf/chart-page.js'
export type { CompressionOptions } from './adapters/http/core/compression.js'
export type { CorsOptions } from './adapters/http/core/cors.js'
export type { ReadKeysOptions, ReadKeyEntry, ReadKeyLimit, ReadTier } from './adapters/http/access/read-keys.js'
export type { AccessLogEntry, ObservationOptions } from './adapters/http/observe/access-log.js'
export type { HealthReport } from './adapters/http/live/health-endpoint.js'
// The body of GET /feeds, as store.feeds() resolves with it (here: the root entry is at its 70 names).
export type { FeedCatalogue, FeedEntry, FeedOptions, FeedSource, FeedStatus, FeedVerdicts } from './store/services/feeds.js'

// A replicated node (price-store/cluster): writes through the log, reads at a position, replication reports.
export { DEFAULT_MIN_POSITION_WAIT_MS } from './adapters/http/live/replica.js'
export type { ReplicaSource, ReplicationStatus, ReplicaOptions, ClusterStats } from './adapters/http/live/replica.js'
export { MIN_POSITION_PARAMETER, MIN_POSITION_HEADER } from './adapters/http/live/min-position.js'

// The exact JSON of answers, as the adapter sends them (-0 kept).
export { answerToJson } from './engine/answer-json.js'
export { toExactJson } from './rules/exact-json.js'
