/**
 * Small, independent helpers for the unit tests and the store suite: a record
 * factory, the expected shape of a returned record (built from SPEC §1, not
 * from the implementation), an exact deep comparison, coded-error checks and
 * a counter of open snapshots.
 */
import { createHash } from 'node:crypto'
import { expect } from 'vitest'
import { PriceStoreError } from '../../src/errors.js'
import type { PriceStoreErrorCode } from '../../src/errors.js'
import type { NewPriceRecord, Provider } from '../../src/types.js'
import type { MemoryLevel } from 'memory-level'

export const PROVIDER: Provider = Object.freeze({
  name: 'redstone',
  id: 'I-5rWUehEv-MjdK9gFw09RxfSLQX9DIHxG614Wf8qo0',
  publicKey: 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA-test-public-key',
})

/** 2023-11-14T22:13:20.000Z */
export const T0 = 1_700_000_000_000

export type Input = Record<string, unknown>

/**
 * A valid incoming record; `overrides` win (use {@link without} to drop a field).
 * Typed as the store's input even when an override spoils it, so tests of the
 * run-time checks need no casts.
 */
export function rec(overrides: Input = {}): Input & NewPriceRecord {
  const symbol = typeof overrides.symbol === 'string' ? overrides.symbol : 'BTC'
  const timestamp = Number.isSafeInteger(overrides.timestamp) ? (overrides.timestamp as number) : T0
  const base: Input = {
    // Derived, but always a valid id whatever the symbol (a test may pass a bad symbol).
    id: `${createHash('sha256').update(symbol).digest('hex').slice(0, 12)}-${timestamp}`,
    symbol,
    provider: PROVIDER.id,
    value: 30_000 + (timestamp % 1000) / 8,
    signature: `sig-${symbol}-${timestamp}`,
    permawebTx: `tx-${timestamp}`,
    version: '0.4',
    source: { binance: 30_001.5, coinbase: 29_999.25 },
    timestamp,
  }
  const out: Input = {}
  for (const [key, value] of Object.entries(base)) define(out, key, value)
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
  const provider = options.provider ?? PROVIDER
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

/**
 * The first difference between two values, or `undefined` when they are
 * exactly equal: same types, numbers by Object.is (so -0 !== 0), same
 * prototypes, same own keys in the same order (so `__proto__` as an own key
 * counts), same property values.
 */
export function difference(actual: unknown, expectedValue: unknown, path = '$'): string | undefined {
  if (typeof actual !== typeof expectedValue) return `${path}: type ${typeof actual} !== ${typeof expectedValue}`
  if (typeof actual !== 'object' || actual === null || expectedValue === null) {
    return Object.is(actual, expectedValue) ? undefined : `${path}: ${show(actual)} !== ${show(expectedValue)}`
  }
  const a = actual as object
  const e = expectedValue as object
  if (Array.isArray(a) !== Array.isArray(e)) return `${path}: array vs non-array`
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(e)) return `${path}: different prototypes`
  const aKeys = Reflect.ownKeys(a)
  const eKeys = Reflect.ownKeys(e)
  if (aKeys.length !== eKeys.length || aKeys.some((key, i) => key !== eKeys[i])) {
    return `${path}: keys ${show(aKeys.map(String))} !== ${show(eKeys.map(String))}`
  }
  for (const key of aKeys) {
    const ad = Object.getOwnPropertyDescriptor(a, key) as PropertyDescriptor
    const ed = Object.getOwnPropertyDescriptor(e, key) as PropertyDescriptor
    if (key === 'length' && Array.isArray(a)) continue
    if (ad.enumerable !== ed.enumerable) return `${path}.${String(key)}: enumerability differs`
    const found = difference(ad.value, ed.value, `${path}.${String(key)}`)
    if (found !== undefined) return found
  }
  return undefined
}

/** Asserts exact equality in the sense of {@link difference}. */
export function expectExact(actual: unknown, expectedValue: unknown): void {
  expect(difference(actual, expectedValue)).toBeUndefined()
}

function show(value: unknown): string {
  if (typeof value === 'number' && Object.is(value, -0)) return '-0'
  if (typeof value === 'string') return JSON.stringify(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/** Runs `fn`, which must throw a PriceStoreError with `code`; returns it. */
export function throwsCode(fn: () => unknown, code: PriceStoreErrorCode): PriceStoreError {
  let caught: unknown
  try {
    fn()
  } catch (err) {
    caught = err
  }
  return checkCode(caught, code)
}

/** Awaits `promise`, which must reject with a PriceStoreError with `code`; returns it. */
export async function rejectsCode(promise: Promise<unknown>, code: PriceStoreErrorCode): Promise<PriceStoreError> {
  let caught: unknown
  try {
    await promise
  } catch (err) {
    caught = err
  }
  return checkCode(caught, code)
}

function checkCode(caught: unknown, code: PriceStoreErrorCode): PriceStoreError {
  expect(caught, `expected a PriceStoreError ${code}, nothing was thrown`).toBeDefined()
  expect(caught).toBeInstanceOf(PriceStoreError)
  const err = caught as PriceStoreError
  expect(err.code, err.message).toBe(code)
  return err
}

/** Whether `message` shows `value`, raw or as JSON escapes it (e.g. `\t`, a lone surrogate). */
export function mentions(message: string, value: string): boolean {
  return message.includes(value) || message.includes(JSON.stringify(value).slice(1, -1))
}

/** Compares strings by UTF-8 bytes, the order of the store's keys. */
export function byUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

/** Counts the snapshots a database has open: each read view holds one until it is released. */
export function countSnapshots(db: MemoryLevel<any, any>): { readonly open: number } {
  const counter = { open: 0 }
  const take = db.snapshot.bind(db)
  db.snapshot = (...args: Parameters<typeof take>) => {
    const snapshot = take(...args)
    counter.open++
    const close = snapshot.close.bind(snapshot)
    let closed = false
    snapshot.close = async () => {
      if (!closed) counter.open--
      closed = true
      return close()
    }
    return snapshot
  }
  return counter
}
