import { describe, expect, it } from 'vitest'
import { parseQuery } from '../../src/engine/parse-query.js'
import type { PriceStoreErrorCode } from '../../src/errors.js'
import { DEFAULT_LIMITS } from '../../src/types.js'
import type { Limits, QueryParams } from '../../src/types.js'
import { TEST_PROVIDER as PROVIDER } from '../../src/testing/records.js'
import { mentions, throwsCode } from '../support/assertions.js'

const MAX = '9007199254740991' // 2^53-1
const CONFIG = { provider: PROVIDER, limits: DEFAULT_LIMITS }
const parse = (params: QueryParams | string, limits: Limits = DEFAULT_LIMITS) =>
  parseQuery(typeof params === 'string' ? new URLSearchParams(params) : params, { provider: PROVIDER, limits })

/** The query string must fail with `code`, naming `parameter` and (when given) showing `shown` in the message. */
function fails(params: QueryParams | string, code: PriceStoreErrorCode, parameter: string, shown?: string[], limits?: Limits) {
  const err = throwsCode(() => parse(params, limits), code)
  expect(err.details.parameter, err.message).toBe(parameter)
  expect(err.message).toContain(parameter)
  for (const value of shown ?? []) {
    expect(mentions(err.message, value), `message ${JSON.stringify(err.message)} should show ${JSON.stringify(value)}`).toBe(true)
  }
  return err
}

describe('parseQuery: forms', () => {
  it('symbol alone is latest-N with limit 1, offset 0', () => {
    expect(parse('symbol=BTC')).toStrictEqual({ kind: 'latest', symbol: 'BTC', limit: 1, offset: 0 })
  })

  it('symbol with limit and offset', () => {
    expect(parse('symbol=BTC&limit=10&offset=3')).toStrictEqual({ kind: 'latest', symbol: 'BTC', limit: 10, offset: 3 })
  })

  it('symbol with toTimestamp is the as-of form (latest with a window)', () => {
    expect(parse('symbol=BTC&toTimestamp=1700000000000')).toStrictEqual({
      kind: 'latest', symbol: 'BTC', limit: 1, offset: 0, to: 1_700_000_000_000,
    })
  })

  it('symbol with interval and both timestamps is the range form, no default limit', () => {
    expect(parse('symbol=BTC&interval=3600000&fromTimestamp=0&toTimestamp=10')).toStrictEqual({
      kind: 'range', symbol: 'BTC', from: 0, to: 10, interval: 3_600_000, origin: 0, offset: 0,
    })
    expect(parse('symbol=BTC&interval=1&fromTimestamp=0&toTimestamp=10&limit=5&offset=2')).toStrictEqual({
      kind: 'range', symbol: 'BTC', from: 0, to: 10, interval: 1, origin: 0, offset: 2, limit: 5,
    })
  })

  it('no symbol and no symbols is several over all symbols', () => {
    expect(parse('')).toStrictEqual({ kind: 'several', symbols: 'all' })
    expect(parse({})).toStrictEqual({ kind: 'several', symbols: 'all' })
  })

  it('symbols is several, deduped keeping first-occurrence order', () => {
    expect(parse('symbols=ETH,BTC,ETH,AR,BTC')).toStrictEqual({ kind: 'several', symbols: ['ETH', 'BTC', 'AR'] })
  })

  it('several validates but ignores limit and offset', () => {
    expect(parse('symbols=ETH&limit=5&offset=7')).toStrictEqual({ kind: 'several', symbols: ['ETH'] })
    expect(parse('limit=5&offset=7&toTimestamp=9')).toStrictEqual({ kind: 'several', symbols: 'all', to: 9 })
    fails('symbols=ETH&limit=0', 'PRICE_INVALID_QUERY', 'limit', ['0'])
    fails('offset=x', 'PRICE_INVALID_QUERY', 'offset', ['x'])
  })

  it('several keeps the window', () => {
    expect(parse('symbols=A&fromTimestamp=1&toTimestamp=2')).toStrictEqual({ kind: 'several', symbols: ['A'], from: 1, to: 2 })
  })

  it('the result is frozen', () => {
    expect(Object.isFrozen(parse('symbol=BTC'))).toBe(true)
    const several = parse('symbols=A,B')
    expect(Object.isFrozen(several)).toBe(true)
    if (several.kind === 'several' && several.symbols !== 'all') expect(Object.isFrozen(several.symbols)).toBe(true)
  })

  describe('every combination of symbol, symbols, fromTimestamp, toTimestamp, interval, limit, offset', () => {
    const names = ['symbol', 'symbols', 'fromTimestamp', 'toTimestamp', 'interval', 'limit', 'offset'] as const
    const values = { symbol: 'BTC', symbols: 'ETH,BTC,ETH', fromTimestamp: '10', toTimestamp: '20', interval: '5', limit: '7', offset: '2' }
    const combos: (typeof names[number])[][] = []
    for (let mask = 0; mask < 1 << names.length; mask++) combos.push(names.filter((_, i) => (mask >> i) & 1))

    it.each(combos.map((c) => [c.join('&') || '(none)', c] as const))('%s', (_label, present) => {
      const has = (name: typeof names[number]) => present.includes(name)
      const params = new URLSearchParams(present.map((name): [string, string] => [name, values[name]]))
      // Expected outcome, straight from the contract's rule list.
      if (has('symbol') && has('symbols')) {
        const err = throwsCode(() => parse(params), 'PRICE_INVALID_QUERY')
        expect(['symbol', 'symbols']).toContain(err.details.parameter)
        return
      }
      if (has('interval') && !has('symbol')) {
        fails(params, 'PRICE_INVALID_INTERVAL', 'interval')
        return
      }
      if (has('interval') && !(has('fromTimestamp') && has('toTimestamp'))) {
        fails(params, 'PRICE_INVALID_RANGE', has('fromTimestamp') ? 'toTimestamp' : 'fromTimestamp')
        return
      }
      const window = { ...(has('fromTimestamp') ? { from: 10 } : {}), ...(has('toTimestamp') ? { to: 20 } : {}) }
      if (has('symbol') && has('interval')) {
        expect(parse(params)).toStrictEqual({
          kind: 'range', symbol: 'BTC', from: 10, to: 20, interval: 5, origin: 0, offset: has('offset') ? 2 : 0,
          ...(has('limit') ? { limit: 7 } : {}),
        })
      } else if (has('symbol')) {
        expect(parse(params)).toStrictEqual({
          kind: 'latest', symbol: 'BTC', limit: has('limit') ? 7 : 1, offset: has('offset') ? 2 : 0, ...window,
        })
      } else {
        expect(parse(params)).toStrictEqual({ kind: 'several', symbols: has('symbols') ? ['ETH', 'BTC'] : 'all', ...window })
      }
    })
  })
})

