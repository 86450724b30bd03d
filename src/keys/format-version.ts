/**
 * The format version every stored value starts with (log entries, chunk
 * parts, heads entries, journal entries), and the one check of it.
 */
import { MalformedBytes } from './bytes.js'
import type { ByteReader } from './bytes.js'

/** The format version of keys and values this release writes. */
export const STORE_FORMAT = 3

/**
 * Reads a value's first byte, its format version.
 * @throws MalformedBytes when it is not {@link STORE_FORMAT}
 */
export function readFormatVersion(reader: ByteReader): void {
  const version = reader.byte()
  if (version !== STORE_FORMAT) throw new MalformedBytes(`version ${version}, expected ${STORE_FORMAT}`)
}
