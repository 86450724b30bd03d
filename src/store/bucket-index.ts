import { compareIds } from '../engine/compare-ids.js'
import { BUCKET_LEVELS, decodeBucketValue, encodeBucketKey, encodeBucketValue } from '../keys/bucket-key.js'
import type { StoredRecord } from '../records/stored-record.js'
import type { BytesSublevel } from './level-source.js'

interface Head {
  readonly key: Buffer
  readonly level: number
  readonly record: StoredRecord
  readonly value: Uint8Array
}

/**
 * The bucket-index entries a batch must write, as `[key, value]` pairs in the
 * index sublevel: for every (symbol, level, bucket) the batch touches, a new
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
): Promise<[Buffer, Buffer][]> {
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
        candidates.push({ key: encodeBucketKey(symbol, level, bucket), level, record: records[i] as StoredRecord, value: values[i] as Uint8Array })
      }
    })
  }
  const stored = await buckets.getMany(candidates.map((head) => head.key))
  const entries: [Buffer, Buffer][] = []
  candidates.forEach((head, i) => {
    const current = stored[i] === undefined ? undefined : decodeBucketValue(head.level, stored[i] as Uint8Array)
    if (current === undefined || !isLater(current, head.record)) {
      entries.push([head.key, encodeBucketValue(head.level, head.record.timestamp, head.record.id, head.value)])
    }
  })
  return entries
}

function isLater(a: { timestamp: number; id: string }, b: { timestamp: number; id: string }): boolean {
  return a.timestamp > b.timestamp || (a.timestamp === b.timestamp && compareIds(a.id, b.id) > 0)
}
