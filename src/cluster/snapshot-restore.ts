/**
 * Restoring a snapshot into a new store directory, all or nothing: its
 * files are unpacked into `DIR.partial` (marked as work in progress) while
 * the bytes are hashed, and only once the whole object is read and its
 * SHA-256 is the one its listing gave are they flushed to the disk and the
 * directory renamed to `DIR`. A digest that differs, bytes that do not
 * unpack, or a failure on the way remove `DIR.partial` and leave no `DIR`;
 * a process killed meanwhile leaves only the marked `DIR.partial`, which
 * the next restore (or backup) to `DIR` removes.
 */
import { createHash, type Hash } from 'node:crypto'
import type { ObjectResult } from '@nats-io/obj'
import { PriceStoreError, isPriceStoreError } from '../errors.js'
import { newDirectoryTarget, writeWholeDirectory } from '../store/services/partial-directory.js'
import { asLogError, openBucket, resolveSnapshotConnection, sourceOf, withConnection, type SnapshotConnection } from './snapshot-bucket.js'
import type { Snapshot } from './snapshot-names.js'
import { unpackDirectory } from './snapshot-pack.js'

/** Options of {@link restoreSnapshot}. */
export interface RestoreSnapshotOptions {
  /**
   * Where to fetch the snapshot from, for one this process did not list or publish (e.g. a {@link Snapshot} read as
   * JSON); by default, where it was listed or published.
   */
  readonly connection?: SnapshotConnection
}

/** What {@link restoreSnapshot} wrote. */
export interface RestoredSnapshot {
  /** The store's directory, absolute: open it with `PriceStore.open(location, { provider })`. */
  readonly location: string
  readonly snapshot: Snapshot
  /** Files and bytes of the store directory written. */
  readonly files: number
  readonly bytes: number
}

/**
 * Downloads `snapshot` and writes the store it holds into `dir` (which must not exist, or be empty), checking its
 * SHA-256 against the snapshot's before `dir` appears. Open the result as a store of the snapshot's provider; a
 * cluster node started on it follows the stream from the snapshot's position.
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` (the bytes are not those the snapshot's digest names, or do not unpack:
 *   nothing is left at `dir` nor `DIR.partial`); `PRICE_INVALID_OPTIONS` (parameter `dir`: not empty, or an unmarked
 *   `DIR.partial` is in the way; parameter `snapshot`: not one this process listed, and no `connection` given);
 *   `PRICE_LOG_UNAVAILABLE` (NATS cannot be reached, or the snapshot is no longer in the bucket: list again)
 */
export async function restoreSnapshot(snapshot: Snapshot, dir: string, options: RestoreSnapshotOptions = {}): Promise<RestoredSnapshot> {
  const source = options.connection === undefined ? sourceOf(snapshot) : resolveSnapshotConnection(options.connection)
  if (source === undefined) {
    throw new PriceStoreError('PRICE_INVALID_OPTIONS', 'snapshot: not one listSnapshots or publishSnapshot returned in this process; give options.connection', { details: { parameter: 'snapshot' } })
  }
  const target = await newDirectoryTarget(dir, 'a restore')
  const written = await writeWholeDirectory(target, 'a restore', (partial) => withConnection(source, async (nc) => {
    const bucket = await openBucket(nc, snapshot.stream)
    const object = await bucket?.get(snapshot.name).catch((err: unknown) => { throw asLogError(err, `cannot read the snapshot ${snapshot.name}`) })
    if (object === undefined || object === null) throw gone(snapshot)
    return download(object, snapshot, partial)
  }))
  return Object.freeze({ location: target, snapshot, ...written })
}

/** Unpacks the object into `partial`, then checks that what was read is the snapshot its listing described. */
async function download(object: ObjectResult, snapshot: Snapshot, partial: string): Promise<{ files: number; bytes: number }> {
  const hash = createHash('sha256')
  try {
    const written = await unpackDirectory(hashed(object.data, hash), partial)
    // Resolves with null, or nothing, when the download completed.
    const failed = await object.error
    if (failed !== null && failed !== undefined) throw failed
    const sha256 = hash.digest('hex')
    if (sha256 !== snapshot.sha256) {
      throw new PriceStoreError('PRICE_CORRUPT_VALUE', `the snapshot ${snapshot.name} in ${snapshot.bucket} has SHA-256 ${sha256}, not ${snapshot.sha256} as listed: refused`)
    }
    return written
  } catch (err) {
    if (isPriceStoreError(err)) throw err
    // The client checks the bucket's own digest of the object as the last piece arrives.
    if (err instanceof Error && /corrupt object|digests do not match/i.test(err.message)) {
      throw new PriceStoreError('PRICE_CORRUPT_VALUE', `the snapshot ${snapshot.name} in ${snapshot.bucket} is damaged: ${err.message.split('\n')[0]}`, { cause: err })
    }
    throw asLogError(err, `cannot read the snapshot ${snapshot.name}`)
  }
}

async function* hashed(data: ReadableStream<Uint8Array>, hash: Hash): AsyncGenerator<Uint8Array> {
  for await (const piece of data) {
    hash.update(piece)
    yield piece
  }
}

function gone(snapshot: Snapshot): PriceStoreError {
  return new PriceStoreError('PRICE_LOG_UNAVAILABLE', `the snapshot ${snapshot.name} is no longer in ${snapshot.bucket} (removed by a newer one's retention?): list the snapshots again`, {
    details: { parameter: 'snapshot' },
  })
}
