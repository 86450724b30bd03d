import { describe, expect, it } from 'vitest'
import { PriceStoreError, describeValue, isPriceStoreError } from '../../src/errors.js'
import * as publicApi from '../../src/index.js'

describe('PriceStoreError', () => {
  it('is an Error with a stable code, a message and the name PriceStoreError', () => {
    const err = new PriceStoreError('PRICE_INVALID_QUERY', 'limit must be between 1 and 3000 (got 0)')
    expect(err).toBeInstanceOf(Error)
    expect(err).toBeInstanceOf(PriceStoreError)
    expect(err.code).toBe('PRICE_INVALID_QUERY')
    expect(err.message).toBe('limit must be between 1 and 3000 (got 0)')
    expect(err.name).toBe('PriceStoreError')
    expect(String(err)).toBe('PriceStoreError: limit must be between 1 and 3000 (got 0)')
    expect(err.stack?.startsWith('PriceStoreError: limit must be')).toBe(true)
  })

  it('is exported from the package entry point', () => {
    expect(publicApi.PriceStoreError).toBe(PriceStoreError)
    expect(publicApi.isPriceStoreError).toBe(isPriceStoreError)
  })

  it('keeps the cause (ES2022), including falsy causes', () => {
    const cause = Object.assign(new Error('IO error: LOCK'), { code: 'LEVEL_LOCKED' })
    expect(new PriceStoreError('PRICE_LOCKED', 'locked', { cause }).cause).toBe(cause)
    expect(new PriceStoreError('PRICE_STORAGE_ERROR', 'x', { cause: null }).cause).toBeNull()
    expect(new PriceStoreError('PRICE_STORAGE_ERROR', 'x', { cause: 0 }).cause).toBe(0)
  })

  it('has no cause when none is given', () => {
    const err = new PriceStoreError('PRICE_NOT_OPEN', 'closed')
    expect(Object.hasOwn(err, 'cause')).toBe(false)
    expect(err.cause).toBeUndefined()
  })

  it('details are a frozen copy', () => {
    const given = { parameter: 'limit' }
    const err = new PriceStoreError('PRICE_INVALID_QUERY', 'x', { details: given })
    expect(err.details).toEqual({ parameter: 'limit' })
    expect(Object.isFrozen(err.details)).toBe(true)
    given.parameter = 'offset'
    expect(err.details.parameter).toBe('limit')
    expect(() => {
      ;(err.details as { parameter?: string }).parameter = 'changed'
    }).toThrow(TypeError)
    expect(err.details.parameter).toBe('limit')
  })

  it('details default to a frozen empty object', () => {
    const err = new PriceStoreError('PRICE_NOT_OPEN', 'x')
    expect(err.details).toEqual({})
    expect(Object.isFrozen(err.details)).toBe(true)
  })

  it('keeps every detail field', () => {
    const details = { parameter: 'interval', field: 'value', index: 3, key: 'BTC@1#a', count: 12, cap: 10 }
    expect(new PriceStoreError('PRICE_RANGE_TOO_LARGE', 'x', { details }).details).toEqual(details)
  })
})

describe('isPriceStoreError', () => {
  const err = new PriceStoreError('PRICE_NOT_OPEN', 'closed')

  it('is true for a PriceStoreError, with or without a matching code', () => {
    expect(isPriceStoreError(err)).toBe(true)
    expect(isPriceStoreError(err, 'PRICE_NOT_OPEN')).toBe(true)
  })

  it('is false when the code does not match', () => {
    expect(isPriceStoreError(err, 'PRICE_LOCKED')).toBe(false)
  })

  it('checks the code, not instanceof: a plain object with a PRICE_ code counts (a second package copy)', () => {
    const foreign = { name: 'PriceStoreError', code: 'PRICE_LOCKED', message: 'locked' }
    expect(isPriceStoreError(foreign)).toBe(true)
    expect(isPriceStoreError(foreign, 'PRICE_LOCKED')).toBe(true)
    expect(isPriceStoreError(foreign, 'PRICE_NOT_OPEN')).toBe(false)
    class OtherCopy extends Error {
      readonly code = 'PRICE_INVALID_RECORD'
    }
    expect(isPriceStoreError(new OtherCopy('x'), 'PRICE_INVALID_RECORD')).toBe(true)
  })

  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a string that looks like a code', 'PRICE_NOT_OPEN'],
    ['a plain Error', new Error('x')],
    ['a Level error', Object.assign(new Error('x'), { code: 'LEVEL_LOCKED' })],
    ['a Node error', Object.assign(new Error('x'), { code: 'ENOENT' })],
    ['a lower-case price_ code', { code: 'price_not_open' }],
    ['a numeric code', { code: 5 }],
    ['an object without code', { message: 'PRICE_NOT_OPEN' }],
  ])('is false for %s', (_name, value) => {
    expect(isPriceStoreError(value)).toBe(false)
    expect(isPriceStoreError(value, 'PRICE_NOT_OPEN')).toBe(false)
  })
})

describe('describeValue (how messages show the value received)', () => {
  it('quotes strings and escapes what JSON escapes', () => {
    expect(describeValue('BTC USD')).toBe('"BTC USD"')
    expect(describeValue('')).toBe('""')
    expect(describeValue('a\tb')).toBe('"a\\tb"')
  })

  it('shows other values recognisably', () => {
    expect(describeValue(undefined)).toBe('undefined')
    expect(describeValue(null)).toBe('null')
    expect(describeValue(12.5)).toBe('12.5')
    expect(describeValue(5n)).toBe('5n')
    expect(describeValue(() => 1)).toBe('function')
    expect(describeValue({ a: 1 })).toBe('{"a":1}')
  })

  it('shows NaN and Infinity as such, not as "null" (JSON.stringify)', () => {
    expect(describeValue(Number.NaN)).toContain('NaN')
    expect(describeValue(Number.POSITIVE_INFINITY)).toContain('Infinity')
    expect(describeValue(Number.NEGATIVE_INFINITY)).toContain('-Infinity')
  })

  it('survives values JSON cannot render', () => {
    const circular: Record<string, unknown> = {}
    circular.self = circular
    expect(typeof describeValue(circular)).toBe('string')
    expect(describeValue(Symbol('s'))).toBe('symbol')
  })

  it('cuts long values to at most 80 characters', () => {
    const text = describeValue('x'.repeat(1000))
    expect(text.length).toBeLessThanOrEqual(80)
    expect(text.startsWith('"xxxxxxxx')).toBe(true)
  })
})
