import { PriceStoreError } from '../errors.js'
import type { PriceStoreErrorCode } from '../errors.js'

/** Builds a coded query error naming the parameter. */
export function fail(code: PriceStoreErrorCode, parameter: string, message: string): PriceStoreError {
  return new PriceStoreError(code, message, { details: { parameter } })
}
