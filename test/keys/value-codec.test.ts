/**
 * The record value of format 3 (src/keys/value-codec.ts):
 * `flags | value (float64 LE) | body`, the body either
 * `signature | permawebTx | version | msgpack [source, extras]` or a JSON
 * array. Damaged bytes are built here from that documented layout.
 */
import fc from 'fast-check'
import { Packr } from 'msgpackr'
import { describe, expect, it } from 'vitest'
import { ByteWriter } from '../../src/keys/bytes.js'
import { VALUE_VERSION } from '../../src/keys/format-version.js'
import { decodeValue, describePlace, encodeValue } from '../../src/keys/value-codec.js'
import type { ValuePlace } from '../../src/keys/value-codec.js'
import type { StoredRecord } from '../../src/records/stored-record.js'
import { validateRecord } from '../../src/records/validate-record.js'
import { inputRecordArb, symbolArb } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER, TEST_PROVIDER as PROVIDER, T0 } from '../../src/testing/records.js'
import { expectExact, throwsCode } from '../support/assertions.js'
import { expected } from '../support/records.js'

const SIGNATURE_BYTES = 0b01
const JSON_BODY = 0b10

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

const placeOf = (record: StoredRecord, entry = 'chunk test'): ValuePlace => ({ symbol: record.symbol, timestamp: record.timestamp, id: record.id, entry })

function roundTrip(record: StoredRecord, minutes?: number): Record<string, unknown> {
  const bytes = encodeValue(record)
  return decodeValue(bytes, 0, bytes.length, placeOf(record), PROVIDER, minutes) as Record<string, unknown>
}

/** The returned record per the contract: known fields, extras in order, providerPublicKey (then minutes). */
function expectedOf(record: StoredRecord, minutes?: number): Record<string, unknown> {
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
  if (minutes !== undefined) put('minutes', minutes)
  return out
}

describe('value codec: round trip (property)', () => {
  it('any valid record comes back exactly, with provider and public key joined', () => {
    fc.assert(
      fc.property(fc.uniqueArray(symbolArb, { minLength: 1, maxLength: 3 }).chain((symbols) => inputRecordArb(symbols, 60_000)), (input) => {
        const record = validateRecord(input, 0, TEST_PROVIDER)
        const bytes = encodeValue(record)
        const place = placeOf(record)
        expectExact(decodeValue(bytes, 0, bytes.length, place, TEST_PROVIDER), expected(input, { provider: TEST_PROVIDER }))
        const minutes = Math.floor(record.timestamp / 60_000) % 60
        // (Built here, not with expected()'s Date, which cannot hold timestamps past 8.64e15.)
        const withMinutes = { ...expected(input, { provider: TEST_PROVIDER }), minutes }
        expectExact(decodeValue(bytes, 0, bytes.length, place, TEST_PROVIDER, minutes), withMinutes)
      }),
      { numRuns: 500 },
    )
  })

  it('decodes a value from a window inside a larger buffer, as chunks and log entries hold them', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(symbolArb, { minLength: 1, maxLength: 2 }).chain((symbols) => fc.array(inputRecordArb(symbols, 1000), { minLength: 1, maxLength: 5 })),
        fc.uint8Array({ maxLength: 20 }),
        (inputs, padding) => {
          const records = inputs.map((input) => validateRecord(input, 0, TEST_PROVIDER))
          const values = records.map(encodeValue)
          const all = Buffer.concat([padding, ...values, padding])
          let start = padding.length
          records.forEach((record, i) => {
            const end = start + (values[i] as Buffer).length
            expectExact(decodeValue(all, start, end, placeOf(record), TEST_PROVIDER), expected(inputs[i] as Record<string, unknown>, { provider: TEST_PROVIDER }))
            start = end
          })
        },
      ),
      { numRuns: 200 },
    )
  })

  it('the value slot keeps any float64 bit for bit, -0 included', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        const back = roundTrip(stored({ value }))
        expect(Object.is(back.value, value)).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})

