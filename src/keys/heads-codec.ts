/**
 * Heads entries: for the chunk of one symbol in one period, the latest
 * record of each non-empty ten-minute bucket, with a copy of its value, the
 * chunk's record count and how many delta parts it has. Ranges sampled at
 * ten minutes or a multiple read these instead of the chunk.
 *
 * `version (1 byte) | record count (varint) | delta count (varint) | head count (1 byte) |
 *  (timestamp offset from the period's start (varint) | id | value)*`,
 * id and value each a varint length and their bytes. A version 3 entry
 * (format 3) has no delta count: it has no delta parts.
 */
import { ByteReader, ByteWriter, MalformedBytes } from './bytes.js'
import { HEADS_PER_PERIOD, MAX_DELTA_PARTS } from './key-layout.js'
import { HEADS_VERSION, HEADS_VERSION_WITHOUT_DELTAS, readFormatVersion } from './format-version.js'
import type { ChunkRecord } from './chunk-codec.js'

const READABLE = [HEADS_VERSION, HEADS_VERSION_WITHOUT_DELTAS]

/** What a heads entry says of its chunk besides the heads. */
export interface ChunkSummary {
  /** Records in the chunk, delta parts merged in. */
  readonly records: number
  /** Delta parts (keys `DELTA_PART + 0 ..`), beside the base parts. */
  readonly deltas: number
}

/** Packs the heads of a chunk (ascending, at most one per ten-minute bucket), its record count and delta count. */
export function encodeHeads(periodStart: number, summary: ChunkSummary, heads: readonly ChunkRecord[]): Buffer {
  const writer = new ByteWriter(heads.reduce((sum, head) => sum + head.value.length + 64, 16))
  writer.byte(HEADS_VERSION).varint(summary.records).varint(summary.deltas).byte(heads.length)
  for (const head of heads) writer.varint(head.timestamp - periodStart).sized(head.idBytes).sized(head.value)
  return writer.finish()
}

/**
 * Visits each head, ascending, with views into `bytes` (the id is UTF-8);
 * returns the chunk's record and delta counts.
 * @throws MalformedBytes when the entry does not parse
 */
export function readHeads(
  bytes: Buffer,
  periodStart: number,
  visit: (timestamp: number, idStart: number, idEnd: number, valueStart: number, valueEnd: number) => void,
): ChunkSummary {
  const reader = new ByteReader(bytes)
  const summary = readSummary(reader)
  const heads = reader.byte()
  if (heads > HEADS_PER_PERIOD) throw new MalformedBytes(`${heads} heads, more than a period has`)
  for (let i = 0; i < heads; i++) {
    const timestamp = periodStart + reader.varint()
    const idStart = reader.sized()
    const idEnd = reader.offset
    const valueStart = reader.sized()
    visit(timestamp, idStart, idEnd, valueStart, reader.offset)
  }
  if (!reader.done) throw new MalformedBytes('bytes after the last head')
  return summary
}

/**
 * The chunk's record count alone, without visiting the heads.
 * @throws MalformedBytes when the entry does not start as one
 */
export function readHeadsCount(bytes: Buffer): number {
  return readSummary(new ByteReader(bytes)).records
}

function readSummary(reader: ByteReader): ChunkSummary {
  const version = readFormatVersion(reader, READABLE)
  const records = reader.varint()
  const deltas = version === HEADS_VERSION_WITHOUT_DELTAS ? 0 : reader.varint()
  if (deltas > MAX_DELTA_PARTS) throw new MalformedBytes(`${deltas} delta parts, more than a chunk holds`)
  return { records, deltas }
}