describe('parseQuery: rule 1, a known parameter given more than once', () => {
  const known = ['symbol', 'symbols', 'provider', 'limit', 'offset', 'fromTimestamp', 'toTimestamp', 'interval']

  it.each(known)('%s twice in URLSearchParams → PRICE_INVALID_QUERY', (name) => {
    fails(new URLSearchParams([[name, '1'], [name, '2']]), 'PRICE_INVALID_QUERY', name)
  })

  it.each(known)('%s as a 2-element array in a plain object → PRICE_INVALID_QUERY', (name) => {
    fails({ [name]: ['1', '2'] }, 'PRICE_INVALID_QUERY', name)
  })

  it('even with the same value twice', () => {
    fails('symbol=BTC&symbol=BTC', 'PRICE_INVALID_QUERY', 'symbol')
  })

  it('the message shows the values received', () => {
    fails('limit=5&limit=6', 'PRICE_INVALID_QUERY', 'limit', ['5', '6'])
    fails({ symbol: ['BTC', 'ETH'] }, 'PRICE_INVALID_QUERY', 'symbol', ['BTC', 'ETH'])
  })

  it('an empty array or undefined in a plain object means absent; a 1-element array is the value', () => {
    expect(parse({ symbol: [], limit: undefined })).toStrictEqual({ kind: 'several', symbols: 'all' })
    expect(parse({ symbol: ['BTC'], limit: ['4'] })).toStrictEqual({ kind: 'latest', symbol: 'BTC', limit: 4, offset: 0 })
  })

  it('unknown parameters are ignored, even when repeated', () => {
    expect(parse('foo=1&foo=2&symbol=BTC&Symbol=x&SYMBOL=y&limits=0')).toStrictEqual({ kind: 'latest', symbol: 'BTC', limit: 1, offset: 0 })
    expect(parse({ foo: ['1', '2'], symbol: 'BTC' })).toStrictEqual({ kind: 'latest', symbol: 'BTC', limit: 1, offset: 0 })
  })

  it('inherited properties of a plain object are not parameters; a null-prototype object works', () => {
    const inherited = Object.create({ symbol: 'BTC', limit: '0' }) as Record<string, string>
    expect(parse(inherited)).toStrictEqual({ kind: 'several', symbols: 'all' })
    const bare = Object.assign(Object.create(null) as Record<string, string>, { symbol: 'ETH' })
    expect(parse(bare)).toStrictEqual({ kind: 'latest', symbol: 'ETH', limit: 1, offset: 0 })
  })
})

