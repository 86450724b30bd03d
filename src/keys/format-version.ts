/**
 * Format versions: the database's (meta key `format`) and the version byte
 * every stored value starts with, and the one check of it.
 *
 * Format 4 is format 3 plus **delta parts** (chunk parts written for records
 * that reach an hour after it was sealed) and the heads entry that counts
 * them. Log entries, chunk parts and journal entries kept format 3's layout
 * and its version byte; only the heads entry changed (version byte 4). So a
 * format 3 database is a format 4 database without delta parts, and opens
 * after its `format` key is rewritten (lifecycle/format.ts).
 *
 * Format 5 is format 4 plus **paged chunks**: a chunk's base parts become
 * pages of a few KB, and its key column (version byte 5) gives every base
 * record's timestamp, id and value header and says how many pages there
 * are, so one record is read with its page, not its hour. A chunk whose key
 * column has version byte 3 (format 4: empty values, one base part) or that
 * has none is read whole, as before; so a format 4 database is a format 5
 * one whose chunks are not paged yet, and opens the same way.
 */
import { MalformedBytes } from './bytes.js'
import type { ByteReader } from './bytes.js'

/** The database format this release writes and reads (meta key `format`). */
export const STORE_FORMAT = 5

/** Database formats this release opens by rewriting their `format` key: their layout is a subset of {@link STORE_FORMAT}'s. */
export const UPGRADABLE_FORMATS: readonly string[] = ['3', '4']

/** The version byte of log entries, chunk parts and journal entries (their layout is format 3's). */
export const VALUE_VERSION = 3

/**
 * The version byte of a paged chunk's key column (format 5): a chunk part
 * whose part count is the chunk's page count and whose values are the
 * records' 9-byte value headers (flags and value), see chunk-codec.ts.
 */
export const KEY_COLUMN_VERSION = 5

/** The version byte of heads entries written now: version 4 counts the chunk's delta parts. */
export const HEADS_VERSION = 4

/** The heads entry version written by format 3: no delta count (none could exist). */
export const HEADS_VERSION_WITHOUT_DELTAS = 3

/**
 * Reads a value's first byte, its version, and checks it is one of `accepted`.
 * Returns it, for a codec that reads more than one layout.
 * @throws MalformedBytes when it is not
 */
export function readFormatVersion(reader: ByteReader, accepted: readonly number[] = [VALUE_VERSION]): number {
  const version = reader.byte()
  if (!accepted.includes(version)) throw new MalformedBytes(`version ${version}, expected ${accepted.join(' or ')}`)
  return version
}
