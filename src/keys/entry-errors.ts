import { PriceStoreError } from '../errors.js'

/**
 * The error for a stored entry that does not decode, naming it (e.g. `heads
 * BTC@...`, from the `describe*` functions of key-layout) in the message
 * and in `details.key`.
 */
export function undecodable(entry: string, err: unknown): PriceStoreError {
  const reason = err instanceof Error ? err.message : String(err)
  return new PriceStoreError('PRICE_CORRUPT_VALUE', `${entry} cannot be decoded: ${reason}`, { cause: err, details: { key: entry } })
}
