import type { AbstractLevel } from 'abstract-level'
import { PriceStoreError } from '../errors.js'
import type { BytesSublevel } from './level-source.js'

/**
 * The on-disk format this release writes into a new store: key layout,
 * sublevels, value layout and index levels. Format 2 is format 1 plus the
 * minute directories of the bucket index.
 */
export const STORE_FORMAT = 2
/** Formats this release reads and writes: a format-1 store stays format 1 and gets no minute directories. */
export const SUPPORTED_FORMATS: readonly number[] = Object.freeze([1, 2])
const FORMAT_KEY = 'format'

/**
 * The database's format version, written into a new database, so a later
 * release can tell which layout it is reading and migrate it.
 * @throws PriceStoreError `PRICE_UNSUPPORTED_FORMAT`
 */
export async function readFormat(meta: AbstractLevel<any, string, string>, prices: BytesSublevel): Promise<number> {
  const stored = await meta.get(FORMAT_KEY)
  if (stored === undefined) {
    const hasRecords = (await prices.keys({ limit: 1 }).all()).length > 0
    if (hasRecords) {
      throw new PriceStoreError('PRICE_UNSUPPORTED_FORMAT', 'the database holds price records but no format version; it was not written by price-store')
    }
    await meta.put(FORMAT_KEY, String(STORE_FORMAT))
    return STORE_FORMAT
  }
  const format = SUPPORTED_FORMATS.find((version) => stored === String(version))
  if (format === undefined) {
    throw new PriceStoreError(
      'PRICE_UNSUPPORTED_FORMAT',
      `the database has format version ${JSON.stringify(stored)}; this release reads versions ${SUPPORTED_FORMATS.join(' and ')}`,
    )
  }
  return format
}
