import type { AbstractBatchOperation, AbstractLevel } from 'abstract-level'
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
 * The bucket-index writes a batch needs: for every (symbol, level, bucket)
 * the batch touches, a new pointer when the batch's latest record there is
 * at least as late as the stored one. Runs inside the store's write queue, so
 * the pointers it reads cannot change before the batch commits.
 */
export async function bucketIndexUpdates(
  buckets: BytesSublevel,
  records: readonly StoredRecord[],
): Promise<AbstractBatchOperation<AbstractLevel<any, any, any>, any, any>[]> {
  const heads = new Map<string, Head>()
  for (const record of records) {
    for (let level = 0; level < BUCKET_LEVELS.length; level++) {
      const key = encodeBucketKey(record.symbol, level, Math.floor(record.timestamp / (BUCKET_LEVELS[level] as number)))
      const name = key.toString('latin1')
      const held = heads.get(name)
      if (held === undefined || isLater(record, held)) heads.set(name, { key, timestamp: record.timestamp, id: record.id })
    }
  }
  const candidates = [...heads.values()]
  const stored = await buckets.getMany(candidates.map((head) => head.key))
  const operations: AbstractBatchOperation<AbstractLevel<any, any, any>, any, any>[] = []
  candidates.forEach((head, i) => {
    const current = stored[i] === undefined ? undefined : decodeBucketValue(stored[i] as Uint8Array)
    // Equal means the same record rewritten: harmless, and keeps the pointer valid.
    if (current === undefined || !isLater(current, head)) {
      operations.push({ type: 'put', sublevel: buckets, key: head.key, value: encodeBucketValue(head.timestamp, head.id) })
    }
  })
  return operations
}

function isLater(a: { timestamp: number; id: string }, b: { timestamp: number; id: string }): boolean {
  return a.timestamp > b.timestamp || (a.timestamp === b.timestamp && compareIds(a.id, b.id) > 0)
}
