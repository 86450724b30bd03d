import { PriceStoreError } from '../errors.js'

/** Largest delay `setTimeout` honours (about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647

/**
 * `value` when it is a whole number from `min` to `max`, `fallback` when it
 * is undefined: the check every numeric option of the store, the HTTP
 * adapter and the CLI's configuration goes through.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the option, its range and the value
 */
export function checkIntegerOption(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new PriceStoreError('PRICE_INVALID_OPTIONS', `${name} must be a whole number from ${min} to ${max} (got ${String(value)})`)
  }
  return value
}
