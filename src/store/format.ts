import type { AbstractLevel } from 'abstract-level'
import { PriceStoreError } from '../errors.js'
import { VALUE_FORMAT } from '../keys/value-codec.js'
import type { BytesSublevel } from './level-source.js'

/** The on-disk format this release writes and reads: key layout, sublevels and value layout. */
export const STORE_FORMAT = VALUE_FORMAT
const FORMAT_KEY = 'format'

/**
 * Checks the database's format version, writing it into a new database, so
 * a later release can tell which layout it is reading and migrate it.
 * @throws PriceStoreError `PRICE_UNSUPPORTED_FORMAT`
 */
export async function readFormat(meta: AbstractLevel<any, string, string>, prices: BytesSublevel): Promise<void> {
  const stored = await meta.get(FORMAT_KEY)
  if (stored === undefined) {
    const hasRecords = (await prices.keys({ limit: 1 }).all()).length > 0
    if (hasRecords) {
      throw new PriceStoreError('PRICE_UNSUPPORTED_FORMAT', 'the database holds price records but no format version; it was not written by price-store')
    }
    await meta.put(FORMAT_KEY, String(STORE_FORMAT))
    return
  }
  if (stored !== String(STORE_FORMAT)) {
    throw new PriceStoreError(
      'PRICE_UNSUPPORTED_FORMAT',
      `the database has format version ${JSON.stringify(stored)}; this release reads version ${STORE_FORMAT}`,
    )
  }
}
