import { MAX_KEY_RECORDS, MAX_PART_RECORDS, encodeChunkPart, pageSpan, pagesFor } from '../../keys/chunk-codec.js'
import type { ChunkRecord } from '../../keys/chunk-codec.js'
import { KEY_COLUMN_VERSION, VALUE_VERSION } from '../../keys/format-version.js'
import { DELTA_PART, KEYS_PART, MAX_DELTA_PARTS, PERIOD_MS, chunkKey } from '../../keys/key-layout.js'
import type { RootBatch } from '../db/root-batch.js'
import { combineHeads, type HeadRows } from '../heads/heads-entry.js'
import type { HeadsIndex } from '../heads/heads-index.js'
import { mergeRows } from '../rows/open-area.js'
import type { Row } from '../rows/row.js'
import { findRow } from '../rows/row-list.js'
import type { SealedChunk } from './sealed-chunk.js'

/** Where a chunk goes: its parts under the chunks prefix, its heads entry into the heads index. */
export interface ChunkTargets {
  readonly chunksPrefix: Uint8Array
  readonly heads: HeadsIndex
}

/**
 * A sealed hour of one symbol as it stands: its heads entry, and the keys
 * of its records (delta parts merged in; from its key column and the heads
 * entry's delta keys when it has them, so no value is read).
 */
export interface SealedPeriod {
  readonly heads: HeadRows
  readonly keys: SealedChunk
}

/** What a chunk write put into the batch: the new heads as rows and the bytes of the parts written. */
export interface ChunkWrite {
  readonly heads: HeadRows
  readonly bytes: number
}

/**
 * Puts the chunk parts and heads entry of `symbol` in `period` holding
 * `rows` (ascending, none repeated, at least one) into `batch`, and the
 * deletion of the chunk's `oldDeltas` delta parts, now merged in: what
 * sealing writes when it rewrites an hour whole, and what a prune writes for
 * the hour it cuts in two. Returns the heads as rows, the chunk's bytes and
 * its part count.
 *
 * The chunk is paged: pages of about PAGE_BYTES (chunk-codec.ts) of
 * values as its base parts, and its key column (every record's timestamp,
 * id and value header), so a read of one record reads the key column and
 * one page; its heads entry lists each page's first record (the page
 * table), so a read of a few records reads only their page. A
 * chunk of more than {@link MAX_KEY_RECORDS} records is
 * written in parts of {@link MAX_PART_RECORDS} without a key column, and
 * read whole.
 */
export function putChunk(
  batch: RootBatch, targets: ChunkTargets, period: number, symbol: string, rows: readonly Row[], oldDeltas = 0,
): ChunkWrite & { parts: number } {
  const records = rows.map(toChunkRecord)
  const paged = records.length <= MAX_KEY_RECORDS
  const parts = paged ? pagesFor(records.length, records.reduce((sum, record) => sum + record.value.length, 0)) : Math.ceil(records.length / MAX_PART_RECORDS)
  const span = paged ? pageSpan(records.length, parts) : MAX_PART_RECORDS
  let bytes = 0
  for (let part = 0; part < parts; part++) {
    const value = encodeChunkPart(period * PERIOD_MS, parts, records, VALUE_VERSION, part * span, Math.min(records.length, (part + 1) * span))
    batch.put(targets.chunksPrefix, chunkKey(period, symbol, part), value)
    bytes += value.length
  }
  const keysKey = chunkKey(period, symbol, KEYS_PART)
  if (paged) batch.put(targets.chunksPrefix, keysKey, encodeChunkPart(period * PERIOD_MS, parts, records, KEY_COLUMN_VERSION))
  else batch.del(targets.chunksPrefix, keysKey)
  for (let delta = 0; delta < oldDeltas; delta++) batch.del(targets.chunksPrefix, chunkKey(period, symbol, DELTA_PART + delta))
  return { heads: targets.heads.put(batch, symbol, period, records, paged ? parts : 0), bytes, parts }
}

/**
 * Whether `rows` (open rows of a sealed hour) join its chunk as a delta
 * part rather than by rewriting it: while the chunk has fewer than
 * {@link MAX_DELTA_PARTS} and the rows are at most a quarter of its
 * records. So a late record or a rewrite costs about its own bytes, and a
 * chunk is rewritten only after deltas or a write of its own size, which
 * keeps every record's writes a bounded multiple of its size.
 */
export function joinsAsDelta(sealed: SealedPeriod, rows: number): boolean {
  return sealed.heads.deltas < MAX_DELTA_PARTS && rows <= MAX_PART_RECORDS && rows * 4 <= sealed.heads.records
}

/**
 * Puts a delta part of `symbol` in `period` holding `rows` (ascending, none
 * repeated, at least one) and the chunk's new heads entry into `batch`. A
 * row replaces a sealed record with the same timestamp and id (readers
 * merge later parts over earlier ones); the record count grows by the rows
 * that replace none. The entry keeps the keys of every delta record,
 * merged the same way, while they are few (see heads-codec.ts).
 */
export function putDelta(
  batch: RootBatch, targets: ChunkTargets, period: number, symbol: string, sealed: SealedPeriod, rows: readonly Row[],
): ChunkWrite {
  const periodStart = period * PERIOD_MS
  const value = encodeChunkPart(periodStart, 1, rows.map(toChunkRecord))
  batch.put(targets.chunksPrefix, chunkKey(period, symbol, DELTA_PART + sealed.heads.deltas), value)
  let added = 0
  for (const row of rows) if (findRow(sealed.keys, row.timestamp, row.id) === undefined) added++
  const summary = { records: sealed.heads.records + added, deltas: sealed.heads.deltas + 1 }
  const deltaRecords = mergeRows(deltaRows(sealed.keys), rows).map(toChunkRecord)
  const heads = targets.heads.putSummary(batch, symbol, period, summary, combineHeads(sealed.heads, rows).map(toChunkRecord), sealed.heads.pageStarts, deltaRecords)
  return { heads, bytes: value.length }
}

/** The rows of `keys` (a sealed hour's keys, delta parts merged in) that a delta part holds, ascending. */
function deltaRows(keys: SealedChunk): Row[] {
  const rows: Row[] = []
  for (let index = 0; index < keys.length; index++) if (keys.baseIndexAt(index) < 0) rows.push(keys.rowAt(index))
  return rows
}

/** A row's stored parts, with its id as UTF-8. */
function toChunkRecord(row: Row): ChunkRecord {
  return { timestamp: row.timestamp, idBytes: row.idIsUtf8 ? row.idBytes : Buffer.from(row.id, 'utf8'), value: row.value }
}
