import { MAX_PART_RECORDS, encodeChunkPart } from '../keys/chunk-codec.js'
import type { ChunkRecord } from '../keys/chunk-codec.js'
import { PERIOD_MS, chunkKey, headsKey } from '../keys/key-layout.js'
import type { Provider } from '../types.js'
import type { OpenArea } from './open-area.js'
import type { ReadView } from './read-view.js'
import { headRows, headsEntryOf } from './heads-index.js'
import { RootBatch } from './root-batch.js'
import type { Row } from './row.js'

/** A seal ready to commit: its atomic write, and the new heads of each chunk for the caches. */
export interface Seal {
  readonly batch: RootBatch
  readonly heads: ReadonlyMap<string, readonly Row[]>
}

/**
 * Builds the seal of one open hour: for each symbol with open rows there,
 * the hour's chunk rewritten with the open rows merged in (an open row
 * replaces a sealed one with the same timestamp and id) and its heads entry;
 * and the deletion of the hour's log entries. Written as one batch, so a
 * crash leaves either the log entries or the chunks, never half of either:
 * the records are never lost, and never returned twice.
 */
export function sealPeriod(
  view: ReadView,
  open: OpenArea,
  period: number,
  provider: Provider,
  prefixes: { readonly log: Uint8Array; readonly chunks: Uint8Array; readonly heads: Uint8Array },
): Seal {
  const batch = new RootBatch()
  const heads = new Map<string, readonly Row[]>()
  const held = open.period(period)
  if (held === undefined) return { batch, heads }
  const periodStart = period * PERIOD_MS
  for (const symbol of held.symbols.keys()) {
    const records = view.periodRows(symbol, period).map(toChunkRecord)
    const parts = Math.ceil(records.length / MAX_PART_RECORDS)
    for (let part = 0; part < parts; part++) {
      const slice = records.slice(part * MAX_PART_RECORDS, (part + 1) * MAX_PART_RECORDS)
      batch.put(prefixes.chunks, chunkKey(period, symbol, part), encodeChunkPart(periodStart, parts, slice))
    }
    const headsEntry = headsEntryOf(period, records)
    batch.put(prefixes.heads, headsKey(symbol, period), headsEntry)
    heads.set(symbol, headRows(symbol, period, headsEntry, provider))
  }
  for (const key of held.logKeys) batch.del(prefixes.log, key)
  return { batch, heads }
}

/** A row's stored parts, with its id as UTF-8. */
function toChunkRecord(row: Row): ChunkRecord {
  return { timestamp: row.timestamp, idBytes: row.idIsUtf8 ? row.idBytes : Buffer.from(row.id, 'utf8'), value: row.value }
}
