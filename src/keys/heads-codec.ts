/**
 * Heads entries: for the chunk of one symbol in one period, the latest
 * record of each non-empty ten-minute bucket, with a copy of its value, and
 * the chunk's record count. Ranges sampled at ten minutes or a multiple read
 * these instead of the chunk.
 *
 * `version (1 byte) | record count (varint) | head count (1 byte) |
 *  (timestamp offset from the period's start (varint) | id | value)*`,
 * id and value each a varint length and their bytes.
 */
import { ByteReader, ByteWriter, MalformedBytes } from './bytes.js'
import { HEADS_PER_PERIOD } from './key-layout.js'
import { STORE_FORMAT, readFormatVersion } from './format-version.js'
import type { ChunkRecord } from './chunk-codec.js'

/** Packs the heads of a chunk (ascending, at most one per ten-minute bucket) and its record count. */
export function encodeHeads(periodStart: number, count: number, heads: readonly ChunkRecord[]): Buffer {
  const writer = new ByteWriter(heads.reduce((sum, head) => sum + head.value.length + 64, 8))
  writer.byte(STORE_FORMAT).varint(count).byte(heads.length)
  for (const head of heads) writer.varint(head.timestamp - periodStart).sized(head.idBytes).sized(head.value)
  return writer.finish()
}

/**
 * Visits each head, ascending, with views into `bytes` (the id is UTF-8);
 * returns the chunk's record count.
 * @throws MalformedBytes when the entry does not parse
 */
export function readHeads(
  bytes: Buffer,
  periodStart: number,
  visit: (timestamp: number, idStart: number, idEnd: number, valueStart: number, valueEnd: number) => void,
): number {
  const reader = new ByteReader(bytes)
  readFormatVersion(reader)
  const count = reader.varint()
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
  return count
}

/**
 * The chunk's record count alone, without visiting the heads.
 * @throws MalformedBytes when the entry does not start as one
 */
export function readHeadsCount(bytes: Buffer): number {
  const reader = new ByteReader(bytes)
  readFormatVersion(reader)
  return reader.varint()
}
