import { Packr } from 'msgpackr'
import { describe, expect, it } from 'vitest'
import { encodeKey } from '../../src/keys/key-codec.js'
import { decodeValue, encodeValue } from '../../src/keys/value-codec.js'
import type { StoredRecord } from '../../src/records/stored-record.js'
import { PROVIDER, T0, expectExact, throwsCode } from './helpers.js'

function stored(overrides: Partial<StoredRecord> = {}): StoredRecord {
  return {
    id: 'b3b0c44c-1f2a-4e4b-9d1e-0f2c3a4b5c6d',
    symbol: 'BTC',
    timestamp: T0,
    value: 30_123.456,
    signature: 'c2lnbmF0dXJl',
    permawebTx: 'tx-abc',
    version: '0.4',
    source: { binance: 30_001.5, coinbase: 29_999.25 },
    extras: null,
    ...overrides,
  }
}

function roundTrip(record: StoredRecord): Record<string, unknown> {
  const key = encodeKey(record.symbol, record.timestamp, record.id)
  return decodeValue(key, encodeValue(record), { symbol: record.symbol, timestamp: record.timestamp, id: record.id }, PROVIDER) as Record<string, unknown>
}

/** The returned record per the contract: known fields, extras in order, providerPublicKey. */
function expectedOf(record: StoredRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const put = (k: string, v: unknown) => Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
  put('id', record.id)
  put('symbol', record.symbol)
  put('provider', PROVIDER.id)
  put('value', record.value)
  put('signature', record.signature)
  put('permawebTx', record.permawebTx)
  put('version', record.version)
  put('source', record.source)
  put('timestamp', record.timestamp)
  if (record.extras !== null) for (const k of Object.keys(record.extras)) put(k, record.extras[k])
  put('providerPublicKey', PROVIDER.publicKey)
  return out
}

describe('value codec round trip', () => {
  it('gives back the record with provider and public key joined, fields in contract order', () => {
    const record = stored()
    const back = roundTrip(record)
    expectExact(back, expectedOf(record))
    expect(Object.keys(back)).toEqual([
      'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'providerPublicKey',
    ])
  })

  it('keeps extras in their order, between timestamp and providerPublicKey', () => {
    const extras = { zeta: 1, evmSignature: '0xabc', alpha: { b: 1, a: [2, 'x', null, true, { c: false }] }, mid: '' }
    const back = roundTrip(stored({ extras }))
    expectExact(back, expectedOf(stored({ extras })))
    expect(Object.keys(back)).toEqual([
      'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp',
      'zeta', 'evmSignature', 'alpha', 'mid', 'providerPublicKey',
    ])
  })

  it('decodes bodies of any size in any order: a large one, then small ones, then a larger one', () => {
    // Bodies are unpacked from one reused buffer that grows on demand: no bytes of one may leak into the next.
    const sizes = [20_000, 0, 3, 5_000, 70_000, 1]
    for (const size of sizes) {
      const record = stored({ signature: 's'.repeat(size), source: { [`k${size}`]: size, big: 'é'.repeat(size >> 1) } })
      expectExact(roundTrip(record), expectedOf(record))
    }
  })

  it('keeps empty strings and an empty source', () => {
    const record = stored({ permawebTx: '', version: '', source: {} })
    expectExact(roundTrip(record), expectedOf(record))
  })

  it.each([
    ['-0', -0],
    ['0', 0],
    ['smallest subnormal', 5e-324],
    ['negative subnormal', -5e-324],
    ['largest subnormal', 2.2250738585072009e-308],
    ['Number.MAX_VALUE', Number.MAX_VALUE],
    ['-Number.MAX_VALUE', -Number.MAX_VALUE],
    ['2^53 + 2', 2 ** 53 + 2],
    ['0.1 + 0.2', 0.1 + 0.2],
    ['1e21', 1e21],
  ])('returns value %s bit for bit', (_name, value) => {
    const back = roundTrip(stored({ value }))
    expect(Object.is(back.value, value)).toBe(true)
    const a = Buffer.alloc(8)
    const b = Buffer.alloc(8)
    a.writeDoubleLE(back.value as number)
    b.writeDoubleLE(value)
    expect(a.equals(b)).toBe(true)
  })

  it('returns numbers inside source exactly: subnormal, huge, large integers', () => {
    const source = { sub: 5e-324, huge: Number.MAX_VALUE, big: 2 ** 53 - 1, neg: -(2 ** 53 - 1), past32: 2 ** 32 + 1, frac: 0.1 }
    const back = roundTrip(stored({ source }))
    expectExact(back.source, source)
  })

  it('returns -0 inside source and extras as -0 (SPEC §1: source returned exactly as given)', () => {
    const source = JSON.parse('{"binance": -0, "nested": [-0]}') as Record<string, unknown>
    expect(Object.is(source.binance, -0)).toBe(true)
    const back = roundTrip(stored({ source, extras: { drift: -0 } }))
    expectExact(back.source, source)
    expect(Object.is(back.drift, -0)).toBe(true)
  })

  it('returns -0 inside a source that also needs the JSON body (lone surrogate) as -0', () => {
    const source = JSON.parse('{"note": "\\ud800", "binance": -0}') as Record<string, unknown>
    expect(Object.is(source.binance, -0)).toBe(true)
    expectExact(roundTrip(stored({ source })).source, source)
  })

  it('returns a source with a "__proto__" key as an own property, not a prototype', () => {
    const source = JSON.parse('{"__proto__": {"polluted": true}, "binance": 1}') as Record<string, unknown>
    expect(Object.hasOwn(source, '__proto__')).toBe(true)
    const back = roundTrip(stored({ source }))
    const backSource = back.source as Record<string, unknown>
    expect(Object.hasOwn(backSource, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(backSource)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(backSource, '__proto__')?.value).toEqual({ polluted: true })
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expectExact(backSource, source)
  })

  it('returns a nested "__proto__" key (inside an array) exactly', () => {
    const source = JSON.parse('{"list": [{"__proto__": 1}, {"a": {"__proto__": {"x": 2}}}]}') as Record<string, unknown>
    expectExact(roundTrip(stored({ source })).source, source)
  })

  it('returns an extra field named "__proto__" as an own property', () => {
    const extras = JSON.parse('{"__proto__": "extra", "after": 1}') as Record<string, unknown>
    const back = roundTrip(stored({ extras }))
    expect(Object.hasOwn(back, '__proto__')).toBe(true)
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype)
    expectExact(back, expectedOf(stored({ extras })))
  })

  it('returns a lone-surrogate string in source (value and key) exactly', () => {
    const source: Record<string, unknown> = { lone: 'a\uD800b', trail: '\uDC00', ['k\uDFFF']: 1 }
    const back = roundTrip(stored({ source }))
    expectExact(back.source, source)
  })

  it('returns lone surrogates in signature, permawebTx, version and extras exactly', () => {
    const record = stored({ signature: 'sig\uD83D', permawebTx: '\uDE00', version: 'v\uD800', extras: { note: '\uDBFF' } })
    expectExact(roundTrip(record), expectedOf(record))
  })

  it('returns strings with NUL, astral characters and U+FFFF exactly', () => {
    const source = { text: 'a\u0000b\u{1F600}\uFFFF\u{10FFFF}', ['\u0000']: 'nul key' }
    expectExact(roundTrip(stored({ source })).source, source)
  })

  it('returns nested objects as plain objects', () => {
    const back = roundTrip(stored({ source: { a: { b: { c: 1 } } } }))
    const a = (back.source as { a: object }).a
    expect(Object.getPrototypeOf(a)).toBe(Object.prototype)
  })
})

