import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AnswerOptions, PricesQueryable } from './answer.js'
import type { ObservationOptions } from './access-log.js'
import { createExportEndpoint, type ExportEndpointOptions, type Exportable } from './export-endpoint.js'
import { createHealthEndpoint } from './health-endpoint.js'
import { createMetricsEndpoint } from './metrics-endpoint.js'
import type { HandlerMetrics } from './metrics.js'
import type { QueryGate } from './query-gate.js'
import type { LiveEndpoint, RouteTable } from './routes.js'
import { createWriteEndpoint, type WriteEndpointOptions } from './write-endpoint.js'
import { createStreamEndpoint, watchableStore, type StreamEndpointOptions } from './stream-endpoint.js'
import { createStatsEndpoint, type StatsSource } from './stats-endpoint.js'

/**
 * Options of the live service's endpoints (writes, the live stream, export,
 * statistics, health and metrics), part of the handler's options. Each
 * endpoint's module adds its own.
 */
export interface LiveEndpointOptions extends AnswerOptions, WriteEndpointOptions, StreamEndpointOptions, ExportEndpointOptions, ObservationOptions {}

/** One request for a live endpoint, as the handler routed it. */
export interface LiveRequest {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  /** The query string's parameters. */
  readonly params: URLSearchParams
  /** A HEAD request: the headers GET would send, and no body. */
  readonly head: boolean
  /** When the request arrived (`performance.now()`). */
  readonly arrivedAt: number
}

/**
 * Answers one request. It owns the request from here: it reads (or drains)
 * the body, answers, and never throws (a failure is answered, or the
 * connection is closed when the answer is already under way).
 */
export type LiveEndpointHandler = (request: LiveRequest) => void

/** What the live endpoints count for one another (the stream's subscribers for `/metrics`, ...). */
export class LiveCounters {
  /** Live streams open now. */
  streamSubscribers = 0
  /** Exports being sent now. */
  exports = 0
}

/** What the context of every live endpoint shares: the store, the handler's options, its query gate and its counters. */
export interface LiveContext {
  readonly store: PricesQueryable
  readonly options: LiveEndpointOptions
  readonly gate: QueryGate
  readonly counters: LiveCounters
  /** The handler's metrics, when they are on (`/metrics` is then served). */
  readonly metrics?: HandlerMetrics
}

/** The live endpoints one handler serves. */
export interface LiveEndpoints {
  /** Which of them the handler's routes lead to. */
  readonly table: Required<Pick<RouteTable, 'writes' | 'live' | 'exports' | 'stats' | 'metrics'>>
  /** Answers a request routed to `endpoint` (one the table serves). */
  serve(endpoint: LiveEndpoint, request: LiveRequest): void
  /** Ends what outlives a request (live streams), so a server can close; resolves once done. */
  close(): Promise<void>
}

/**
 * The live endpoints for `store`: those the store and the options allow. A
 * `PriceStore` can be watched, exported and counted; a store with only
 * `query` serves health alone.
 */
export function createLiveEndpoints(context: LiveContext): LiveEndpoints {
  const handlers: Partial<Record<LiveEndpoint, LiveEndpointHandler>> = {}
  const closers: (() => Promise<void>)[] = []
  const { store, options } = context
  const write = createWriteEndpoint(store, options)
  if (write !== undefined) handlers.write = write
  const watchable = watchableStore(store)
  if (watchable !== undefined) {
    const stream = createStreamEndpoint(watchable, context)
    handlers.stream = stream.handler
    closers.push(() => stream.close())
  }
  if (typeof (store as Partial<Exportable>).export === 'function') handlers.export = createExportEndpoint(store as unknown as Exportable, context)
  if (typeof (store as Partial<StatsSource>).stats === 'function') handlers.stats = createStatsEndpoint(store as unknown as StatsSource, options)
  handlers.health = createHealthEndpoint(store, options)
  if (context.metrics !== undefined) handlers.metrics = createMetricsEndpoint(context.metrics, options)
  return {
    table: {
      writes: handlers.write !== undefined,
      live: handlers.stream !== undefined,
      exports: handlers.export !== undefined,
      stats: handlers.stats !== undefined,
      metrics: handlers.metrics !== undefined,
    },
    serve(endpoint, request) {
      const handler = handlers[endpoint]
      if (handler === undefined) throw new Error(`no handler for the live endpoint ${endpoint}`)
      handler(request)
    },
    async close() {
      await Promise.all(closers.map((close) => close()))
    },
  }
}
