import { compareIds } from '../engine/compare-ids.js'
import { BUCKET_LEVELS, decodeBucketValue, encodeBucketKey, encodeBucketValue } from '../keys/bucket-key.js'
import type { StoredRecord } from '../records/stored-record.js'
import type { BytesSublevel } from './level-source.js'

interface Head {
  readonly key: Buffer
  readonly timestamp: number
  readonly id: string
}

/**
 * The bucket-index entries a batch must write, as `[key, value]` pairs in the
 * index sublevel: for every (symbol, level, bucket) the batch touches, a new
 * pointer when the batch's latest record there is at least as late as the
 * stored one. Runs inside the store's write queue, so the pointers it reads
 * cannot change before the batch commits.
 */
export async function bucketIndexUpdates(
  buckets: BytesSublevel,
  records: readonly StoredRecord[],
): Promise<[Buffer, Buffer][]> {
  // Per symbol and level, the batch's latest record in each bucket, keyed by bucket number.
  const latest = new Map<string, Map<number, StoredRecord>[]>()
  for (const record of records) {
    let levels = latest.get(record.symbol)
    if (levels === undefined) latest.set(record.symbol, (levels = BUCKET_LEVELS.map(() => new Map())))
    for (let level = 0; level < BUCKET_LEVELS.length; level++) {
      const bucket = Math.floor(record.timestamp / (BUCKET_LEVELS[level] as number))
      const byBucket = levels[level] as Map<number, StoredRecord>
      const held = byBucket.get(bucket)
      if (held === undefined || isLater(record, held)) byBucket.set(bucket, record)
    }
  }
  const candidates: Head[] = []
  for (const [symbol, levels] of latest) {
    levels.forEach((byBucket, level) => {
      for (const [bucket, record] of byBucket) {
        candidates.push({ key: encodeBucketKey(symbol, level, bucket), timestamp: record.timestamp, id: record.id })
      }
    })
  }
  const stored = await buckets.getMany(candidates.map((head) => head.key))
  const entries: [Buffer, Buffer][] = []
  candidates.forEach((head, i) => {
    const current = stored[i] === undefined ? undefined : decodeBucketValue(stored[i] as Uint8Array)
    // Equal means the same record rewritten: harmless, and keeps the pointer valid.
    if (current === undefined || !isLater(current, head)) entries.push([head.key, encodeBucketValue(head.timestamp, head.id)])
  })
  return entries
}

function isLater(a: { timestamp: number; id: string }, b: { timestamp: number; id: string }): boolean {
  return a.timestamp > b.timestamp || (a.timestamp === b.timestamp && compareIds(a.id, b.id) > 0)
}
