/**
 * Format versions: the database's (meta key `format`) and the version byte
 * every stored value starts with, and the one check of it.
 *
 * A database records the format that wrote it, and this release opens
 * format {@link STORE_FORMAT} alone: a store of another format is refused
 * (lifecycle/format.ts), never converted in place. Its records cross over
 * as NDJSON: `price-store export` with the release that wrote it, then
 * `price-store import` into a new store. A change to any stored layout is a
 * new format, not a reader of two layouts.
 *
 * Each kind of value has its own version byte, checked as it is read:
 * log entries, chunk parts and journal entries {@link VALUE_VERSION}, a
 * paged chunk's key column {@link KEY_COLUMN_VERSION}, heads entries
 * {@link HEADS_VERSION}; the layouts are in key-layout.ts and the codecs.
 */
import { PriceStoreError } from '../errors.js'
import { MalformedBytes } from './bytes.js'
import type { ByteReader } from './bytes.js'

/** The database format this release writes and reads (meta key `format`), and the only one it opens. */
export const STORE_FORMAT = 9

/**
 * Checks a database's `format` value: this release opens {@link STORE_FORMAT} alone. A database of another format
 * is refused, and its message names the way over (its records as NDJSON).
 * @throws PriceStoreError `PRICE_UNSUPPORTED_FORMAT` (details.field `format`)
 */
export function checkStoreFormat(format: string): void {
  if (format === String(STORE_FORMAT)) return
  throw new PriceStoreError(
    'PRICE_UNSUPPORTED_FORMAT',
    `the database has format version ${JSON.stringify(format)}; this release opens format ${STORE_FORMAT} only and changes nothing in it. ` +
      'Export its records with the release that wrote it (price-store export --db DIR > records.ndjson), then import ' +
      'them into a new store with this one, naming the same provider (price-store import --db NEW_DIR [provider flags] records.ndjson)',
    { details: { field: 'format' } },
  )
}

/** The version byte of log entries, chunk parts and journal entries. */
export const VALUE_VERSION = 3

/**
 * The version byte of a paged chunk's key column: a chunk part
 * whose part count is the chunk's page count and whose values are the
 * records' 9-byte value headers (flags and value), see chunk-codec.ts.
 */
export const KEY_COLUMN_VERSION = 5

/** The version byte of heads entries: the heads, the delta count, the page table and the delta keys (heads-codec.ts). */
export const HEADS_VERSION = 7

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