describe('parseQuery: rule 2, each parameter', () => {
  describe('symbol → PRICE_INVALID_SYMBOL', () => {
    it.each<[string, string]>([
      ['empty', ''],
      ['a space', 'BTC USD'],
      ['a comma', 'BTC,ETH'],
      ['a tab', 'BTC\t'],
      ['U+00A0', 'BTC\u00a0'],
      ['U+3000', '\u3000BTC'],
      ['U+0085', 'BTC\u0085'],
      ['NUL', 'BTC\u0000'],
      ['65 code points', 'x'.repeat(65)],
      ['65 astral code points', '\u{1F600}'.repeat(65)],
    ])('refuses %s', (_name, value) => {
      fails(new URLSearchParams([['symbol', value]]), 'PRICE_INVALID_SYMBOL', 'symbol', value === '' ? ['""'] : [value.slice(0, 20)])
    })

    it('refuses a lone surrogate given in a plain object', () => {
      fails({ symbol: 'BTC\uD800' }, 'PRICE_INVALID_SYMBOL', 'symbol', ['BTC\uD800'])
    })

    it('refuses a non-string in a plain object', () => {
      fails({ symbol: 5 as unknown as string }, 'PRICE_INVALID_SYMBOL', 'symbol', ['5'])
    })

    it.each(['BTC', 'BTC-USD', 'stETH', 'USDC.e', '__proto__', 'x'.repeat(64), '\u{1F600}'.repeat(64), '%ZZ'])('accepts %s', (symbol) => {
      expect(parse({ symbol })).toStrictEqual({ kind: 'latest', symbol, limit: 1, offset: 0 })
    })
  })

  describe('symbols', () => {
    it.each<[string, string]>([
      ['empty', ''],
      ['an empty entry in the middle', 'A,,B'],
      ['a leading comma', ',A'],
      ['a trailing comma', 'A,'],
      ['a space after a comma', 'A, B'],
      ['an entry of 65 code points', `A,${'y'.repeat(65)}`],
      ['an entry with U+0085', 'A,B\u0085'],
    ])('refuses %s with PRICE_INVALID_SYMBOL', (_name, value) => {
      fails(new URLSearchParams([['symbols', value]]), 'PRICE_INVALID_SYMBOL', 'symbols', value === '' ? ['""'] : [value.slice(0, 20)])
    })

    const limits = { ...DEFAULT_LIMITS, maxSymbols: 3 }

    it('accepts maxSymbols distinct names, counting duplicates once', () => {
      expect(parse('symbols=A,B,C,A,B,C,C', limits)).toStrictEqual({ kind: 'several', symbols: ['A', 'B', 'C'] })
    })

    it('refuses maxSymbols+1 distinct names with PRICE_INVALID_QUERY', () => {
      fails('symbols=A,B,C,D', 'PRICE_INVALID_QUERY', 'symbols', ['4'], limits)
    })

    it('the default maxSymbols is 1000', () => {
      const names = Array.from({ length: 1000 }, (_, i) => `S${i}`)
      expect(parse(`symbols=${names.join(',')}`)).toMatchObject({ kind: 'several' })
      fails(`symbols=${[...names, 'S1000'].join(',')}`, 'PRICE_INVALID_QUERY', 'symbols')
    })

    it('a bad entry wins over too many names', () => {
      fails('symbols=A,B,C,D,,E', 'PRICE_INVALID_SYMBOL', 'symbols', undefined, limits)
    })
  })

  describe('provider', () => {
    it('accepts the provider name and the provider id', () => {
      expect(parse(`symbol=BTC&provider=${PROVIDER.name}`)).toStrictEqual({ kind: 'latest', symbol: 'BTC', limit: 1, offset: 0 })
      expect(parse({ symbol: 'BTC', provider: PROVIDER.id })).toStrictEqual({ kind: 'latest', symbol: 'BTC', limit: 1, offset: 0 })
    })

    it('refuses an empty provider with PRICE_INVALID_QUERY', () => {
      fails('symbol=BTC&provider=', 'PRICE_INVALID_QUERY', 'provider', ['""'])
    })

    it.each(['chainlink', 'RedStone', 'redstone ', PROVIDER.publicKey])('refuses %s with PRICE_UNSUPPORTED_PROVIDER', (provider) => {
      fails({ symbol: 'BTC', provider }, 'PRICE_UNSUPPORTED_PROVIDER', 'provider', [provider.slice(0, 20)])
    })
  })

  // Non-integers for every numeric parameter, with the code each must give.
  const numeric: [string, PriceStoreErrorCode][] = [
    ['limit', 'PRICE_INVALID_QUERY'],
    ['offset', 'PRICE_INVALID_QUERY'],
    ['fromTimestamp', 'PRICE_INVALID_RANGE'],
    ['toTimestamp', 'PRICE_INVALID_RANGE'],
    ['interval', 'PRICE_INVALID_INTERVAL'],
  ]
  const base = (name: string) =>
    name === 'interval' ? 'symbol=BTC&fromTimestamp=0&toTimestamp=100&' : 'symbol=BTC&'
  const notIntegers = ['', '1.5', '1e3', '-1', '+1', ' 1', '1 ', 'abc', '0x10', '1,000', '١٢', '１', 'Infinity', 'NaN', '1.0', '.5']

  describe.each(numeric)('%s (not a plain integer → %s)', (name, code) => {
    it.each(notIntegers)('refuses %j', (value) => {
      const params = new URLSearchParams(base(name))
      params.set(name, value)
      fails(params, code, name, value === '' ? ['""'] : [value])
    })

    it('refuses 2^53 and larger', () => {
      for (const value of ['9007199254740992', '9007199254740993', '99999999999999999999', '1' + '0'.repeat(400)]) {
        const params = new URLSearchParams(base(name))
        params.set(name, value)
        fails(params, code, name, [value.slice(0, 16)])
      }
    })

    it('refuses a non-string in a plain object', () => {
      const params: Record<string, unknown> = Object.fromEntries(new URLSearchParams(base(name)))
      params[name] = 5
      fails(params as QueryParams, code, name)
    })
  })

  it('a number given as "+" decoded from a URL (a space) is refused', () => {
    fails(new URLSearchParams('symbol=BTC&limit=+1'), 'PRICE_INVALID_QUERY', 'limit')
  })

  it('accepts 2^53-1 and leading zeros for offset, fromTimestamp, toTimestamp, interval', () => {
    expect(parse(`symbol=BTC&offset=${MAX}&fromTimestamp=000&toTimestamp=${MAX}`)).toStrictEqual({
      kind: 'latest', symbol: 'BTC', limit: 1, offset: Number.MAX_SAFE_INTEGER, from: 0, to: Number.MAX_SAFE_INTEGER,
    })
    expect(parse(`symbol=BTC&interval=${MAX}&fromTimestamp=${MAX}&toTimestamp=${MAX}&offset=0000000000000000000000007`)).toStrictEqual({
      kind: 'range', symbol: 'BTC', from: Number.MAX_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER, interval: Number.MAX_SAFE_INTEGER, origin: 0, offset: 7,
    })
    expect(parse(`symbol=BTC&interval=0001&fromTimestamp=00${MAX}&toTimestamp=000000000000000000000${MAX}`)).toMatchObject({
      kind: 'range', interval: 1, origin: 0, from: Number.MAX_SAFE_INTEGER, to: Number.MAX_SAFE_INTEGER,
    })
  })

  describe('limit range', () => {
    it('accepts 1, 0001 and maxLimit (3000 by default)', () => {
      expect(parse('symbol=BTC&limit=1')).toMatchObject({ limit: 1 })
      expect(parse('symbol=BTC&limit=0001')).toMatchObject({ limit: 1 })
      expect(parse('symbol=BTC&limit=3000')).toMatchObject({ limit: 3000 })
      expect(parse('symbol=BTC&limit=0003000')).toMatchObject({ limit: 3000 })
    })

    it('refuses 0, 000 and maxLimit+1 with PRICE_INVALID_QUERY', () => {
      fails('symbol=BTC&limit=0', 'PRICE_INVALID_QUERY', 'limit', ['0'])
      fails('symbol=BTC&limit=000', 'PRICE_INVALID_QUERY', 'limit', ['0'])
      fails('symbol=BTC&limit=3001', 'PRICE_INVALID_QUERY', 'limit', ['3001'])
      fails(`symbol=BTC&limit=${MAX}`, 'PRICE_INVALID_QUERY', 'limit', [MAX])
    })

    it('follows a custom maxLimit', () => {
      const limits = { ...DEFAULT_LIMITS, maxLimit: 10 }
      expect(parse('symbol=BTC&limit=10', limits)).toMatchObject({ limit: 10 })
      fails('symbol=BTC&limit=11', 'PRICE_INVALID_QUERY', 'limit', ['11'], limits)
    })

    it('applies to the range form too', () => {
      fails('symbol=BTC&interval=1&fromTimestamp=0&toTimestamp=1&limit=3001', 'PRICE_INVALID_QUERY', 'limit')
    })
  })

  it('accepts offset 0 and fromTimestamp 0', () => {
    expect(parse('symbol=BTC&offset=0&fromTimestamp=0')).toStrictEqual({ kind: 'latest', symbol: 'BTC', limit: 1, offset: 0, from: 0 })
  })

  it('refuses interval 0 and 000 with PRICE_INVALID_INTERVAL', () => {
    fails('symbol=BTC&interval=0&fromTimestamp=0&toTimestamp=1', 'PRICE_INVALID_INTERVAL', 'interval', ['0'])
    fails('symbol=BTC&interval=000&fromTimestamp=0&toTimestamp=1', 'PRICE_INVALID_INTERVAL', 'interval', ['000'])
  })
})