describe('value codec: round trip (cases)', () => {
  it('gives back the record with fields in contract order, `minutes` last when asked for', () => {
    const record = stored()
    const back = roundTrip(record)
    expectExact(back, expectedOf(record))
    expect(Object.keys(back)).toEqual([
      'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'providerPublicKey',
    ])
    expectExact(roundTrip(record, 13), expectedOf(record, 13))
    expect(Object.keys(roundTrip(record, 0)).at(-1)).toBe('minutes')
  })

  it('keeps extras in their order, between timestamp and providerPublicKey', () => {
    const extras = { zeta: 1, evmSignature: '0xabc', alpha: { b: 1, a: [2, 'x', null, true, { c: false }] }, mid: '' }
    const back = roundTrip(stored({ extras }))
    expectExact(back, expectedOf(stored({ extras })))
  })

  it.each([
    ['-0', -0], ['0', 0], ['smallest subnormal', 5e-324], ['negative subnormal', -5e-324], ['Number.MAX_VALUE', Number.MAX_VALUE],
    ['-Number.MAX_VALUE', -Number.MAX_VALUE], ['2^53 + 2', 2 ** 53 + 2], ['0.1 + 0.2', 0.1 + 0.2],
  ])('returns value %s bit for bit, in the fixed slot after the flags', (_name, value) => {
    const bytes = encodeValue(stored({ value }))
    const slot = Buffer.alloc(8)
    slot.writeDoubleLE(value)
    expect(bytes.subarray(1, 9)).toEqual(slot)
    expect(Object.is(roundTrip(stored({ value })).value, value)).toBe(true)
  })

  // msgpackr's maps stop at 65,535 keys: such a record is kept as a JSON body, whether flat or not, plain or not.
  it('keeps a source or an extra of more than 65,535 keys exactly (as a JSON body)', () => {
    const big = Object.fromEntries(Array.from({ length: 70_000 }, (_, i) => [`k${i}`, i % 3 === 0 ? `s${i}` : i / 7]))
    for (const record of [
      stored({ source: big, plainJson: true }),
      stored({ source: { nested: big }, plainJson: true }),
      stored({ extras: { big }, plainJson: true }),
      stored({ source: big }),
    ]) {
      const bytes = encodeValue(record)
      expect(bytes[0]).toBe(JSON_BODY)
      expectExact(roundTrip(record), expectedOf(record))
    }
  })

  it('decodes bodies of any size in any order (the reused unpack buffer never leaks bytes between values)', () => {
    for (const size of [20_000, 0, 3, 5_000, 70_000, 1]) {
      const record = stored({ signature: `s${'s'.repeat(size)}`, source: { [`k${size}`]: size, big: 'é'.repeat(size >> 1) } })
      expectExact(roundTrip(record), expectedOf(record))
    }
  })

  it('returns numbers inside source exactly: subnormal, huge, large integers', () => {
    const source = { sub: 5e-324, huge: Number.MAX_VALUE, big: 2 ** 53 - 1, neg: -(2 ** 53 - 1), past32: 2 ** 32 + 1, frac: 0.1 }
    expectExact(roundTrip(stored({ source })).source, source)
  })
})

describe('value codec: signatures', () => {
  const flags = (record: StoredRecord): number => encodeValue(record)[0] as number

  it('a canonical base64 signature is stored as its bytes (flag 0b01), a quarter smaller, and comes back as the same text', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 300 }), (raw) => {
        const signature = Buffer.from(raw).toString('base64')
        const asBytes = stored({ signature })
        expect(flags(asBytes) & SIGNATURE_BYTES).toBe(SIGNATURE_BYTES)
        expect(roundTrip(asBytes).signature).toBe(signature)
        // The same signature as text (one character off canonical) takes more room.
        const asText = stored({ signature: `${signature}!` })
        expect(flags(asText) & SIGNATURE_BYTES).toBe(0)
        expect(encodeValue(asBytes).length).toBeLessThan(encodeValue(asText).length)
      }),
      { numRuns: 200 },
    )
  })

  it.each([
    ['too short', 'YQ'],
    ['not a multiple of 4', 'abc'],
    ['non-canonical padding bits', 'YR=='],
    ['base64url alphabet', 'ab-_'],
    ['whitespace inside', 'YQ== '],
    ['a newline', 'YWJj\nZGVm'],
    ['only padding', '===='],
    ['padding in the middle', 'YQ==YQ=='],
    ['not base64 at all', 'sig-BTC-1700000000000'],
    ['a hex signature', '0x1234abcd'],
    ['non-ASCII', 'éééé'],
  ])('a non-canonical signature (%s) is stored as text and comes back unchanged', (_name, signature) => {
    const record = stored({ signature })
    expect(flags(record) & SIGNATURE_BYTES).toBe(0)
    expectExact(roundTrip(record), expectedOf(record))
  })

  it('any signature string round-trips, canonical or not', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.base64String({ minLength: 1, maxLength: 40 })), (signature) => {
        fc.pre(signature.length > 0)
        expect(roundTrip(stored({ signature })).signature).toBe(signature)
      }),
      { numRuns: 300 },
    )
  })
})

