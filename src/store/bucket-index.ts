import { compareIds } from '../engine/compare-ids.js'
import {
  BUCKET_LEVELS, DIRECTORY_LEVEL, MAX_DIRECTORY_ENTRIES, decodeBucketValue, decodeDirectory, encodeBucketKey, encodeBucketValue,
  encodeDirectory,
} from '../keys/bucket-key.js'
import type { DirectoryEntry } from '../keys/bucket-key.js'
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
  /** Position of the head's record in the batch (-1 for a minute directory, which names many). */
  readonly position: number
}

const MINUTE_MS = 60_000

/**
 * The bucket-index entries a batch must write in the index sublevel: for every (symbol, level, bucket) the batch touches, a new
 * entry when the batch's latest record there is at least as late as the
 * stored one (equal: the same record rewritten, whose copy must follow).
 * With `directories` (format 2), also every touched minute's directory, the
 * stored one merged with the batch's records. `values` are the records'
 * encoded values, in the same order. Runs inside the store's write queue, so
 * the entries it reads cannot change before the batch commits.
 */
export async function bucketIndexUpdates(
  buckets: BytesSublevel,
  records: readonly StoredRecord[],
  values: readonly Uint8Array[],
  directories = false,
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
  const minutes = directories ? recordsByMinute(records) : []
  const stored = await buckets.getMany([...candidates.map((head) => head.key), ...minutes.map((minute) => minute.key)])
  const entries: IndexEntry[] = []
  minutes.forEach((minute, i) => {
    const merged = mergeDirectory(stored[candidates.length + i], minute.entries)
    if (merged !== undefined) entries.push({ key: minute.key, value: encodeDirectory(merged), symbol: minute.symbol, level: DIRECTORY_LEVEL, bucket: minute.minute, position: -1 })
  })
  candidates.forEach((head, i) => {
    const current = stored[i] === undefined ? undefined : decodeBucketValue(head.level, stored[i] as Uint8Array)
    if (current === undefined || !isLater(current, head.record)) {
      const { key, level, bucket, position, record } = head
      entries.push({ key, value: encodeBucketValue(level, record.timestamp, record.id, head.value), symbol: record.symbol, level, bucket, position })
    }
  })
  return entries
}

interface BatchMinute {
  readonly key: Buffer
  readonly symbol: string
  readonly minute: number
  readonly entries: DirectoryEntry[]
}

/** The batch's records grouped by (symbol, minute), as directory entries. */
function recordsByMinute(records: readonly StoredRecord[]): BatchMinute[] {
  const byKey = new Map<string, BatchMinute>()
  for (const { symbol, timestamp, id } of records) {
    const minute = Math.floor(timestamp / MINUTE_MS)
    const mapKey = `${minute}\u0000${symbol}`
    let group = byKey.get(mapKey)
    if (group === undefined) byKey.set(mapKey, (group = { key: encodeBucketKey(symbol, DIRECTORY_LEVEL, minute), symbol, minute, entries: [] }))
    group.entries.push({ timestamp, id })
  }
  return [...byKey.values()]
}

/**
 * A minute's stored directory with the batch's entries added, or `undefined`
 * when nothing changes (every entry already listed, or the minute overflowed
 * before). A stored value that does not decode is replaced by the overflow
 * mark: the records it listed are unknown, so the minute's edges are sought.
 */
function mergeDirectory(stored: Uint8Array | undefined, added: readonly DirectoryEntry[]): DirectoryEntry[] | 'overflow' | undefined {
  const current = stored === undefined ? [] : decodeDirectory(stored)
  if (current === 'overflow') return undefined
  if (current === undefined) return 'overflow'
  const byRecord = new Map<string, DirectoryEntry>()
  for (const entry of current) byRecord.set(`${entry.timestamp}\u0000${entry.id}`, entry)
  const before = byRecord.size
  for (const entry of added) byRecord.set(`${entry.timestamp}\u0000${entry.id}`, entry)
  if (byRecord.size === before) return undefined
  if (byRecord.size > MAX_DIRECTORY_ENTRIES) return 'overflow'
  return [...byRecord.values()].sort((a, b) => a.timestamp - b.timestamp || compareIds(a.id, b.id))
}

function isLater(a: { timestamp: number; id: string }, b: { timestamp: number; id: string }): boolean {
  return a.timestamp > b.timestamp || (a.timestamp === b.timestamp && compareIds(a.id, b.id) > 0)
}
