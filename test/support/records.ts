/**
 * The tests' record helpers, built on the published factory of
 * `price-store/testing` (src/testing/records.ts: `makeRecord`, `TEST_PROVIDER`,
 * `T0`), so there is one record factory, one provider and one T0: `rec()`
 * takes any override (a bad value included, to test the run-time checks),
 * `without()` drops a field, and `expected()` is the returned shape of an
 * ingested record, built from SPEC §1, not from the implementation.
 */
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import type { NewPriceRecord, Provider } from '../../src/types.js'

export type Input = Record<string, unknown>

/**
 * A valid incoming record, {@link makeRecord}'s for the override's symbol and
 * timestamp (when they are a string and a safe integer), then `overrides`
 * win, any value, in their order (use {@link without} to drop a field).
 * Typed as the store's input even when an override spoils it, so tests of
 * the run-time checks need no casts.
 */
export function rec(overrides: Input = {}): Input & NewPriceRecord {
  const symbol = typeof overrides.symbol === 'string' ? overrides.symbol : 'BTC'
  const timestamp = Number.isSafeInteger(overrides.timestamp) ? (overrides.timestamp as number) : T0
  const out: Input = {}
  // makeRecord's id is always valid whatever the symbol (a test may pass a bad symbol).
  for (const [key, value] of Object.entries(makeRecord({ symbol, timestamp }))) define(out, key, value)
  // Defined, not assigned, so an own `__proto__` override stays an own field.
  for (const key of Object.keys(overrides)) define(out, key, overrides[key])
  return out as Input & NewPriceRecord
}

/** A copy of `record` without `field`. */
export function without(record: Input, field: string): Input {
  const out: Input = {}
  for (const key of Object.keys(record)) if (key !== field) define(out, key, record[key])
  return out
}

const KNOWN = ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp']
const NOT_EXTRA = new Set([...KNOWN, 'providerPublicKey', 'minutes'])

/**
 * What a query must return for an ingested record (SPEC §1 + contract):
 * known fields in order, extras in input order, then providerPublicKey,
 * then `minutes` (UTC minute of the hour) for the range form.
 */
export function expected(input: Input, options: { minutes?: boolean; provider?: Provider } = {}): Input {
  const provider = options.provider ?? TEST_PROVIDER
  const out: Input = {}
  for (const key of KNOWN) define(out, key, key === 'provider' ? provider.id : input[key])
  for (const key of Object.keys(input)) if (!NOT_EXTRA.has(key)) define(out, key, input[key])
  define(out, 'providerPublicKey', provider.publicKey)
  if (options.minutes === true) define(out, 'minutes', new Date(input.timestamp as number).getUTCMinutes())
  return out
}

function define(target: Input, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
