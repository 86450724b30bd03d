/**
 * One entry of the heads index (see heads-index.ts): made from an hour's
 * records when it is sealed, and read back as rows.
 */
import { undecodable } from '../../keys/entry-errors.js'
import type { ChunkRecord } from '../../keys/chunk-codec.js'
import { encodeHeads, readHeads } from '../../keys/heads-codec.js'
import { HEAD_MS, PERIOD_MS, describeHeads } from '../../keys/key-layout.js'
import type { Provider } from '../../types.js'
import { Row } from '../read/row.js'

/** The heads entry of an hour's records (ascending, none repeated). */
export function headsEntryOf(period: number, records: readonly ChunkRecord[]): Buffer {
  const heads: ChunkRecord[] = []
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as ChunkRecord
    const next = records[i + 1]
    if (next === undefined || Math.floor(next.timestamp / HEAD_MS) !== Math.floor(record.timestamp / HEAD_MS)) heads.push(record)
  }
  return encodeHeads(period * PERIOD_MS, records.length, heads)
}

/** The heads of a sealed hour of one symbol as rows, ascending, with the hour's record count. */
export type HeadRows = readonly Row[] & { readonly records: number }

/**
 * The heads of an entry as rows (views into `bytes`), ascending, and the
 * chunk's record count.
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` naming the entry when it does not decode
 */
export function headRows(symbol: string, period: number, bytes: Buffer, provider: Provider): HeadRows {
  const rows: Row[] = []
  const entry = describeHeads(symbol, period)
  try {
    const records = readHeads(bytes, period * PERIOD_MS, (timestamp, idStart, idEnd, valueStart, valueEnd) => {
      rows.push(new Row(symbol, timestamp, bytes, idStart, idEnd, valueStart, valueEnd, entry, provider))
    })
    return Object.assign(rows, { records })
  } catch (err) {
    throw undecodable(entry, err)
  }
}
