/**
 * Snapshots of a node's store in a NATS Object Store bucket, to seed new
 * nodes from when the stream no longer holds every commit (its retention),
 * or faster than replaying it. A snapshot is a `store.backup()` packed into
 * one object (snapshot-pack.ts), named so that the newest is found from a
 * listing (snapshot-names.ts), with its position, commit id, digest, record
 * count, creation time and node in its metadata. A node restored from one
 * (snapshot-restore.ts) follows the stream from its position.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { Base64UrlPaddedCodec, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { PriceStoreError } from '../errors.js'
import { checkIntegerOption } from '../rules/options.js'
import { PriceStore } from '../store/price-store.js'
import { isNodeId, nodeIdOf } from './applied-positions.js'
import {
  asLogError, createBucket, openBucket, rememberSource, resolveSnapshotConnection, resolveStream, withConnection,
  type ResolvedConnection, type SnapshotConnection, type SnapshotStreamOptions,
} from './snapshot-bucket.js'
import { newestFirst, parseSnapshot, snapshotBucketName, snapshotMetadata, snapshotObjectName, type Snapshot } from './snapshot-names.js'
import { packDirectory } from './snapshot-pack.js'
import { checkRetention, snapshotsToPrune, type SnapshotRetention } from './snapshot-retention.js'

/** Options of {@link publishSnapshot}. */
export interface PublishSnapshotOptions extends SnapshotStreamOptions, SnapshotRetention {
  /** The node publishing, as the snapshot's metadata names it (default: this host's name). */
  readonly nodeId?: string
  /** Servers the bucket is stored on, when this call creates it (default: as many as the stream has, else 1). */
  readonly replicas?: number
  /** Where the backup is written and packed from, then removed (default: the system's temporary folder); it takes about the store's size. */
  readonly workDir?: string
}

/** What {@link publishSnapshot} did. */
export interface PublishedSnapshot {
  /** The snapshot published. */
  readonly snapshot: Snapshot
  /** The snapshots removed afterwards by the retention (`keep`, `maxAgeMs`). */
  readonly pruned: readonly Snapshot[]
}

/** The largest piece of an object in the bucket: half the default `max_payload`, so a server's own limit is never met. */
const CHUNK_BYTES = 512 * 1024

/**
 * Publishes a snapshot of `store` (open; it goes on serving and writing meanwhile) into the bucket of the stream
 * (`price-store-<stream>-snapshots`, created when missing), then removes the snapshots the retention no longer keeps
 * (`keep`, default 3; `maxAgeMs`; never the newest). The snapshot holds a consistent backup of the store, at the
 * position (and commit id) the backup has, whatever is written meanwhile.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the option; `PRICE_NOT_OPEN`, `PRICE_STORAGE_ERROR` (as
 *   `store.backup()`); `PRICE_LOG_UNAVAILABLE` when NATS cannot be reached or refuses the upload (nothing is then
 *   published), or refuses removing older snapshots (the snapshot is then published: the message says so)
 */
