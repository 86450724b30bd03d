/** The options of a cluster node, and their defaults. */
import { PriceStoreError } from '../errors.js'
import { MAX_TIMER_MS, checkIntegerOption } from '../rules/options.js'
import type { JetStreamLogOptions } from './jetstream-log.js'
import { resolveNatsSecurity, type NatsAuth, type NatsTls } from './nats-connection.js'

/** Options of {@link ClusterNode.start}. */
export interface ClusterOptions {
  /**
   * NATS server URLs (`nats://host:port`; `tls://host:port` asks for TLS), one or several of the cluster's; a
   * comma-separated string is split. A `user:password@` (or `token@`) in a URL is taken as `auth` and never printed.
   */
  readonly servers: string | readonly string[]
  /** How this node proves who it is to NATS (default: none). See docs/cluster.md#secure-deployment. */
  readonly auth?: NatsAuth
  /** TLS to the NATS servers (default: off unless a URL is `tls://` or a server requires it). */
  readonly tls?: NatsTls
  /** The JetStream stream that is the cluster's log (default `PRICES`): letters, digits, `-` and `_`. */
  readonly stream?: string
  /**
   * Servers each message of the stream is stored on, used when this node creates the stream (default 3 when
   * three or more servers are given, else 1). An existing stream keeps its own.
   */
  readonly replicas?: number
  /** The stream's retention by age (ms, default 0: none), used when this node creates the stream. See docs/cluster.md. */
  readonly maxAgeMs?: number
  /** The stream's retention by size (bytes, default 0: none), used when this node creates the stream. */
  readonly maxBytes?: number
  /** How long JetStream recognises a retried publish of the same batch (ms, default 120,000). */
  readonly duplicateWindowMs?: number
  /** Time a write waits for JetStream's acknowledgement before failing with `PRICE_LOG_UNAVAILABLE` (ms, default 5,000). */
  readonly publishTimeoutMs?: number
  /**
   * Time {@link ClusterNode.putBatch} then waits for this node to apply the batch, so a read sent to this node
   * after the write sees it (ms, default 5,000; 0: answer as soon as the log acknowledged it). The write is
   * durable either way once acknowledged.
   */
  readonly applyWaitMs?: number
  /** The connection's name in NATS monitoring (default `price-store`). */
  readonly name?: string
  /**
   * Called with each error that interrupts following the stream and is retried (a lost connection, a leader
   * moving), for the operator's log; the node follows the stream again by itself.
   */
  readonly onError?: (err: unknown) => void
}

/** Options with defaults applied and checked. */
export interface ResolvedClusterOptions extends JetStreamLogOptions {
  readonly applyWaitMs: number
  readonly onError: (err: unknown) => void
}

const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/

/**
 * Checks a node's options.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the option
 */
export function resolveClusterOptions(options: ClusterOptions): ResolvedClusterOptions {
  const servers = (typeof options.servers === 'string' ? options.servers.split(',') : [...(options.servers ?? [])]).map((url) => url.trim()).filter((url) => url !== '')
  const security = resolveNatsSecurity(servers, options.auth, options.tls)
  const stream = options.stream ?? 'PRICES'
  if (typeof stream !== 'string' || !STREAM_NAME.test(stream)) invalid('stream', 'a stream name is 1 to 64 letters, digits, - and _')
  return {
    ...security,
    stream,
    replicas: checkIntegerOption('replicas', options.replicas, servers.length >= 3 ? 3 : 1, 1, 5),
    maxAgeMs: checkIntegerOption('maxAgeMs', options.maxAgeMs, 0, 0, Number.MAX_SAFE_INTEGER),
    maxBytes: checkIntegerOption('maxBytes', options.maxBytes, 0, 0, Number.MAX_SAFE_INTEGER),
    duplicateWindowMs: checkIntegerOption('duplicateWindowMs', options.duplicateWindowMs, 120_000, 1_000, MAX_TIMER_MS),
    publishTimeoutMs: checkIntegerOption('publishTimeoutMs', options.publishTimeoutMs, 5_000, 1, MAX_TIMER_MS),
    applyWaitMs: checkIntegerOption('applyWaitMs', options.applyWaitMs, 5_000, 0, MAX_TIMER_MS),
    name: options.name ?? 'price-store',
    onError: options.onError ?? (() => {}),
  }
}

function invalid(option: string, message: string): never {
  throw new PriceStoreError('PRICE_INVALID_OPTIONS', `${option}: ${message}`, { details: { parameter: option } })
}
