import { describe, expect, it } from 'vitest'
import { isPriceStoreError } from '../../src/errors.js'
import type { PriceStoreErrorCode } from '../../src/errors.js'
import { toLatestQuery, toRangeQuery, toSeveralQuery } from '../../src/engine/typed-queries.js'
import { DEFAULT_LIMITS } from '../../src/types.js'
import { mentions, throwsCode } from '../support/assertions.js'

const L = DEFAULT_LIMITS
const MAX = Number.MAX_SAFE_INTEGER

function fails(fn: () => unknown, code: PriceStoreErrorCode, parameter: string, shown?: string): void {
  const err = throwsCode(fn, code)
  expect(err.details.parameter, err.message).toBe(parameter)
  expect(err.message).toContain(parameter)
  if (shown !== undefined) expect(mentions(err.message, shown), `message ${JSON.stringify(err.message)} should show ${shown}`).toBe(true)
}

/** Not a safe integer >= 0, as typed options might receive from JavaScript callers. */
// (How NaN and Infinity are shown is checked once, below.)
const BAD_NUMBERS: [string, unknown, string | undefined][] = [
  ['a fraction', 1.5, '1.5'],
  ['negative', -1, '-1'],
  ['NaN', Number.NaN, undefined],
  ['Infinity', Number.POSITIVE_INFINITY, undefined],
  ['2^53', 2 ** 53, '9007199254740992'],
  ['a numeric string', '5', '5'],
  ['null', null, 'null'],
  ['a bigint', 5n, '5'],
  ['a boolean', true, 'true'],
]

it('messages show NaN and Infinity as received (not as "null")', () => {
  fails(() => toLatestQuery('BTC', { limit: Number.NaN }, L), 'PRICE_INVALID_QUERY', 'limit', 'NaN')
  fails(() => toRangeQuery('BTC', { from: 0, to: Number.POSITIVE_INFINITY, interval: 1 }, L), 'PRICE_INVALID_RANGE', 'to', 'Infinity')
})

describe('toLatestQuery', () => {
  it('applies defaults: limit 1, offset 0, no window; the result is frozen', () => {
    const q = toLatestQuery('BTC', {}, L)
    expect(q).toStrictEqual({ kind: 'latest', symbol: 'BTC', limit: 1, offset: 0 })
    expect(Object.isFrozen(q)).toBe(true)
  })

  it('keeps limit, offset, from, to', () => {
    expect(toLatestQuery('BTC', { limit: 3000, offset: MAX, from: 0, to: MAX }, L)).toStrictEqual({
      kind: 'latest', symbol: 'BTC', limit: 3000, offset: MAX, from: 0, to: MAX,
    })
  })

  it.each(BAD_NUMBERS)('refuses limit that is %s', (_n, limit, shown) => {
    fails(() => toLatestQuery('BTC', { limit: limit as number }, L), 'PRICE_INVALID_QUERY', 'limit', shown)
  })

  it('refuses limit 0 and maxLimit + 1', () => {
    fails(() => toLatestQuery('BTC', { limit: 0 }, L), 'PRICE_INVALID_QUERY', 'limit', '0')
    fails(() => toLatestQuery('BTC', { limit: 3001 }, L), 'PRICE_INVALID_QUERY', 'limit', '3001')
    fails(() => toLatestQuery('BTC', { limit: 6 }, { ...L, maxLimit: 5 }), 'PRICE_INVALID_QUERY', 'limit', '6')
  })

  it.each(BAD_NUMBERS)('refuses offset that is %s', (_n, offset, shown) => {
    fails(() => toLatestQuery('BTC', { offset: offset as number }, L), 'PRICE_INVALID_QUERY', 'offset', shown)
  })

  it.each(BAD_NUMBERS)('refuses from that is %s', (_n, from, shown) => {
    fails(() => toLatestQuery('BTC', { from: from as number }, L), 'PRICE_INVALID_RANGE', 'from', shown)
  })

  it.each(BAD_NUMBERS)('refuses to that is %s', (_n, to, shown) => {
    fails(() => toLatestQuery('BTC', { to: to as number }, L), 'PRICE_INVALID_RANGE', 'to', shown)
  })

  it('refuses from > to', () => {
    const err = throwsCode(() => toLatestQuery('BTC', { from: 2, to: 1 }, L), 'PRICE_INVALID_RANGE')
    expect(err.message).toContain('2')
    expect(err.message).toContain('1')
  })

  it.each<[string, unknown]>([
    ['empty', ''],
    ['with a space', 'BTC USD'],
    ['with a comma', 'A,B'],
    ['a number', 5],
    ['undefined', undefined],
    ['65 code points', 'x'.repeat(65)],
  ])('refuses a symbol that is %s with PRICE_INVALID_SYMBOL', (_n, symbol) => {
    fails(() => toLatestQuery(symbol, {}, L), 'PRICE_INVALID_SYMBOL', 'symbol')
  })
})