describe('value codec: the JSON body, for what msgpack or UTF-8 would alter', () => {
  const isJson = (record: StoredRecord): boolean => ((encodeValue(record)[0] as number) & JSON_BODY) !== 0

  const cases: [string, Partial<StoredRecord>][] = [
    ['a "__proto__" key in source', { source: JSON.parse('{"__proto__": {"polluted": true}, "binance": 1}') as Record<string, unknown> }],
    ['a nested "__proto__" key (inside an array)', { source: JSON.parse('{"list": [{"__proto__": 1}, {"a": {"__proto__": {"x": 2}}}]}') as Record<string, unknown> }],
    ['an extra field named "__proto__"', { extras: JSON.parse('{"__proto__": "extra", "after": 1}') as Record<string, unknown> }],
    ['a lone surrogate in a source value and key', { source: { lone: 'a\uD800b', trail: '\uDC00', ['k\uDFFF']: 1 } }],
    ['lone surrogates in signature, permawebTx, version and extras', { signature: 'sig\uD83D', permawebTx: '\uDE00', version: 'v\uD800', extras: { note: '\uDBFF' } }],
    ['a nested -0 in source', { source: JSON.parse('{"binance": -0, "nested": [-0, {"x": -0}]}') as Record<string, unknown> }],
    ['-0 in an extra', { extras: { drift: -0 } }],
    ['-0 next to a lone surrogate', { source: JSON.parse('{"note": "\\ud800", "binance": -0}') as Record<string, unknown> }],
    ['a canonical base64 signature next to a "__proto__" key', { signature: 'c2lnbmF0dXJl', source: JSON.parse('{"__proto__": 0}') as Record<string, unknown> }],
  ]

  it.each(cases)('%s: takes the JSON body and comes back exactly', (_name, overrides) => {
    const record = stored(overrides)
    expect(isJson(record)).toBe(true)
    const back = roundTrip(record)
    expectExact(back, expectedOf(record))
    // Own properties, not prototypes: nothing was polluted on the way.
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype)
    expect(Object.getPrototypeOf(back.source)).toBe(Object.prototype)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('-0 as the value alone needs no JSON body: the value has its own slot', () => {
    expect(isJson(stored({ value: -0 }))).toBe(false)
  })

  it.each<[string, Partial<StoredRecord>]>([
    ['an ordinary record', {}],
    ['strings with NUL, astral characters and U+FFFF', { source: { text: 'a\u0000b\u{1F600}\uFFFF\u{10FFFF}', ['\u0000']: 'nul key' } }],
    ['prototype names other than __proto__', { extras: { constructor: 1, toString: 'x', hasOwnProperty: null } }],
    ['0 and negative numbers', { source: { zero: 0, neg: -1.5 } }],
  ])('%s keeps the msgpack body and comes back exactly', (_name, overrides) => {
    const record = stored(overrides)
    expect(isJson(record)).toBe(false)
    expectExact(roundTrip(record), expectedOf(record))
  })

  it('records with lone surrogates, __proto__ keys and -0 anywhere round-trip (property)', () => {
    const awkward = fc.constantFrom('\uD800', 'a\uDC00', '__proto__', 'x', '\u{1F600}', '')
    const leaf = fc.oneof(fc.constantFrom(-0, 0, 1.5, null, true), awkward)
    const obj = fc.dictionary(awkward, fc.oneof(leaf, fc.array(leaf, { maxLength: 2 }), fc.dictionary(awkward, leaf, { maxKeys: 2, noNullPrototype: true })), {
      maxKeys: 3, noNullPrototype: true,
    })
    fc.assert(
      fc.property(obj, fc.option(obj, { nil: null }), awkward, (source, extras, text) => {
        const record = stored({ source, extras, permawebTx: text, version: text })
        expectExact(roundTrip(record), expectedOf(record))
      }),
      { numRuns: 300 },
    )
  })
})

describe('value codec: damaged bytes → PRICE_CORRUPT_VALUE naming the record', () => {
  const record = stored({ symbol: 'ETH', timestamp: 1_700_000_123_456, id: 'the-record-id' })
  const place = placeOf(record, 'chunk ETH@1700000000000+3600000ms part 0')
  const decode = (value: Uint8Array) => () => decodeValue(Buffer.from(value), 0, value.length, place, PROVIDER)
  const packr = new Packr({ useRecords: false })

  function namesRecord(err: { message: string; details: { key?: string } }): void {
    expect(err.details.key).toBe(describePlace(place))
    for (const text of [err.message, err.details.key ?? '']) {
      for (const part of ['ETH', '1700000123456', 'the-record-id', 'chunk ETH@1700000000000+3600000ms part 0']) expect(text).toContain(part)
    }
  }

  /** A value built from the documented layout: flags, 1.5, then the body bytes. */
  const value = (flags: number, ...body: Uint8Array[]): Buffer => new ByteWriter().byte(flags).float64(1.5).bytes(Buffer.concat(body)).finish()
  const texts = (...parts: string[]): Buffer => parts.reduce((w, part) => w.text(part), new ByteWriter()).finish()

  it('the layout built here is the one the codec reads', () => {
    const good = value(0, texts('sig', 'tx', 'v'), packr.pack([{ a: 1 }, null]))
    expect(decodeValue(good, 0, good.length, place, PROVIDER)).toMatchObject({ value: 1.5, signature: 'sig', permawebTx: 'tx', version: 'v', source: { a: 1 } })
    expect(VALUE_VERSION).toBe(3)
  })

  it.each([0b100, 0b1000, 0x80, 0xff, 0b111])('unknown flags %i', (flags) => {
    const bytes = Buffer.from(encodeValue(record))
    bytes[0] = flags
    const err = throwsCode(decode(bytes), 'PRICE_CORRUPT_VALUE')
    namesRecord(err)
    expect(err.message).toContain(String(flags))
  })

  it('every truncation of a value (msgpack body, bytes signature, JSON body) fails', () => {
    const bodies = [
      encodeValue(record),
      encodeValue(stored({ ...record, signature: 'not base64!' })),
      encodeValue(stored({ ...record, source: JSON.parse('{"__proto__": 1}') as Record<string, unknown> })),
    ]
    for (const full of bodies) {
      for (let cut = 0; cut < full.length; cut++) namesRecord(throwsCode(decode(full.subarray(0, cut)), 'PRICE_CORRUPT_VALUE'))
    }
  })

  it.each<[string, Buffer]>([
    ['an empty value', Buffer.alloc(0)],
    ['a value shorter than its header', Buffer.from([0, 0, 0, 0])],
    ['a header and nothing else', value(0)],
    ['a text length past the end', value(0, new ByteWriter().varint(1000).finish(), Buffer.from('sig'))],
    ['a varint that never ends', value(0, Buffer.alloc(12, 0xff))],
    ['random bytes after the texts', value(0, texts('s', 't', 'v'), Buffer.from([0xde, 0xad, 0xbe, 0xef, 0x01]))],
    ['the msgpack "never used" byte 0xc1', value(0, texts('s', 't', 'v'), Buffer.from([0xc1]))],
    ['a truncated msgpack array', value(0, texts('s', 't', 'v'), Buffer.from([0x92, 0x81]))],
    ['msgpack with trailing bytes', value(0, texts('s', 't', 'v'), packr.pack([{}, null]), Buffer.from([0xff, 0xff]))],
    ['a msgpack map instead of [source, extras]', value(0, texts('s', 't', 'v'), packr.pack({ a: 1 }))],
    ['a msgpack array of the wrong length', value(0, texts('s', 't', 'v'), packr.pack([{}, null, 1]))],
    ['a source that is not an object', value(0, texts('s', 't', 'v'), packr.pack(['not an object', null]))],
    ['a source that is an array', value(0, texts('s', 't', 'v'), packr.pack([[1], null]))],
    ['extras that are not an object', value(0, texts('s', 't', 'v'), packr.pack([{}, 42]))],
    ['invalid JSON text', value(JSON_BODY, Buffer.from('["s","t"', 'utf8'))],
    ['JSON that is not an array', value(JSON_BODY, Buffer.from('{"a":1}', 'utf8'))],
    ['a JSON array of the wrong length', value(JSON_BODY, Buffer.from('["s","t","v",{}]', 'utf8'))],
    ['JSON with numbers where strings belong', value(JSON_BODY, Buffer.from('[1,2,3,{},null]', 'utf8'))],
    ['JSON with a null source', value(JSON_BODY, Buffer.from('["s","t","v",null,null]', 'utf8'))],
    ['JSON with array extras', value(JSON_BODY, Buffer.from('["s","t","v",{},[]]', 'utf8'))],
    ['a msgpack body read as JSON', value(JSON_BODY, texts('s', 't', 'v'), packr.pack([{}, null]))],
  ])('%s', (_name, bytes) => {
    const err = throwsCode(decode(bytes), 'PRICE_CORRUPT_VALUE')
    namesRecord(err)
  })

  it('a decoding failure keeps the decoder\'s error as cause', () => {
    const err = throwsCode(decode(value(0, texts('s', 't', 'v'), Buffer.from([0xc1]))), 'PRICE_CORRUPT_VALUE')
    expect(err.cause).toBeDefined()
  })

  it('any bytes: a record of the documented shape, or PRICE_CORRUPT_VALUE naming the record (property)', () => {
    const FIELDS = ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp']
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc.tuple(fc.constantFrom(0, 1, 2, 3), fc.uint8Array({ maxLength: 64 })).map(([flags, body]) => value(flags, body)),
      fc.tuple(fc.nat(encodeValue(record).length), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => {
        const damaged = Buffer.from(encodeValue(record))
        if (at < damaged.length) damaged[at] = byte
        return damaged
      }),
    )
    fc.assert(
      fc.property(bytes, (damaged) => {
        let back: Record<string, unknown> | undefined
        try {
          back = decode(damaged)() as Record<string, unknown>
        } catch (err) {
          namesRecord(throwsCode(() => { throw err }, 'PRICE_CORRUPT_VALUE'))
          return
        }
        expect(Object.keys(back).slice(0, FIELDS.length)).toEqual(FIELDS)
        expect(Object.keys(back).at(-1)).toBe('providerPublicKey')
        for (const field of ['signature', 'permawebTx', 'version']) expect(typeof back[field]).toBe('string')
        expect(typeof back.source === 'object' && back.source !== null && !Array.isArray(back.source)).toBe(true)
      }),
      { numRuns: 1000 },
    )
  })
})