describe('parseQuery: rule 3, rules between parameters', () => {
  it('symbol and symbols together → PRICE_INVALID_QUERY, naming both and the values received', () => {
    const err = throwsCode(() => parse('symbol=BTC&symbols=ETH,AR'), 'PRICE_INVALID_QUERY')
    expect(['symbol', 'symbols']).toContain(err.details.parameter)
    expect(err.message).toContain('symbol')
    expect(err.message).toContain('symbols')
    expect(err.message).toContain('BTC')
    expect(err.message).toContain('ETH,AR')
  })

  it('interval without symbol → PRICE_INVALID_INTERVAL, showing the interval received', () => {
    fails('interval=3600000&fromTimestamp=0&toTimestamp=1', 'PRICE_INVALID_INTERVAL', 'interval', ['3600000'])
    fails('symbols=A&interval=5&fromTimestamp=0&toTimestamp=1', 'PRICE_INVALID_INTERVAL', 'interval', ['5'])
  })

  it('interval with symbol but a timestamp missing → PRICE_INVALID_RANGE naming the missing one', () => {
    fails('symbol=BTC&interval=5', 'PRICE_INVALID_RANGE', 'fromTimestamp')
    fails('symbol=BTC&interval=5&toTimestamp=9', 'PRICE_INVALID_RANGE', 'fromTimestamp')
    fails('symbol=BTC&interval=5&fromTimestamp=9', 'PRICE_INVALID_RANGE', 'toTimestamp')
  })

  it('fromTimestamp > toTimestamp → PRICE_INVALID_RANGE, in every form, showing both values', () => {
    fails('symbol=BTC&fromTimestamp=11&toTimestamp=10', 'PRICE_INVALID_RANGE', 'fromTimestamp', ['11', '10'])
    fails('symbol=BTC&interval=1&fromTimestamp=11&toTimestamp=10', 'PRICE_INVALID_RANGE', 'fromTimestamp', ['11', '10'])
    fails('symbols=A&fromTimestamp=11&toTimestamp=10', 'PRICE_INVALID_RANGE', 'fromTimestamp', ['11', '10'])
    fails('fromTimestamp=0011&toTimestamp=10', 'PRICE_INVALID_RANGE', 'fromTimestamp')
  })

  it('fromTimestamp = toTimestamp is fine; leading zeros compare as numbers', () => {
    expect(parse('symbol=BTC&fromTimestamp=10&toTimestamp=10')).toMatchObject({ from: 10, to: 10 })
    expect(parse('symbol=BTC&fromTimestamp=9&toTimestamp=0010')).toMatchObject({ from: 9, to: 10 })
  })
})