export async function publishSnapshot(store: PriceStore, connection: SnapshotConnection, options: PublishSnapshotOptions = {}): Promise<PublishedSnapshot> {
  const stream = resolveStream(options)
  checkRetention(options)
  const nodeId = options.nodeId ?? nodeIdOf(hostname())
  if (!isNodeId(nodeId)) throw new PriceStoreError('PRICE_INVALID_OPTIONS', 'nodeId: a node id is 1 to 128 printable ASCII characters, without spaces', { details: { parameter: 'nodeId' } })
  const replicas = options.replicas === undefined ? undefined : checkIntegerOption('replicas', options.replicas, 1, 1, 5)
  const source = resolveSnapshotConnection(connection)
  const work = await mkdtemp(join(options.workDir ?? tmpdir(), 'price-store-snapshot-'))
  try {
    const { location, stats } = await store.backup(join(work, 'store'))
    const { position, positionId } = await positionOf(location, store)
    // A first pass for the digest: the metadata, digest included, goes with the object's first bytes.
    const sha256 = await digestOf(packDirectory(location))
    const createdAt = Date.now()
    const name = snapshotObjectName(position, createdAt, nodeId)
    const metadata = snapshotMetadata({ position, positionId, sha256, records: stats.records, createdAt, nodeId, provider: store.provider.id })
    return await withConnection(source, async (nc) => {
      const bucket = await createBucket(nc, stream, replicas)
      const snapshot = await upload(bucket, stream, name, metadata, location)
      const pruned = await prune(nc, bucket, stream, options, source).catch((err: unknown) => {
        const failure = asLogError(err, 'pruning')
        throw new PriceStoreError(failure.code, `the snapshot ${name} was published, but older snapshots could not be removed (pruneSnapshots retries): ${failure.message}`, {
          cause: err, details: failure.details,
        })
      })
      return { snapshot: rememberSource(snapshot, source), pruned }
    })
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/**
 * The stream's snapshots, newest first (highest position, then latest), read from the bucket's metadata alone (no
 * snapshot is downloaded); none when the bucket does not exist. Objects of the bucket that are not snapshots are
 * passed over. Each can be given to `restoreSnapshot`.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the option, `PRICE_LOG_UNAVAILABLE`
 */
export async function listSnapshots(connection: SnapshotConnection, options: SnapshotStreamOptions = {}): Promise<Snapshot[]> {
  const stream = resolveStream(options)
  const source = resolveSnapshotConnection(connection)
  return withConnection(source, async (nc) => {
    const bucket = await openBucket(nc, stream)
    return bucket === undefined ? [] : listed(bucket, stream, source)
  })
}

/**
 * Removes the stream's snapshots that the retention no longer keeps (as {@link publishSnapshot} does after each
 * publish; for a retry after it failed to, or a retention changed), and returns them.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the option, `PRICE_LOG_UNAVAILABLE`
 */
export async function pruneSnapshots(connection: SnapshotConnection, options: SnapshotStreamOptions & SnapshotRetention = {}): Promise<Snapshot[]> {
  const stream = resolveStream(options)
  checkRetention(options)
  const source = resolveSnapshotConnection(connection)
  return withConnection(source, async (nc) => {
    const bucket = await openBucket(nc, stream)
    return bucket === undefined ? [] : prune(nc, bucket, stream, options, source)
  })
}

async function listed(bucket: ObjectStore, stream: string, source: ResolvedConnection): Promise<Snapshot[]> {
  let infos
  try {
    infos = await bucket.list()
  } catch (err) {
    throw asLogError(err, `cannot list the snapshot bucket ${snapshotBucketName(stream)}`)
  }
  return infos.flatMap((info) => {
    const snapshot = parseSnapshot(stream, info)
    return snapshot === undefined ? [] : [rememberSource(snapshot, source)]
  }).sort(newestFirst)
}

async function prune(nc: NatsConnection, bucket: ObjectStore, stream: string, retention: SnapshotRetention, source: ResolvedConnection): Promise<Snapshot[]> {
  const jsm = await jetstreamManager(nc)
  const name = snapshotBucketName(stream)
  const doomed = snapshotsToPrune(await listed(bucket, stream, source), retention, Date.now())
  for (const snapshot of doomed) {
    try {
      await bucket.delete(snapshot.name)
      // The delete leaves a marker under the object's name, which every later listing would read: it goes too.
      await jsm.streams.purge(`OBJ_${name}`, { filter: `$O.${name}.M.${Base64UrlPaddedCodec.encode(snapshot.name)}` })
    } catch (err) {
      throw asLogError(err, `cannot remove the snapshot ${snapshot.name} from ${name}`)
    }
  }
  return doomed
}

/** Uploads the packed directory, and checks that the bucket's digest of what it stored is the one in the metadata. */
async function upload(bucket: ObjectStore, stream: string, name: string, metadata: Record<string, string>, location: string): Promise<Snapshot> {
  let info
  try {
    info = await bucket.put({ name, metadata, options: { max_chunk_size: CHUNK_BYTES } }, readableOf(packDirectory(location)))
  } catch (err) {
    throw asLogError(err, `cannot upload the snapshot ${name} to ${snapshotBucketName(stream)}`)
  }
  const expected = `SHA-256=${Base64UrlPaddedCodec.encode(Buffer.from(metadata.sha256 ?? '', 'hex'))}`
  const snapshot = parseSnapshot(stream, info)
  if (info.digest !== expected || snapshot === undefined) {
    await bucket.delete(name).catch(() => {})
    throw new PriceStoreError('PRICE_STORAGE_ERROR', `the snapshot ${name} was uploaded with other bytes than it was packed with (its files changed): removed`)
  }
  return snapshot
}

/** The position and commit id of the store at `location` (a backup of `store`, closed). */
async function positionOf(location: string, store: PriceStore): Promise<{ position: number; positionId: string | undefined }> {
  const copy = await PriceStore.open(location, { provider: store.provider })
  try {
    return { position: copy.position, positionId: copy.positionId }
  } finally {
    await copy.close()
  }
}

async function digestOf(pieces: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = createHash('sha256')
  for await (const piece of pieces) hash.update(piece)
  return hash.digest('hex')
}

function readableOf(pieces: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = pieces[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next()
      if (next.done === true) controller.close()
      else controller.enqueue(next.value)
    },
    async cancel() {
      await iterator.return?.()
    },
  })
}