describe('toSeveralQuery', () => {
  it('undefined symbols means all', () => {
    expect(toSeveralQuery(undefined, {}, L)).toStrictEqual({ kind: 'several', symbols: 'all' })
  })

  it('dedupes keeping first-occurrence order; the list is frozen', () => {
    const q = toSeveralQuery(['ETH', 'BTC', 'ETH', '__proto__', 'BTC'], { from: 1, to: 2 }, L)
    expect(q).toStrictEqual({ kind: 'several', symbols: ['ETH', 'BTC', '__proto__'], from: 1, to: 2 })
    expect(Object.isFrozen(q.symbols)).toBe(true)
  })

  it('an empty list asks for nothing', () => {
    expect(toSeveralQuery([], {}, L)).toStrictEqual({ kind: 'several', symbols: [] })
  })

  it.each<[string, unknown]>([
    ['a string instead of an array', 'BTC,ETH'],
    ['null', null],
  ])('refuses symbols that is %s with PRICE_INVALID_SYMBOL', (_n, symbols) => {
    fails(() => toSeveralQuery(symbols as string[], {}, L), 'PRICE_INVALID_SYMBOL', 'symbols')
  })

  it.each<[string, unknown[]]>([
    ['an empty entry', ['A', '']],
    ['a number entry', ['A', 5]],
    ['an entry with a comma', ['A,B']],
    ['an entry with U+3000', ['A\u3000']],
  ])('refuses a list with %s with PRICE_INVALID_SYMBOL', (_n, symbols) => {
    fails(() => toSeveralQuery(symbols, {}, L), 'PRICE_INVALID_SYMBOL', 'symbols')
  })

  it('refuses more than maxSymbols distinct names, counting duplicates once', () => {
    const limits = { ...L, maxSymbols: 2 }
    expect(toSeveralQuery(['A', 'B', 'A'], {}, limits).symbols).toEqual(['A', 'B'])
    fails(() => toSeveralQuery(['A', 'B', 'C'], {}, limits), 'PRICE_INVALID_QUERY', 'symbols', '3')
  })

  it.each(BAD_NUMBERS)('refuses from/to that is %s', (_n, bad) => {
    fails(() => toSeveralQuery(['A'], { from: bad as number }, L), 'PRICE_INVALID_RANGE', 'from')
    fails(() => toSeveralQuery(undefined, { to: bad as number }, L), 'PRICE_INVALID_RANGE', 'to')
  })

  it('refuses from > to', () => {
    throwsCode(() => toSeveralQuery(undefined, { from: 5, to: 4 }, L), 'PRICE_INVALID_RANGE')
  })
})

describe('toRangeQuery', () => {
  it('builds the range query, offset default 0, no limit unless given', () => {
    expect(toRangeQuery('BTC', { from: 0, to: MAX, interval: 1 }, L)).toStrictEqual({
      kind: 'range', symbol: 'BTC', from: 0, to: MAX, interval: 1, origin: 0, offset: 0,
    })
    expect(toRangeQuery('BTC', { from: 5, to: 5, interval: MAX, limit: 3000, offset: 4 }, L)).toStrictEqual({
      kind: 'range', symbol: 'BTC', from: 5, to: 5, interval: MAX, origin: 0, offset: 4, limit: 3000,
    })
  })

  it('refuses a missing from or to with PRICE_INVALID_RANGE naming it', () => {
    fails(() => toRangeQuery('BTC', { to: 10, interval: 1 } as never, L), 'PRICE_INVALID_RANGE', 'from')
    fails(() => toRangeQuery('BTC', { from: 10, interval: 1 } as never, L), 'PRICE_INVALID_RANGE', 'to')
    fails(() => toRangeQuery('BTC', { interval: 1 } as never, L), 'PRICE_INVALID_RANGE', 'from')
  })

  it('refuses interval 0 and a missing interval with PRICE_INVALID_INTERVAL', () => {
    fails(() => toRangeQuery('BTC', { from: 0, to: 1, interval: 0 }, L), 'PRICE_INVALID_INTERVAL', 'interval', '0')
    fails(() => toRangeQuery('BTC', { from: 0, to: 1 } as never, L), 'PRICE_INVALID_INTERVAL', 'interval', 'undefined')
  })

  it.each(BAD_NUMBERS)('refuses interval that is %s', (_n, interval, shown) => {
    fails(() => toRangeQuery('BTC', { from: 0, to: 1, interval: interval as number }, L), 'PRICE_INVALID_INTERVAL', 'interval', shown)
  })

  it.each(BAD_NUMBERS)('refuses from/to that is %s', (_n, bad, shown) => {
    fails(() => toRangeQuery('BTC', { from: bad as number, to: 1, interval: 1 }, L), 'PRICE_INVALID_RANGE', 'from', shown)
    fails(() => toRangeQuery('BTC', { from: 0, to: bad as number, interval: 1 }, L), 'PRICE_INVALID_RANGE', 'to', shown)
  })

  it.each(BAD_NUMBERS)('refuses limit/offset that is %s', (_n, bad, shown) => {
    fails(() => toRangeQuery('BTC', { from: 0, to: 1, interval: 1, limit: bad as number }, L), 'PRICE_INVALID_QUERY', 'limit', shown)
    fails(() => toRangeQuery('BTC', { from: 0, to: 1, interval: 1, offset: bad as number }, L), 'PRICE_INVALID_QUERY', 'offset', shown)
  })

  it('refuses limit 0 and maxLimit + 1', () => {
    fails(() => toRangeQuery('BTC', { from: 0, to: 1, interval: 1, limit: 0 }, L), 'PRICE_INVALID_QUERY', 'limit')
    fails(() => toRangeQuery('BTC', { from: 0, to: 1, interval: 1, limit: 3001 }, L), 'PRICE_INVALID_QUERY', 'limit')
  })

  it('refuses from > to', () => {
    throwsCode(() => toRangeQuery('BTC', { from: 2, to: 1, interval: 1 }, L), 'PRICE_INVALID_RANGE')
  })

  it('refuses a bad symbol first', () => {
    fails(() => toRangeQuery('', { from: 2, to: 1, interval: 0 }, L), 'PRICE_INVALID_SYMBOL', 'symbol')
  })

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
  ])('options that are %s (a JavaScript caller) give a coded error, not a TypeError', (_n, options) => {
    let caught: unknown
    try {
      toRangeQuery('BTC', options as never, L)
    } catch (err) {
      caught = err
    }
    expect(isPriceStoreError(caught), String(caught)).toBe(true)
  })
})
