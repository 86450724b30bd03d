import { compareIds } from '../engine/compare-ids.js'
import { BUCKET_LEVELS, decodeBucketValue, encodeBucketKey, encodeBucketValue } from '../keys/bucket-key.js'
import type { StoredRecord } from '../records/stored-record.js'
import type { BytesSublevel } from './level-source.js'

interface Head {
  readonly key: Buffer
  readonly level: number
  readonly bucket: number
  /** Position of the head's record in the batch. */
  readonly position: number
  readonly record: StoredRecord
  readonly value: Uint8Array
}

/** One index entry a batch writes: its key and value, and which bucket's head it makes which record. */
export interface IndexEntry {
  readonly key: Buffer
  readonly value: Buffer
  readonly symbol: string
  readonly level: number
  readonly bucket: number
  /** Position of the head's record in the batch. */
  readonly position: number
}

/**
 * The bucket-index entries a batch must write in the index sublevel: for every (symbol, level, bucket) the batch touches, a new
 * entry when the batch's latest record there is at least as late as the
 * stored one (equal: the same record rewritten, whose copy must follow).
 * `values` are the records' encoded values, in the same order. Runs inside
 * the store's write queue, so the entries it reads cannot change before the
 * batch commits.
 */
export async function bucketIndexUpdates(
  buckets: BytesSublevel,
  records: readonly StoredRecord[],
  values: readonly Uint8Array[],
): Promise<IndexEntry[]> {
  // Per symbol and level, the batch's latest record in each bucket (by position), keyed by bucket number.
  const latest = new Map<string, Map<number, number>[]>()
  records.forEach((record, i) => {
    let levels = latest.get(record.symbol)
    if (levels === undefined) latest.set(record.symbol, (levels = BUCKET_LEVELS.map(() => new Map())))
    for (let level = 0; level < BUCKET_LEVELS.length; level++) {
      const bucket = Math.floor(record.timestamp / (BUCKET_LEVELS[level] as number))
      const byBucket = levels[level] as Map<number, number>
      const held = byBucket.get(bucket)
      // Later positions win ties: within a batch, the last write of a key is the one stored.
      if (held === undefined || !isLater(records[held] as StoredRecord, record)) byBucket.set(bucket, i)
    }
  })
  const candidates: Head[] = []
  for (const [symbol, levels] of latest) {
    levels.forEach((byBucket, level) => {
      for (const [bucket, i] of byBucket) {
        const record = records[i] as StoredRecord
        candidates.push({ key: encodeBucketKey(symbol, level, bucket), level, bucket, position: i, record, value: values[i] as Uint8Array })
      }
    })
  }
  const stored = await buckets.getMany(candidates.map((head) => head.key))
  const entries: IndexEntry[] = []
  candidates.forEach((head, i) => {
    const current = stored[i] === undefined ? undefined : decodeBucketValue(head.level, stored[i] as Uint8Array)
    if (current === undefined || !isLater(current, head.record)) {
      const { key, level, bucket, position, record } = head
      entries.push({ key, value: encodeBucketValue(level, record.timestamp, record.id, head.value), symbol: record.symbol, level, bucket, position })
    }
  })
  return entries
}

function isLater(a: { timestamp: number; id: string }, b: { timestamp: number; id: string }): boolean {
  return a.timestamp > b.timestamp || (a.timestamp === b.timestamp && compareIds(a.id, b.id) > 0)
}