describe('value codec: which signatures are stored as bytes', () => {
  // The oracle: a string is canonical when Node decodes and re-encodes it to the same text.
  const reencodes = (text: string): boolean => text.length > 0 && Buffer.from(text, 'base64').toString('base64') === text
  const storedAsBytes = (signature: string): boolean => {
    const stored = stored0()
    return ((encodeValue({ ...stored, signature })[0] as number) & 1) === 1
  }
  const stored0 = (): StoredRecord => validateRecord({
    id: 'a', symbol: 'BTC', provider: PROVIDER.id, value: 1, signature: 'x', permawebTx: '', version: '', source: {}, timestamp: T0,
  }, 0, PROVIDER)
  const roundTrips = (signature: string): string => {
    const bytes = encodeValue({ ...stored0(), signature })
    return decodeValue(bytes, 0, bytes.length, { symbol: 'BTC', timestamp: T0, id: 'a', entry: 'test' }, PROVIDER).signature as string
  }

  it('exactly the canonical base64 ones, for base64 of any bytes and for near misses; every one comes back unchanged', () => {
    const nearBase64 = fc.stringMatching(/^[A-Za-z0-9+/=_\- ]{1,24}$/)
    const encoded = fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64'))
    const tweaked = fc.tuple(encoded, fc.nat(), fc.constantFrom('A', 'B', '=', '-', '_', 'é', ' '))
      .map(([text, at, digit]) => text.slice(0, at % text.length) + digit + text.slice((at % text.length) + 1))
    fc.assert(fc.property(fc.oneof(nearBase64, encoded, tweaked), (signature) => {
      expect(storedAsBytes(signature)).toBe(reencodes(signature))
      expect(roundTrips(signature)).toBe(signature)
    }), { numRuns: 2000 })
  })

  it('refuses padding over non-zero bits and text without padding', () => {
    expect(storedAsBytes('QQ==')).toBe(true)
    expect(storedAsBytes('QR==')).toBe(false)
    expect(storedAsBytes('QUI=')).toBe(true)
    expect(storedAsBytes('QUJ=')).toBe(false)
    expect(storedAsBytes('QQ')).toBe(false)
    expect(roundTrips('QR==')).toBe('QR==')
  })
})
