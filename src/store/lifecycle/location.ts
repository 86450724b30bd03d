import { PriceStoreError, describeValue } from '../../errors.js'

/**
 * Checks where a store is opened: a directory path must be a non-empty string (classic-level's own
 * refusal of `''` carries no code). A database object is taken as it is.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` with `details.parameter` `location`
 */
export function checkLocation(location: unknown): void {
  if (typeof location === 'string' ? location.length > 0 : typeof location === 'object' && location !== null) return
  throw new PriceStoreError(
    'PRICE_INVALID_OPTIONS',
    `the location must be a directory path (a non-empty string) or an abstract-level database (got ${describeValue(location)})`,
    { details: { parameter: 'location' } },
  )
}
