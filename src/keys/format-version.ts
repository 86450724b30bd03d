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
 */
import { MalformedBytes } from './bytes.js'
import type { ByteReader } from './bytes.js'

/** The database format this release writes and reads (meta key `format`). */
export const STORE_FORMAT = 4

/** Database formats this release opens by rewriting their `format` key: their layout is a subset of {@link STORE_FORMAT}'s. */
export const UPGRADABLE_FORMATS: readonly string[] = ['3']

/** The version byte of log entries, chunk parts and journal entries (their layout is format 3's). */
export const VALUE_VERSION = 3

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