describe('value codec errors', () => {
  const record = stored({ symbol: 'ETH', timestamp: 1_700_000_123_456, id: 'the-record-id' })
  const key = encodeKey(record.symbol, record.timestamp, record.id)
  const parts = { symbol: record.symbol, timestamp: record.timestamp, id: record.id }
  const decode = (value: Uint8Array) => () => decodeValue(key, value, parts, PROVIDER)

  function namesKey(message: string, details: { key?: string }): void {
    for (const text of [message, details.key ?? '']) {
      expect(text).toContain('ETH')
      expect(text).toContain('1700000123456')
      expect(text).toContain('the-record-id')
    }
  }

  it.each([0, 2, 99, 255])('an unknown format byte %d is PRICE_UNSUPPORTED_FORMAT naming the key', (format) => {
    const value = Buffer.from(encodeValue(record))
    value[0] = format
    const err = throwsCode(decode(value), 'PRICE_UNSUPPORTED_FORMAT')
    namesKey(err.message, err.details)
  })

  const header = (kind: number) => {
    const h = Buffer.alloc(10)
    h[0] = 1
    h[1] = kind
    h.writeDoubleLE(1.5, 2)
    return h
  }
  const msgpack = new Packr({ useRecords: false })

  it.each<[string, Buffer]>([
    ['an empty value', Buffer.alloc(0)],
    ['a value shorter than its header', Buffer.from([1, 0, 0, 0])],
    ['random bytes after a valid header (msgpack)', Buffer.concat([header(0), Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x01])])],
    ['a truncated msgpack array', Buffer.concat([header(0), Buffer.from([0x95, 0xa1])])],
    ['msgpack with trailing bytes', Buffer.concat([header(0), msgpack.pack(['s', 't', 'v', {}, null]), Buffer.from([0xff, 0xff])])],
    ['a msgpack map instead of the body array', Buffer.concat([header(0), msgpack.pack({ a: 1 })])],
    ['a msgpack array of the wrong length', Buffer.concat([header(0), msgpack.pack(['s', 't', 'v', {}])])],
    ['the msgpack "never used" byte 0xc1', Buffer.concat([header(0), Buffer.from([0xc1])])],
    ['an empty msgpack body', header(0)],
    ['invalid JSON text', Buffer.concat([header(1), Buffer.from('["s","t"', 'utf8')])],
    ['JSON that is not an array', Buffer.concat([header(1), Buffer.from('{"a":1}', 'utf8')])],
    ['an unknown body kind', Buffer.concat([header(7), msgpack.pack(['s', 't', 'v', {}, null])])],
  ])('%s is PRICE_CORRUPT_VALUE naming the key', (_name, value) => {
    const err = throwsCode(decode(value), 'PRICE_CORRUPT_VALUE')
    namesKey(err.message, err.details)
  })

  it.each<[string, unknown[]]>([
    ['numbers where strings belong', [1, 2, 3, 4, 5]],
    ['a source that is not an object', ['s', 't', 'v', 'not an object', null]],
    ['extras that are not an object', ['s', 't', 'v', {}, 42]],
  ])('a body that decodes to the wrong types (%s) is PRICE_CORRUPT_VALUE, not a malformed record', (_name, body) => {
    const value = Buffer.concat([header(0), msgpack.pack(body)])
    const err = throwsCode(decode(value), 'PRICE_CORRUPT_VALUE')
    namesKey(err.message, err.details)
  })
})
