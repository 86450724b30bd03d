import { compareTimeAndId } from '../engine/compare-ids.js'
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
      if (held === undefined || compareTimeAndId(records[held] as StoredRecord, record) <= 0) byBucket.set(bucket, i)
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
    if (current === undefined || compareTimeAndId(current, head.record) <= 0) {
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
  const bySymbol = new Map<string, Map<number, BatchMinute>>()
  const groups: BatchMinute[] = []
  for (const { symbol, timestamp, id } of records) {
    const minute = Math.floor(timestamp / MINUTE_MS)
    let minutes = bySymbol.get(symbol)
    if (minutes === undefined) bySymbol.set(symbol, (minutes = new Map()))
    let group = minutes.get(minute)
    if (group === undefined) {
      minutes.set(minute, (group = { key: encodeBucketKey(symbol, DIRECTORY_LEVEL, minute), symbol, minute, entries: [] }))
      groups.push(group)
    }
    group.entries.push({ timestamp, id })
  }
  return groups
}

/**
 * A minute's stored directory with the batch's entries added, or `undefined`
 * when nothing changes (every entry already listed, or the minute overflowed
 * before). A stored value that does not decode is replaced by the overflow
 * mark: the records it listed are unknown, so the minute's edges are sought.
 */
function mergeDirectory(stored: Uint8Array | undefined, added: DirectoryEntry[]): DirectoryEntry[] | 'overflow' | undefined {
  const current = stored === undefined ? [] : decodeDirectory(stored)
  if (current === 'overflow') return undefined
  if (current === undefined) return 'overflow'
  const fresh = sortedUnique(added)
  const last = current[current.length - 1]
  // The usual case, appends: every new entry comes after the stored ones.
  const merged = last === undefined || compareTimeAndId(last, fresh[0] as DirectoryEntry) < 0 ? [...current, ...fresh] : mergeSorted(current, fresh)
  if (merged.length === current.length) return undefined
  return merged.length > MAX_DIRECTORY_ENTRIES ? 'overflow' : merged
}

/** Entries in (timestamp, id) order without repeats; a batch usually gives them in order already. */
function sortedUnique(entries: DirectoryEntry[]): DirectoryEntry[] {
  let ordered = true
  for (let i = 1; i < entries.length && ordered; i++) ordered = compareTimeAndId(entries[i - 1] as DirectoryEntry, entries[i] as DirectoryEntry) < 0
  if (ordered) return entries
  const sorted = [...entries].sort(compareTimeAndId)
  return sorted.filter((entry, i) => i === 0 || compareTimeAndId(sorted[i - 1] as DirectoryEntry, entry) !== 0)
}

/** The union of two sorted, repeat-free lists, sorted and repeat-free. */
function mergeSorted(a: readonly DirectoryEntry[], b: readonly DirectoryEntry[]): DirectoryEntry[] {
  const out: DirectoryEntry[] = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    const order = i === a.length ? 1 : j === b.length ? -1 : compareTimeAndId(a[i] as DirectoryEntry, b[j] as DirectoryEntry)
    if (order < 0) out.push(a[i++] as DirectoryEntry)
    else if (order > 0) out.push(b[j++] as DirectoryEntry)
    else {
      out.push(a[i++] as DirectoryEntry) // the same record listed twice: keep one
      j++
    }
  }
  return out
}

