import { MAX_PART_RECORDS, encodeChunkPart } from '../../keys/chunk-codec.js'
import type { ChunkRecord } from '../../keys/chunk-codec.js'
import { PERIOD_MS, chunkKey } from '../../keys/key-layout.js'
import type { RootBatch } from '../db/root-batch.js'
import type { HeadRows } from '../heads/heads-entry.js'
import type { HeadsIndex } from '../heads/heads-index.js'
import type { Row } from '../read/row.js'

/** Where a chunk goes: its parts under the chunks prefix, its heads entry into the heads index. */
export interface ChunkTargets {
  readonly chunksPrefix: Uint8Array
  readonly heads: HeadsIndex
}

/**
 * Puts the chunk parts and heads entry of `symbol` in `period` holding
 * `rows` (ascending, none repeated, at least one) into `batch`: what
 * sealing writes, and what a prune writes for the hour it cuts in two.
 * Returns the heads as rows, the chunk's bytes and its part count.
 */
export function putChunk(
  batch: RootBatch, targets: ChunkTargets, period: number, symbol: string, rows: readonly Row[],
): { heads: HeadRows; bytes: number; parts: number } {
  const records = rows.map(toChunkRecord)
  const parts = Math.ceil(records.length / MAX_PART_RECORDS)
  let bytes = 0
  for (let part = 0; part < parts; part++) {
    const value = encodeChunkPart(period * PERIOD_MS, parts, records.slice(part * MAX_PART_RECORDS, (part + 1) * MAX_PART_RECORDS))
    batch.put(targets.chunksPrefix, chunkKey(period, symbol, part), value)
    bytes += value.length
  }
  return { heads: targets.heads.put(batch, symbol, period, records), bytes, parts }
}

/** A row's stored parts, with its id as UTF-8. */
function toChunkRecord(row: Row): ChunkRecord {
  return { timestamp: row.timestamp, idBytes: row.idIsUtf8 ? row.idBytes : Buffer.from(row.id, 'utf8'), value: row.value }
}