describe('parseQuery: precedence (the first failing rule wins)', () => {
  const order = ['symbol', 'symbols', 'provider', 'limit', 'offset', 'fromTimestamp', 'toTimestamp', 'interval'] as const
  // One bad value per parameter, each failing on its own rule with a distinct-enough code.
  const bad: Record<(typeof order)[number], [string, PriceStoreErrorCode]> = {
    symbol: ['BTC USD', 'PRICE_INVALID_SYMBOL'],
    symbols: ['A,,B', 'PRICE_INVALID_SYMBOL'],
    provider: ['chainlink', 'PRICE_UNSUPPORTED_PROVIDER'],
    limit: ['0', 'PRICE_INVALID_QUERY'],
    offset: ['1.5', 'PRICE_INVALID_QUERY'],
    fromTimestamp: ['-1', 'PRICE_INVALID_RANGE'],
    toTimestamp: ['abc', 'PRICE_INVALID_RANGE'],
    interval: ['0', 'PRICE_INVALID_INTERVAL'],
  }

  it.each(order)('%s alone fails on its own rule', (name) => {
    const [value, code] = bad[name]
    fails(new URLSearchParams([[name, value]]), code, name, [value])
  })

  const pairs = order.flatMap((first, i) => order.slice(i + 1).map((second) => [first, second] as const))

  it.each(pairs)('bad %s and bad %s → the error of the first', (first, second) => {
    for (const sequence of [[first, second], [second, first]]) {
      const params = new URLSearchParams(sequence.map((name): [string, string] => [name, bad[name][0]]))
      fails(params, bad[first][1], first)
    }
  })

  it.each(pairs)('%s repeated and %s repeated → rule 1 for the first', (first, second) => {
    const params = new URLSearchParams([[second, '1'], [second, '2'], [first, '1'], [first, '2']])
    fails(params, 'PRICE_INVALID_QUERY', first)
  })

  it.each(order)('a repeated parameter wins over a bad value of %s', (name) => {
    const repeated = name === 'interval' ? 'symbol' : 'interval'
    const params = new URLSearchParams([[name, bad[name][0]], [repeated, '5'], [repeated, '6']])
    fails(params, 'PRICE_INVALID_QUERY', repeated)
  })

  it('a repeated unknown parameter never wins', () => {
    fails('zzz=1&zzz=2&limit=0', 'PRICE_INVALID_QUERY', 'limit')
  })

  it('every parameter rule wins over the rules between parameters', () => {
    fails('symbol=BTC&symbols=ETH&fromTimestamp=x', 'PRICE_INVALID_RANGE', 'fromTimestamp')
    fails('symbol=BTC&symbols=ETH&interval=0', 'PRICE_INVALID_INTERVAL', 'interval')
    fails('symbol=BTC&symbols=ETH&provider=', 'PRICE_INVALID_QUERY', 'provider')
    fails('interval=5&toTimestamp=x', 'PRICE_INVALID_RANGE', 'toTimestamp')
    fails('interval=5&offset=-1', 'PRICE_INVALID_QUERY', 'offset')
    fails('symbol=BTC&interval=5&limit=0', 'PRICE_INVALID_QUERY', 'limit')
    fails('symbol=BTC&fromTimestamp=5&toTimestamp=1&provider=x', 'PRICE_UNSUPPORTED_PROVIDER', 'provider')
  })

  it('symbol+symbols wins over interval without timestamps; interval without symbol wins over missing timestamps and from > to', () => {
    const both = throwsCode(() => parse('symbol=BTC&symbols=ETH&interval=5'), 'PRICE_INVALID_QUERY')
    expect(['symbol', 'symbols']).toContain(both.details.parameter)
    fails('interval=5', 'PRICE_INVALID_INTERVAL', 'interval')
    fails('interval=5&fromTimestamp=9&toTimestamp=1', 'PRICE_INVALID_INTERVAL', 'interval')
    fails('symbols=A&interval=5&fromTimestamp=9&toTimestamp=1', 'PRICE_INVALID_INTERVAL', 'interval')
  })

  it('a missing timestamp for the range form wins over nothing else: with both present, from > to is next', () => {
    fails('symbol=BTC&interval=5&fromTimestamp=9&toTimestamp=1', 'PRICE_INVALID_RANGE', 'fromTimestamp', ['9', '1'])
  })
})

