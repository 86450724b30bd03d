import { describe, expect, it } from 'vitest'
import { validateRecord } from '../../src/records/validate-record.js'
import { TEST_PROVIDER as PROVIDER, T0 } from '../../src/testing/records.js'
import { expectExact, mentions, throwsCode } from '../support/assertions.js'
import { rec, without } from '../support/records.js'

const INDEX = 7

/** Asserts `input` is refused naming `field` at INDEX, with a message naming field and value. */
function refuses(input: unknown, field: string, shown?: string): void {
  const err = throwsCode(() => validateRecord(input, INDEX, PROVIDER), 'PRICE_INVALID_RECORD')
  expect(err.details).toEqual({ index: INDEX, field })
  expect(err.message).toContain(`record ${INDEX}`)
  expect(err.message).toContain(field)
  if (shown !== undefined) expect(mentions(err.message, shown), `message ${JSON.stringify(err.message)} should show ${JSON.stringify(shown)}`).toBe(true)
}

function accepts(input: Record<string, unknown>): void {
  expect(() => validateRecord(input, INDEX, PROVIDER)).not.toThrow()
}

const astral = '\u{1F600}' // one code point, two UTF-16 units

class Quote {
  binance = 1
}

describe('validateRecord: a valid record', () => {
  it('returns the stored part: known fields, no provider, no providerPublicKey, extras null', () => {
    const input = rec({ providerPublicKey: PROVIDER.publicKey })
    const out = validateRecord(input, 0, PROVIDER)
    expectExact(
      { ...out },
      {
        id: input.id, symbol: input.symbol, timestamp: input.timestamp, value: input.value,
        signature: input.signature, permawebTx: input.permawebTx, version: input.version,
        source: input.source, extras: null, plainJson: true,
      },
    )
  })

  // plainJson lets the value codec skip its own walk: a wrong `true` would store -0 as 0 or drop a __proto__ key.
  it.each([
    ['-0 in source', { source: { a: -0 } }],
    ['-0 nested in an extra', { extra: [1, { b: -0 }] }],
    ['a lone surrogate in a source value', { source: { a: 'x\uD83D' } }],
    ['a lone surrogate in a source key', { source: { ['k\uDC00']: 1 } }],
    ['a lone surrogate in signature', { signature: 'sig\uD83D' }],
    ['a lone surrogate in permawebTx', { permawebTx: '\uDC00' }],
    ['a lone surrogate in version', { version: '3\uD83D' }],
    ['a lone surrogate in an extra name', { ['e\uD83D']: 1 }],
    ['a __proto__ key in source', { source: JSON.parse('{"__proto__":1}') as Record<string, unknown> }],
  ])('plainJson is false with %s', (_, fields) => {
    expect(validateRecord(rec(fields), 0, PROVIDER).plainJson).toBe(false)
  })

  it('plainJson is false with an extra named __proto__, true with unusual-looking but plain JSON', () => {
    const input = JSON.parse(JSON.stringify(rec()).slice(0, -1) + ',"__proto__":{"x":1}}') as Record<string, unknown>
    expect(validateRecord(input, 0, PROVIDER).plainJson).toBe(false)
    const plain = rec({ source: { a: 0, b: [null, true, 'ünïcode \u{1F600}'], proto: { __proto_: 1 } }, extra: -1e-300 })
    expect(validateRecord(plain, 0, PROVIDER).plainJson).toBe(true)
  })

  it('drops `minutes` and keeps every other extra field, in input order', () => {
    const input = rec({ minutes: 42, zeta: 'z', evmSignature: '0xdead', nested: { a: [1, null, true] } })
    const out = validateRecord(input, 0, PROVIDER)
    expect(out.extras).not.toBeNull()
    expect(Object.keys(out.extras ?? {})).toEqual(['zeta', 'evmSignature', 'nested'])
    expectExact(out.extras, { zeta: 'z', evmSignature: '0xdead', nested: { a: [1, null, true] } })
  })

  it('keeps an extra named "__proto__" as an own property', () => {
    const input = JSON.parse(JSON.stringify(rec()).slice(0, -1) + ',"__proto__":{"x":1}}') as Record<string, unknown>
    const out = validateRecord(input, 0, PROVIDER)
    expect(Object.hasOwn(out.extras ?? {}, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(out.extras)).toBe(Object.prototype)
  })

  it('keeps value -0 and the source object as given', () => {
    const source = { a: { b: [1, 'x'] } }
    const out = validateRecord(rec({ value: -0, source }), 0, PROVIDER)
    expect(Object.is(out.value, -0)).toBe(true)
    expect(out.source).toEqual(source)
  })

  it.each<[string, Record<string, unknown>]>([
    ['id of 1 code point', { id: 'a' }],
    ['id of 128 code points', { id: 'a'.repeat(128) }],
    ['id of 128 astral code points (256 UTF-16 units)', { id: astral.repeat(128) }],
    ['id with spaces, commas and non-ASCII', { id: 'a b,c\u00a0\u3000\u00e9' }],
    ['symbol of 1 code point', { symbol: 'B' }],
    ['symbol of 64 code points', { symbol: 'x'.repeat(64) }],
    ['symbol of 64 astral code points (128 UTF-16 units)', { symbol: astral.repeat(64) }],
    ['symbol stETH', { symbol: 'stETH' }],
    ['symbol USDC.e', { symbol: 'USDC.e' }],
    ['symbol BTC-USD', { symbol: 'BTC-USD' }],
    ['symbol __proto__', { symbol: '__proto__' }],
    ['symbol with a combining mark', { symbol: 'a\u0301' }],
    ['value 0', { value: 0 }],
    ['value -0', { value: -0 }],
    ['value 5e-324', { value: 5e-324 }],
    ['value -Number.MAX_VALUE', { value: -Number.MAX_VALUE }],
    ['signature of 1 char', { signature: 's' }],
    ['empty permawebTx', { permawebTx: '' }],
    ['empty version', { version: '' }],
    ['empty source', { source: {} }],
    ['null-prototype source', { source: Object.assign(Object.create(null) as object, { a: 1 }) }],
    ['source with nested JSON values', { source: { a: null, b: [1, 'x', false, { c: [] }], d: -1.5 } }],
    ['timestamp 0', { timestamp: 0 }],
    ['timestamp 2^53-1', { timestamp: Number.MAX_SAFE_INTEGER }],
    ['providerPublicKey equal to the store key', { providerPublicKey: PROVIDER.publicKey }],
    ['providerPublicKey undefined', { providerPublicKey: undefined }],
  ])('accepts %s', (_name, overrides) => {
    accepts(rec(overrides))
  })
})

describe('validateRecord: SPEC §1 rules → PRICE_INVALID_RECORD {index, field}', () => {
  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a number', 5],
    ['a string', '{"id":"a"}'],
    ['an array', [rec()]],
  ])('a record that is %s is refused with no field', (_name, input) => {
    const err = throwsCode(() => validateRecord(input, INDEX, PROVIDER), 'PRICE_INVALID_RECORD')
    expect(err.details.index).toBe(INDEX)
    expect(err.details.field).toBeUndefined()
    expect(err.message).toContain(`record ${INDEX}`)
  })

  it.each(['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp'])(
    'a missing %s is refused',
    (field) => refuses(without(rec(), field), field, 'undefined'),
  )

  describe('id', () => {
    it.each<[string, unknown, string | undefined]>([
      ['a number', 42, '42'],
      ['null', null, 'null'],
      ['empty', '', '""'],
      ['129 ASCII code points', 'a'.repeat(129), 'aaaaaaaaaaaaaaaaaaaa'],
      ['129 astral code points', astral.repeat(129), astral.repeat(10)],
      ['a NUL', 'ab\u0000cd', 'ab\u0000cd'],
      ['a tab', 'ab\tcd', 'ab\tcd'],
      ['DEL', 'ab\u007fcd', 'ab\u007fcd'],
      ['U+0085 (NEL, a C1 control)', 'ab\u0085cd', 'ab\u0085cd'],
      ['U+009F', 'ab\u009fcd', 'ab\u009fcd'],
      ['a lone high surrogate', 'ab\uD800cd', 'ab\uD800cd'],
      ['a lone low surrogate', '\uDC00', '\uDC00'],
    ])('refuses %s', (_name, id, shown) => refuses(rec({ id }), 'id', shown))
  })

  describe('symbol', () => {
    it.each<[string, unknown, string | undefined]>([
      ['a number', 1, '1'],
      ['an object', { s: 'BTC' }, 'BTC'],
      ['empty', '', '""'],
      ['65 ASCII code points', 'x'.repeat(65), 'xxxxxxxxxxxxxxxxxxxx'],
      ['65 astral code points', astral.repeat(65), astral.repeat(10)],
      ['a space', 'BTC USD', 'BTC USD'],
      ['a leading space', ' BTC', ' BTC'],
      ['a tab', 'BTC\t', 'BTC\t'],
      ['a newline', 'BTC\n', 'BTC\n'],
      ['U+00A0 (no-break space)', 'BTC\u00a0USD', 'BTC\u00a0USD'],
      ['U+3000 (ideographic space)', 'BTC\u3000', 'BTC\u3000'],
      ['U+2028 (line separator)', 'BTC\u2028', 'BTC\u2028'],
      ['U+FEFF (BOM)', '\ufeffBTC', '\ufeffBTC'],
      ['U+2003 (em space)', 'B\u2003C', 'B\u2003C'],
      ['a comma', 'BTC,ETH', 'BTC,ETH'],
      ['a lone comma', ',', ','],
      ['a NUL', 'BTC\u0000', 'BTC\u0000'],
      ['U+0085 (NEL)', 'BTC\u0085', 'BTC\u0085'],
      ['U+0080', '\u0080', '\u0080'],
      ['DEL', 'BTC\u007f', 'BTC\u007f'],
      ['a lone surrogate', 'BTC\uD83D', 'BTC\uD83D'],
    ])('refuses %s', (_name, symbol, shown) => refuses(rec({ symbol }), 'symbol', shown))
  })

  describe('provider', () => {
    it.each<[string, unknown, string]>([
      ['another id', 'someone-else', 'someone-else'],
      ['the provider name instead of its id', PROVIDER.name, PROVIDER.name],
      ['the id in another case', PROVIDER.id.toLowerCase(), PROVIDER.id.toLowerCase()],
      ['the id with a trailing space', `${PROVIDER.id} `, `${PROVIDER.id} `],
      ['empty', '', '""'],
      ['a number', 7, '7'],
      ['null', null, 'null'],
    ])('refuses %s', (_name, provider, shown) => refuses(rec({ provider }), 'provider', shown))
  })

  describe('value', () => {
    it.each<[string, unknown, string]>([
      ['a numeric string', '30000.5', '30000.5'],
      ['null', null, 'null'],
      ['a boolean', true, 'true'],
      ['a bigint', 30000n, '30000'],
      ['an object', { v: 1 }, '{"v":1}'],
    ])('refuses %s', (_name, value, shown) => refuses(rec({ value }), 'value', shown))

    it.each<[string, number]>([
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['-Infinity', Number.NEGATIVE_INFINITY],
    ])('refuses %s', (_name, value) => refuses(rec({ value }), 'value'))

    it('the message shows NaN and Infinity as received (not as "null")', () => {
      refuses(rec({ value: Number.NaN }), 'value', 'NaN')
      refuses(rec({ value: Number.NEGATIVE_INFINITY }), 'value', '-Infinity')
    })
  })

  describe('signature, permawebTx, version', () => {
    it.each<[string, string, unknown, string]>([
      ['signature', 'empty', '', '""'],
      ['signature', 'a number', 123, '123'],
      ['signature', 'null', null, 'null'],
      ['signature', 'an array', ['sig'], 'sig'],
      ['permawebTx', 'a number', 5, '5'],
      ['permawebTx', 'null', null, 'null'],
      ['version', 'a number', 0.4, '0.4'],
      ['version', 'null', null, 'null'],
      ['version', 'a boolean', false, 'false'],
    ])('%s: refuses %s', (field, _name, value, shown) => refuses(rec({ [field]: value }), field, shown))
  })

  describe('source', () => {
    it.each<[string, unknown]>([
      ['null', null],
      ['an array', [1, 2]],
      ['a string', '{"binance":1}'],
      ['a number', 1],
      ['a class instance', new Quote()],
      ['a Date', new Date(0)],
      ['a Map', new Map([['a', 1]])],
      ['with an undefined value', { a: undefined }],
      ['with a function', { a: () => 1 }],
      ['with NaN', { a: Number.NaN }],
      ['with Infinity', { a: Number.POSITIVE_INFINITY }],
      ['with a bigint', { a: 1n }],
      ['with a symbol value', { a: Symbol('x') }],
      ['with a nested Date', { a: { b: new Date(0) } }],
      ['with a nested class instance', { a: [new Quote()] }],
      ['with undefined in an array', { a: [1, undefined] }],
      ['with a nested Map', { a: new Map() }],
    ])('refuses %s', (_name, source) => refuses(rec({ source }), 'source'))
  })

  describe('timestamp', () => {
    it.each<[string, unknown, string]>([
      ['a numeric string', '1700000000000', '1700000000000'],
      ['negative', -1, '-1'],
      ['fractional', 1.5, '1.5'],
      ['2^53 (unsafe)', 2 ** 53, '9007199254740992'],
      ['1e21', 1e21, '1e+21'],
      ['a Date', new Date(T0), '2023'],
      ['null', null, 'null'],
      ['a bigint', 1700000000000n, '1700000000000'],
    ])('refuses %s', (_name, timestamp, shown) => refuses(rec({ timestamp }), 'timestamp', shown))

    it.each<[string, number]>([
      ['NaN', Number.NaN],
      ['Infinity', Number.POSITIVE_INFINITY],
    ])('refuses %s', (_name, timestamp) => refuses(rec({ timestamp }), 'timestamp'))
  })

  describe('providerPublicKey', () => {
    it.each<[string, unknown, string]>([
      ['another key', 'another-key', 'another-key'],
      ['empty', '', '""'],
      ['null', null, 'null'],
      ['a number', 1, '1'],
    ])('refuses %s', (_name, providerPublicKey, shown) => refuses(rec({ providerPublicKey }), 'providerPublicKey', shown))
  })

  describe('extra fields', () => {
    it.each<[string, unknown]>([
      ['a function', () => 1],
      ['undefined', undefined],
      ['NaN', Number.NaN],
      ['a Date', new Date(0)],
      ['a class instance', new Quote()],
    ])('refuses an extra that is %s (it could not be returned unchanged), naming it', (_name, value) => {
      refuses(rec({ evmSignature: value }), 'evmSignature')
    })
  })

  it('names the index it was given', () => {
    const err = throwsCode(() => validateRecord(rec({ value: 'x' }), 12345, PROVIDER), 'PRICE_INVALID_RECORD')
    expect(err.details).toEqual({ index: 12345, field: 'value' })
    expect(err.message).toContain('record 12345')
  })
})
