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
 *
 * Format 6 is format 5 plus a **page table** in the heads entry (version
 * byte 6): the first timestamp of each page of a paged chunk, so an as-of
 * read finds its record's page from the heads entry it reads anyway and
 * reads that page alone, not the key column first. Heads entries of
 * format 5 (version 4) have no page table and are read as before; so a
 * format 5 database opens as format 6 the same way.
 *
 * Format 7 is format 6 plus the **delta keys** of a chunk with delta parts
 * in its heads entry (version byte 7): the delta records' timestamps, ids
 * and value headers, merged, as a small key column. Reads of a few records
 * and reads of refs alone (candles, TWAP) then read no delta part unless a
 * delta record is returned whole. Heads entries of format 6 have none and
 * are read as before; so a format 6 database opens as format 7 the same way.
 *
 * Format 8 keeps signature verdicts in **groups**, one per commit, symbol
 * and hour (sublevel `w`), where format 7 kept one entry per record
 * (sublevel `v`): a verified batch of 10,000 records wrote 10,000 more
 * entries. Nothing else changed. A format 7 database opens as format 8
 * after its verdicts move into groups (store/lifecycle/verdict-migration.ts);
 * a database of format 3 to 6 holds no verdicts, so only its `format` key
 * changes.
 */
import { MalformedBytes } from './bytes.js'
import type { ByteReader } from './bytes.js'

/** The database format this release writes and reads (meta key `format`). */
export const STORE_FORMAT = 8

/**
 * Database formats this release opens by rewriting their `format` key: their layout is a subset of
 * {@link STORE_FORMAT}'s, but for format 7's verdicts, which move into groups as the store opens.
 */
export const UPGRADABLE_FORMATS: readonly string[] = ['3', '4', '5', '6', '7']

/** The version byte of log entries, chunk parts and journal entries (their layout is format 3's). */
export const VALUE_VERSION = 3

/**
 * The version byte of a paged chunk's key column (format 5): a chunk part
 * whose part count is the chunk's page count and whose values are the
 * records' 9-byte value headers (flags and value), see chunk-codec.ts.
 */
export const KEY_COLUMN_VERSION = 5

/** The version byte of heads entries written now (format 7): version 6's layout and the delta keys after the page table. */
export const HEADS_VERSION = 7

/** The heads entry version written by format 6: version 4's layout and a page table after the heads; no delta keys. */
export const HEADS_VERSION_WITHOUT_DELTA_KEYS = 6

/** The heads entry version written by formats 4 and 5: it counts the chunk's delta parts, and has no page table. */
export const HEADS_VERSION_WITHOUT_PAGES = 4

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
