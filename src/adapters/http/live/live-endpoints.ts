import type { StoreSupports } from '../capabilities.js'
import type { ErrorReportOptions } from '../core/answer.js'
import type { ObservationOptions } from '../observe/access-log.js'
import type { HandlerMetrics } from '../observe/metrics.js'
import { createBackupEndpoint, type BackupEndpointOptions } from './backup-endpoint.js'
import type { LiveCounters, LiveEndpointHandler } from './endpoint.js'
import { createExportEndpoint, type ExportEndpointOptions, type Exportable } from './export-endpoint.js'
import { createFeedsEndpoint, type FeedsSource } from './feeds-endpoint.js'
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

/** What the live endpoints are built from: the store, its manifest, the options, and what they share with the rest of the handler. */
export interface LiveParts {
  readonly store: object
  readonly supports: StoreSupports
  readonly options: LiveEndpointOptions
  readonly counters: LiveCounters
  /** The handler's metrics, when they are on (`/metrics` is then served). */
  readonly metrics?: HandlerMetrics | undefined
  /** The replica options, checked (writes go through the replica, health, stats and metrics report it). */
  readonly replication?: CheckedReplicaOptions | undefined
  /** Where an endpoint that outlives its requests (live streams, a backup) leaves how to end it, so a server can close. */
  readonly closers: (() => Promise<void>)[]
}

/*
 * One builder per live endpoint, each named by its row of the route table.
 * A builder is called only when the store has what the row needs; one whose
 * options are not set (no write token, no backup directory, no metrics)
 * declines with `undefined`.
 */

/** `POST /prices`, with a write token, into the store or through the replica. */
export function openWrite(parts: LiveParts): LiveEndpointHandler | undefined {
  return createWriteEndpoint(parts.store as WritableStore, parts.supports, pick(parts.options, WRITE_OPTIONS), parts.replication?.replica)
}

/** `GET /prices/stream`. */
export function openStream(parts: LiveParts): LiveEndpointHandler {
  const replica = parts.replication?.replica
  const catchUp = replica === undefined ? undefined : { replica, waitMs: parts.replication?.minPositionWaitMs ?? 0 }
  const stream = createStreamEndpoint(parts.store as WatchableStore, pick(parts.options, STREAM_OPTIONS), parts.counters, catchUp)
  parts.closers.push(() => stream.close())
  return stream.handler
}

/** `GET /prices/export`. */
export const openExport = (parts: LiveParts): LiveEndpointHandler => createExportEndpoint(parts.store as Exportable, pick(parts.options, EXPORT_OPTIONS), parts.counters)

/** `GET /stats`. */
export const openStats = (parts: LiveParts): LiveEndpointHandler => createStatsEndpoint(parts.store as StatsSource, onErrorOf(parts.options), parts.replication?.replica)

/** `GET /feeds`. */
export const openFeeds = (parts: LiveParts): LiveEndpointHandler => createFeedsEndpoint(parts.store as FeedsSource, onErrorOf(parts.options))

/** `GET /prices/quality`. */
export const openQuality = (parts: LiveParts): LiveEndpointHandler => createQualityEndpoint(parts.store as QualitySource, onErrorOf(parts.options))

/** `GET /prices/verify`. */
export const openVerify = (parts: LiveParts): LiveEndpointHandler => createVerifyEndpoint(parts.store as VerifySource, onErrorOf(parts.options))

/** `GET /health`: served by every handler, with the replica's lag when there is one. */
export function openHealth(parts: LiveParts): LiveEndpointHandler {
  const { replication } = parts
  const replica = replication?.replica
  return createHealthEndpoint(parts.store, parts.supports, onErrorOf(parts.options), replica === undefined ? undefined : {
    replica, maxLag: replication?.maxLag ?? Number.POSITIVE_INFINITY, maxStalenessMs: replication?.maxStalenessMs ?? Number.POSITIVE_INFINITY,
  })
}

/** `GET /metrics`, when the handler keeps metrics. */
export const openMetrics = (parts: LiveParts): LiveEndpointHandler | undefined =>
  parts.metrics === undefined ? undefined : createMetricsEndpoint(parts.metrics, onErrorOf(parts.options))

/** `POST /admin/backup`, with a backup directory and a write token. */
export function openBackup(parts: LiveParts): LiveEndpointHandler | undefined {
  const backup = createBackupEndpoint(parts.store, { ...pick(parts.options, BACKUP_OPTIONS), writeToken: parts.options.writeToken })
  if (backup === undefined) return undefined
  parts.closers.push(() => backup.close())
  return backup.handler
}

const WRITE_OPTIONS = ['writeToken', 'maxWriteBytes', 'writeBodyTimeoutMs', 'maxQueuedWrites'] as const satisfies readonly (keyof WriteEndpointOptions)[]
const STREAM_OPTIONS = [
  'maxStreamSubscribers', 'streamHeartbeatMs', 'streamMaxPending', 'streamMaxQueuedBytes', 'streamStallMs', 'streamRetryMs',
] as const satisfies readonly (keyof StreamEndpointOptions)[]
const EXPORT_OPTIONS = ['maxExports', 'exportStallMs'] as const satisfies readonly (keyof ExportEndpointOptions)[]
const BACKUP_OPTIONS = ['backupDir'] as const satisfies readonly (keyof BackupEndpointOptions)[]

/** The handler's `onError`, alone. */
function onErrorOf(options: LiveEndpointOptions): ErrorReportOptions {
  return options.onError === undefined ? {} : { onError: options.onError }
}

/** One endpoint's own options out of the handler's, with `onError`. */
function pick<K extends keyof LiveEndpointOptions>(options: LiveEndpointOptions, keys: readonly K[]): Pick<LiveEndpointOptions, K> & ErrorReportOptions {
  const own: Partial<Pick<LiveEndpointOptions, K>> = {}
  for (const key of keys) if (options[key] !== undefined) own[key] = options[key]
  return { ...own, ...onErrorOf(options) } as Pick<LiveEndpointOptions, K> & ErrorReportOptions
}
