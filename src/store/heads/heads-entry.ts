/**
 * One entry of the heads index (see heads-index.ts): made from an hour's
 * records when it is sealed whole, from its heads when a delta part joins
 * it, and read back as rows.
 */
import { asBuffer } from '../../keys/bytes.js'
import { undecodable } from '../../keys/entry-errors.js'
import { encodeChunkPart, pageSpan, type ChunkRecord } from '../../keys/chunk-codec.js'
import { KEY_COLUMN_VERSION } from '../../keys/format-version.js'
import { MAX_DELTA_KEYS, encodeHeads, readHeads, type ReadSummary } from '../../keys/heads-codec.js'
import { idTag } from '../../rules/id-tag.js'
import { HEAD_MS, PERIOD_MS, describeHeads } from '../../keys/key-layout.js'
import type { Provider } from '../../types.js'
import { compareTimeAndId } from '../../rules/compare-ids.js'
import { Row } from '../rows/row.js'

/**
 * The heads entry of an hour's records (ascending, none repeated), written
 * whole: no delta parts. `pages`: how many pages they were written in (0:
 * not paged), for the entry's page table.
 */
export function headsEntryOf(period: number, records: readonly ChunkRecord[], pages: number): Buffer {
  const span = pages === 0 ? 0 : pageSpan(records.length, pages)
  const table = { timestamps: new Float64Array(pages), idTags: new Uint32Array(pages), records: records.length }
  for (let page = 0; page < pages; page++) {
    const first = records[page * span] as ChunkRecord
    table.timestamps[page] = first.timestamp
    table.idTags[page] = idTag(asBuffer(first.idBytes).toString('utf8'))
  }
  return encodeHeads(period * PERIOD_MS, { records: records.length, deltas: 0 }, headsOf(records), table)
}

/**
 * The delta keys of an hour whose delta parts hold `records` (ascending,
 * merged: one per timestamp and id) in `deltas` parts: a key column of them,
 * or `undefined` past {@link MAX_DELTA_KEYS} (see heads-codec.ts).
 */
export function deltaKeysOf(period: number, deltas: number, records: readonly ChunkRecord[]): Buffer | undefined {
  return records.length <= MAX_DELTA_KEYS ? encodeChunkPart(period * PERIOD_MS, deltas, records, KEY_COLUMN_VERSION) : undefined
}

/** The latest record of each ten-minute bucket of `records` (ascending), ascending. */
export function headsOf<T extends { readonly timestamp: number }>(records: readonly T[]): T[] {
  const heads: T[] = []
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as T
    const next = records[i + 1]
    if (next === undefined || Math.floor(next.timestamp / HEAD_MS) !== Math.floor(record.timestamp / HEAD_MS)) heads.push(record)
  }
  return heads
}

/**
 * The heads of a sealed hour of one symbol as rows, ascending, with the
 * chunk's record and delta counts, its page table and delta keys (as stored,
 * and parsed: their rows' values are value headers), and the entry's name
 * for error messages.
 */
export type HeadRows = readonly Row[] & ReadSummary & { readonly entry: string }

/**
 * The heads of an entry as rows (views into `bytes`), ascending, and the
 * chunk's record and delta counts, page table and delta keys (parsed here
 * once, so a reader of them meets no damage the entry did not name).
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` naming the entry when it does not decode
 */
export function headRows(symbol: string, period: number, bytes: Buffer, provider: Provider): HeadRows {
  const rows: Row[] = []
  const entry = describeHeads(symbol, period)
  try {
    const summary = readHeads(bytes, period * PERIOD_MS, (timestamp, idStart, idEnd, valueStart, valueEnd) => {
      rows.push(new Row(symbol, timestamp, bytes, idStart, idEnd, valueStart, valueEnd, entry, provider))
    })
    return Object.assign(rows, summary, { entry })
  } catch (err) {
    throw undecodable(entry, err)
  }
}

/**
 * The latest row of each ten-minute bucket of one period, from the sealed
 * heads and the open rows (an open row wins a tie: it replaced the sealed one).
 */
export function combineHeads(sealed: readonly Row[], open: readonly Row[]): readonly Row[] {
  if (open.length === 0) return sealed
  const byBucket = new Map<number, Row>()
  for (const head of sealed) byBucket.set(Math.floor(head.timestamp / HEAD_MS), head)
  for (const row of open) {
    const bucket = Math.floor(row.timestamp / HEAD_MS)
    const held = byBucket.get(bucket)
    if (held === undefined || compareTimeAndId(row, held) >= 0) byBucket.set(bucket, row)
  }
  return [...byBucket.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row)
}