describe('parseQuery: URL decoding (as URLSearchParams does it)', () => {
  it('"+" is a space, so symbol=BTC+USD is refused showing "BTC USD"', () => {
    fails(new URLSearchParams('symbol=BTC+USD'), 'PRICE_INVALID_SYMBOL', 'symbol', ['BTC USD'])
  })

  it('%2B is a literal plus, a valid symbol character', () => {
    expect(parse(new URLSearchParams('symbol=BTC%2BUSD'))).toMatchObject({ symbol: 'BTC+USD' })
  })

  it('%2C inside symbols separates names, as a decoded comma', () => {
    expect(parse(new URLSearchParams('symbols=A%2CB'))).toStrictEqual({ kind: 'several', symbols: ['A', 'B'] })
  })

  it('malformed escapes are kept as text', () => {
    expect(parse(new URLSearchParams('symbol=%ZZ'))).toMatchObject({ symbol: '%ZZ' })
    expect(parse(new URLSearchParams('symbol=BTC%'))).toMatchObject({ symbol: 'BTC%' })
    expect(parse(new URLSearchParams('symbol=%E2%82'))).toMatchObject({ symbol: '\uFFFD' })
    fails(new URLSearchParams('symbol=BTC&limit=%3'), 'PRICE_INVALID_QUERY', 'limit', ['%3'])
  })

  it('escaped digits and names decode before validation', () => {
    expect(parse(new URLSearchParams('%73ymbol=%E2%82%AC&limit=%31%30'))).toStrictEqual({ kind: 'latest', symbol: '€', limit: 10, offset: 0 })
  })

  it('an escaped control character or space in a symbol is refused', () => {
    fails(new URLSearchParams('symbol=BTC%00'), 'PRICE_INVALID_SYMBOL', 'symbol')
    fails(new URLSearchParams('symbol=BTC%20USD'), 'PRICE_INVALID_SYMBOL', 'symbol', ['BTC USD'])
    fails(new URLSearchParams('symbol=BTC%C2%A0'), 'PRICE_INVALID_SYMBOL', 'symbol')
    fails(new URLSearchParams('symbol=BTC%C2%85'), 'PRICE_INVALID_SYMBOL', 'symbol')
  })

  it('a parameter without "=" is present with an empty value', () => {
    fails(new URLSearchParams('symbol'), 'PRICE_INVALID_SYMBOL', 'symbol')
    fails(new URLSearchParams('symbol=BTC&limit'), 'PRICE_INVALID_QUERY', 'limit')
  })

  it('a repeated parameter counts after decoding the name', () => {
    fails(new URLSearchParams('symbol=BTC&%73ymbol=ETH'), 'PRICE_INVALID_QUERY', 'symbol')
  })
})

it('parseQuery takes the config it is given', () => {
  expect(() => parseQuery(new URLSearchParams('symbol=BTC&limit=3000'), CONFIG)).not.toThrow()
})
