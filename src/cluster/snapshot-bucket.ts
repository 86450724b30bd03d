/**
 * The NATS side of snapshots: the connection (the cluster's own servers,
 * credentials and TLS, or a connection the caller already holds), the
 * stream's bucket, and NATS failures turned into coded errors.
 */
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream'
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { PriceStoreError, isPriceStoreError } from '../errors.js'
import type { ClusterOptions } from './cluster-options.js'
import { connectNats, isPermissionRefusal, resolveNatsSecurity, type NatsConnectOptions } from './nats-connection.js'
import { snapshotBucketName } from './snapshot-names.js'

/**
 * Where the snapshots are: the cluster's NATS servers with the node's credentials and TLS (as {@link ClusterOptions}
 * gives them; a connection is made for the call and closed after it), or an open NATS connection (used as it is,
 * never closed).
 */
export type SnapshotConnection = Pick<ClusterOptions, 'servers' | 'auth' | 'tls' | 'name'> | NatsConnection

/** Options naming a stream's snapshots. */
export interface SnapshotStreamOptions {
  /** The replication stream the snapshots are of (the cluster's `stream`, default `PRICES`). */
  readonly stream?: string
}

const STREAM_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** A checked connection: an open one, or the options to open one with. */
export type ResolvedConnection = { readonly open: NatsConnection } | { readonly options: NatsConnectOptions }

/**
 * Checks the connection options (an open connection is taken as it is).
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the option
 */
export function resolveSnapshotConnection(connection: SnapshotConnection): ResolvedConnection {
  if (isConnection(connection)) return { open: connection }
  if (typeof connection !== 'object' || connection === null) invalid('connection', 'give { servers, auth?, tls? } or an open NATS connection')
  const servers = (typeof connection.servers === 'string' ? connection.servers.split(',') : [...(connection.servers ?? [])]).map((url) => url.trim()).filter((url) => url !== '')
  return { options: { ...resolveNatsSecurity(servers, connection.auth, connection.tls), name: connection.name ?? 'price-store snapshots' } }
}

/**
 * The stream's name, checked (default `PRICES`).
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (parameter `stream`)
 */
export function resolveStream(options: SnapshotStreamOptions): string {
  const stream = options.stream ?? 'PRICES'
  if (typeof stream !== 'string' || !STREAM_NAME.test(stream)) invalid('stream', 'a stream name is 1 to 64 letters, digits, - and _')
  return stream
}

/**
 * Runs `use` on an open connection: the one given, or a new one closed afterwards.
 * @throws PriceStoreError `PRICE_LOG_UNAVAILABLE` when no server answers (and as {@link connectNats})
 */
export async function withConnection<T>(connection: ResolvedConnection, use: (nc: NatsConnection) => Promise<T>): Promise<T> {
  if ('open' in connection) return use(connection.open)
  let nc: NatsConnection
  try {
    nc = await connectNats(connection.options)
  } catch (err) {
    throw asLogError(err, `cannot reach NATS at ${connection.options.servers.join(', ')}`)
  }
  try {
    return await use(nc)
  } finally {
    await nc.close().catch(() => {})
  }
}

/**
 * The stream's bucket, or `undefined` when it does not exist (nothing was published yet).
 * @throws PriceStoreError `PRICE_LOG_UNAVAILABLE`
 */
export async function openBucket(nc: NatsConnection, stream: string): Promise<ObjectStore | undefined> {
  const bucket = snapshotBucketName(stream)
  try {
    const jsm = await jetstreamManager(nc)
    // Asked first, so that a missing bucket is told apart from a failure by its code rather than by a message.
    if ((await streamInfo(jsm, `OBJ_${bucket}`)) === undefined) return undefined
    return await new Objm(nc).open(bucket, false)
  } catch (err) {
    throw asLogError(err, `cannot open the snapshot bucket ${bucket}`)
  }
}

/**
 * The stream's bucket, created when it does not exist, stored on as many servers as the replication stream is
 * (1 when that cannot be read), or `replicas`.
 * @throws PriceStoreError `PRICE_LOG_UNAVAILABLE`
 */
export async function createBucket(nc: NatsConnection, stream: string, replicas: number | undefined): Promise<ObjectStore> {
  const bucket = snapshotBucketName(stream)
  try {
    const jsm = await jetstreamManager(nc)
    const existing = await streamInfo(jsm, `OBJ_${bucket}`)
    if (existing !== undefined) return await new Objm(nc).open(bucket, false)
    const copies = replicas ?? (await streamInfo(jsm, stream).catch(() => undefined))?.config.num_replicas ?? 1
    return await new Objm(nc).create(bucket, {
      storage: StorageType.File, replicas: copies, description: `price-store snapshots of the stream ${stream}`,
    })
  } catch (err) {
    throw asLogError(err, `cannot create the snapshot bucket ${bucket}`)
  }
}

async function streamInfo(jsm: Awaited<ReturnType<typeof jetstreamManager>>, name: string): Promise<{ config: { num_replicas: number } } | undefined> {
  try {
    return await jsm.streams.info(name)
  } catch (err) {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound) return undefined
    throw err
  }
}

/**
 * `err` as a coded error: a {@link PriceStoreError} stays as it is, anything else (the NATS client's) is
 * `PRICE_LOG_UNAVAILABLE` saying `what` failed (`details.parameter` `auth` when NATS refused it to this user).
 */
export function asLogError(err: unknown, what: string): PriceStoreError {
  if (isPriceStoreError(err)) return err
  const message = err instanceof Error ? err.message : String(err)
  if (isPermissionRefusal(err)) {
    return new PriceStoreError('PRICE_LOG_UNAVAILABLE', `${what}: NATS refused it to this user (${message}); see docs/cluster.md#secure-deployment`, { cause: err, details: { parameter: 'auth' } })
  }
  return new PriceStoreError('PRICE_LOG_UNAVAILABLE', `${what}: ${message}`, { cause: err })
}

function isConnection(value: unknown): value is NatsConnection {
  return typeof value === 'object' && value !== null && typeof (value as NatsConnection).isClosed === 'function' && typeof (value as NatsConnection).publish === 'function'
}

function invalid(option: string, message: string): never {
  throw new PriceStoreError('PRICE_INVALID_OPTIONS', `${option}: ${message}`, { details: { parameter: option } })
}

/** Where each snapshot a listing or a publish returned was found, so that a restore fetches it from there. */
const sources = new WeakMap<object, ResolvedConnection>()

/** Remembers where `snapshot` was found. */
export function rememberSource<T extends object>(snapshot: T, connection: ResolvedConnection): T {
  sources.set(snapshot, connection)
  return snapshot
}

/** Where `snapshot` was found, when this process listed or published it. */
export function sourceOf(snapshot: object): ResolvedConnection | undefined {
  return sources.get(snapshot)
}
