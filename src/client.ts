/**
 * `price-store/client`: a client of price-store nodes over the wire (see docs/client.md). Typed reads of
 * `GET /prices` and live subscriptions over `/ws`, which go on at another node of a cluster when one fails,
 * with no gap and no duplicate. Browser and Node; it imports nothing of the store.
 * @packageDocumentation
 */
export { PriceClient } from './client/price-client.js'
export type { ClientQueryParams, LatestReadOptions } from './client/price-client.js'
export { PriceClientError, isPriceClientError } from './client/client-errors.js'
export type { NodeFailure, PriceClientErrorCode, PriceClientErrorDetails } from './client/client-errors.js'
export type { PriceClientOptions, RetryOptions } from './client/client-options.js'
export { backoffDelay } from './client/backoff.js'
export type { ReadOptions } from './client/http-reads.js'
export type { Channel, PriceSubscription, SubscribeOptions } from './client/subscription.js'
export type { ConnectedUpdate, PriceRecord, PriceUpdate, PricesUpdate, ProgressUpdate, ResetUpdate, UpdateBase } from './client/updates.js'
export type { ClientTimers, WebSocketConstructor, WebSocketLike } from './client/transport-types.js'
