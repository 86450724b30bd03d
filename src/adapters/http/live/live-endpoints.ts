import type { StoreSupports } from '../capabilities.js'
import type { ErrorReportOptions } from '../core/answer.js'
import type { ObservationOptions } from '../observe/access-log.js'
import type { HandlerMetrics } from '../observe/metrics.js'
import type { LiveEndpoint, RouteTable } from '../routes.js'
import { createBackupEndpoint, type BackupEndpointOptions } from './backup-endpoint.js'
import type { LiveCounters, LiveEndpointHandler, LiveRequest } from './endpoint.js'
import { createExportEndpoint, type ExportEndpointOptions, type Exportable } from './export-endpoint.js'
import { createHealthEndpoint } from './health-endpoint.js'
import { createMetricsEndpoint } from './metrics-endpoint.js'
import { createQualityEndpoint, type QualitySource } from './quality-endpoint.js'
import type { CheckedReplicaOptions, ReplicaOptions } from './replica.js'
import { createStatsEndpoint, type StatsSource } from './stats-endpoint.js'
import { createStreamEndpoint, type StreamEndpointOptions, type WatchableStore } from './stream-endpoint.js'
import { createVerifyEndpoint, type VerifySource } from './verify-endpoint.js'
import { createWriteEndpoint, type WritableStore, type WriteEndpointOptions } from './write-endpoint.js'

/**
 * Options of the live service's endpoints (writes, the live stream, export,
 * statistics, health and metrics), part of the handler's options. Each
 * endpoint's module declares its own, and each endpoint is handed only those.
 */
export interface LiveEndpointOptions extends ErrorReportOptions, WriteEndpointOptions, StreamEndpointOptions, ExportEndpointOptions, ObservationOptions, ReplicaOptions, BackupEndpointOptions {}

/** What the live endpoints share with the rest of the handler: their counters, its metrics when they are on, and its replica options. */
export interface LiveShared {
  readonly counters: LiveCounters
  /** The handler's metrics, when they are on (`/metrics` is then served). */
  readonly metrics?: HandlerMetrics | undefined
  /** The replica options, checked (writes go through the replica, health, stats and metrics report it). */
  readonly replication?: CheckedReplicaOptions | undefined
}

/** The live endpoints one handler serves. */
export interface LiveEndpoints {
  /** Which of them the handler's routes lead to. */
  readonly table: Required<Pick<RouteTable, 'writes' | 'live' | 'exports' | 'stats' | 'metrics' | 'quality' | 'verify' | 'backup'>>
  /** Answers a request routed to `endpoint` (one the table serves). */
  serve(endpoint: LiveEndpoint, request: LiveRequest): void
  /** Ends what outlives a request (live streams), so a server can close; resolves once done. */
  close(): Promise<void>
}

/**
 * The live endpoints for `store`: those its manifest and the options allow.
 * A `PriceStore` can be watched, exported and counted; a store with only
 * `query` serves health alone.
 */
export function createLiveEndpoints(store: object, supports: StoreSupports, options: LiveEndpointOptions, shared: LiveShared): LiveEndpoints {
  const handlers: Partial<Record<LiveEndpoint, LiveEndpointHandler>> = {}
  const closers: (() => Promise<void>)[] = []
  const { counters, metrics } = shared
  const replica = shared.replication?.replica
  const onError: ErrorReportOptions = options.onError === undefined ? {} : { onError: options.onError }
  const write = createWriteEndpoint(store as WritableStore, supports, pick(options, WRITE_OPTIONS, onError), replica)
  if (write !== undefined) handlers.write = write
  if (supports.watch) {
    const catchUp = replica === undefined ? undefined : { replica, waitMs: shared.replication?.minPositionWaitMs ?? 0 }
    const stream = createStreamEndpoint(store as WatchableStore, pick(options, STREAM_OPTIONS, onError), counters, catchUp)
    handlers.stream = stream.handler
    closers.push(() => stream.close())
  }
  if (supports.export) handlers.export = createExportEndpoint(store as Exportable, pick(options, EXPORT_OPTIONS, onError), counters)
  if (supports.stats) handlers.stats = createStatsEndpoint(store as StatsSource, onError, replica)
  if (supports.quality) handlers.quality = createQualityEndpoint(store as QualitySource, onError)
  if (supports.verify) handlers.verify = createVerifyEndpoint(store as VerifySource, onError)
  handlers.health = createHealthEndpoint(store, supports, onError, replica === undefined ? undefined : {
    replica, maxLag: shared.replication?.maxLag ?? Number.POSITIVE_INFINITY, maxStalenessMs: shared.replication?.maxStalenessMs ?? Number.POSITIVE_INFINITY,
  })
  if (metrics !== undefined) handlers.metrics = createMetricsEndpoint(metrics, onError)
  const backup = createBackupEndpoint(store, { ...pick(options, BACKUP_OPTIONS, onError), writeToken: options.writeToken })
  if (backup !== undefined) {
    handlers.backup = backup.handler
    closers.push(() => backup.close())
  }
  return {
    table: {
      writes: handlers.write !== undefined,
      live: handlers.stream !== undefined,
      exports: handlers.export !== undefined,
      stats: handlers.stats !== undefined,
      metrics: handlers.metrics !== undefined,
      quality: handlers.quality !== undefined,
      verify: handlers.verify !== undefined,
      backup: handlers.backup !== undefined,
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

const WRITE_OPTIONS = ['writeToken', 'maxWriteBytes', 'writeBodyTimeoutMs', 'maxQueuedWrites'] as const satisfies readonly (keyof WriteEndpointOptions)[]
const STREAM_OPTIONS = [
  'maxStreamSubscribers', 'streamHeartbeatMs', 'streamMaxPending', 'streamMaxQueuedBytes', 'streamStallMs', 'streamRetryMs',
] as const satisfies readonly (keyof StreamEndpointOptions)[]
const EXPORT_OPTIONS = ['maxExports', 'exportStallMs'] as const satisfies readonly (keyof ExportEndpointOptions)[]
const BACKUP_OPTIONS = ['backupDir'] as const satisfies readonly (keyof BackupEndpointOptions)[]

/** One endpoint's own options out of the handler's, with `onError`. */
function pick<K extends keyof LiveEndpointOptions>(options: LiveEndpointOptions, keys: readonly K[], onError: ErrorReportOptions): Pick<LiveEndpointOptions, K> & ErrorReportOptions {
  const own: Partial<Pick<LiveEndpointOptions, K>> = {}
  for (const key of keys) if (options[key] !== undefined) own[key] = options[key]
  return { ...own, ...onError } as Pick<LiveEndpointOptions, K> & ErrorReportOptions
}
