/**
 * Assertions the tests share: an exact deep comparison (stricter than
 * `toEqual`: -0, key order, prototypes) and checks of coded errors.
 */
import { expect } from 'vitest'
import { PriceStoreError } from '../../src/errors.js'
import type { PriceStoreErrorCode } from '../../src/errors.js'

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
