/**
 * How a snapshot is named and described in its bucket. A stream's
 * snapshots live in the NATS Object Store bucket
 * `price-store-<stream>-snapshots`. An object's name starts with the
 * store's position and the time it was made, zero-padded, so names sort as
 * snapshots do (newest last) and a listing of names and metadata, which
 * downloads no snapshot, finds the newest. Its metadata says what it holds.
 */
import type { ObjectInfo } from '@nats-io/obj'
import { isNodeId } from './applied-positions.js'

/** A snapshot of a node's store in its stream's bucket, as its metadata describes it. */
export interface Snapshot {
  /** The replication stream whose commits the store applied. */
  readonly stream: string
  /** The NATS Object Store bucket holding it. */
  readonly bucket: string
  /** The object's name in the bucket. */
  readonly name: string
  /** The store's position: a node restored from it follows the stream from the next commit. */
  readonly position: number
  /** The stream's id of the commit at `position` (`store.positionId`), when the store had one. */
  readonly positionId: string | undefined
  /** SHA-256 of the object's bytes (the packed store directory), hex. */
  readonly sha256: string
  /** The object's size in bytes. */
  readonly bytes: number
  /** Records the store held. */
  readonly records: number
  /** When it was made (ms since the epoch). */
  readonly createdAt: number
  /** The node that made it. */
  readonly nodeId: string
  /** The id of the provider the store serves. */
  readonly provider: string
}

/** The framing version a snapshot's bytes are packed in (snapshot-pack.ts). */
export const SNAPSHOT_FORMAT = '1'
const POSITION_DIGITS = 16
const TIME_DIGITS = 15
const NAME = /^(\d{16})-(\d{15})-(.+)$/
const SHA256_HEX = /^[0-9a-f]{64}$/

/** The bucket of a stream's snapshots. */
export function snapshotBucketName(stream: string): string {
  return `price-store-${stream}-snapshots`
}

/** An object's name: position, then creation time, then the node, so that the order of names is that of snapshots. */
export function snapshotObjectName(position: number, createdAt: number, nodeId: string): string {
  return `${String(position).padStart(POSITION_DIGITS, '0')}-${String(createdAt).padStart(TIME_DIGITS, '0')}-${nodeId}`
}

/** The object metadata (string values) of a snapshot. */
export function snapshotMetadata(snapshot: Omit<Snapshot, 'stream' | 'bucket' | 'name' | 'bytes'>): Record<string, string> {
  return {
    'price-store-format': SNAPSHOT_FORMAT,
    position: String(snapshot.position),
    ...(snapshot.positionId === undefined ? {} : { 'position-id': snapshot.positionId }),
    sha256: snapshot.sha256,
    records: String(snapshot.records),
    'created-at': new Date(snapshot.createdAt).toISOString(),
    'node-id': snapshot.nodeId,
    provider: snapshot.provider,
  }
}

/**
 * The snapshot an object of the bucket describes, or `undefined` for an object that is not one this release made
 * (another name, another framing version, metadata missing or malformed, deleted): a listing passes over it.
 */
export function parseSnapshot(stream: string, info: ObjectInfo): Snapshot | undefined {
  const named = NAME.exec(info.name)
  const meta = info.metadata ?? {}
  if (named === null || info.deleted || meta['price-store-format'] !== SNAPSHOT_FORMAT) return undefined
  const position = counter(meta.position)
  const records = counter(meta.records)
  const createdAt = Date.parse(meta['created-at'] ?? '')
  const { sha256, provider } = meta
  const nodeId = meta['node-id']
  const positionId = meta['position-id']
  if (position === undefined || records === undefined || !Number.isSafeInteger(createdAt)) return undefined
  if (sha256 === undefined || !SHA256_HEX.test(sha256) || !isNodeId(nodeId) || provider === undefined || provider === '') return undefined
  // The name is how the newest is found: it must say what the metadata says.
  if (info.name !== snapshotObjectName(position, createdAt, nodeId)) return undefined
  return Object.freeze({
    stream, bucket: info.bucket, name: info.name, position, positionId, sha256, bytes: info.size, records, createdAt, nodeId, provider,
  })
}

/** Newest first: the higher position, then the later creation, then the name. */
export function newestFirst(a: Snapshot, b: Snapshot): number {
  return b.position - a.position || b.createdAt - a.createdAt || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0)
}

function counter(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,16}$/.test(text)) return undefined
  const value = Number(text)
  return Number.isSafeInteger(value) ? value : undefined
}
