import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeKey, encodeKey, symbolRange } from '../../src/keys/key-codec.js'

const MAX = Number.MAX_SAFE_INTEGER

/** UTF-8 byte order, computed by encoding (independent of the key codec). */
function bytes(a: string, b: string): number {
  return Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')))
}

interface Parts {
  symbol: string
  timestamp: number
  id: string
}

function compareParts(a: Parts, b: Parts): number {
  return bytes(a.symbol, b.symbol) || Math.sign(a.timestamp - b.timestamp) || bytes(a.id, b.id)
}

// Characters that make prefixes and UTF-8 vs UTF-16 order differ: '-' (0x2D) after the 0x00 separator,
// U+E000..U+FFFF (3 UTF-8 bytes, after surrogates in UTF-16) vs astral characters (4 bytes).
const tricky = fc.constantFrom('B', 'T', 'C', '-', '.', 'a', '\u00e9', '\uE000', '\uFFFD', '\u{10000}', '\u{1F600}', '\u{10FFFF}')
const SYMBOL_FORBIDDEN = /[\s,\p{Cc}]/u

const symbolArb = fc
  .oneof(
    fc.string({ unit: tricky, minLength: 1, maxLength: 6 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }),
    fc.constantFrom('BTC', 'BTC-USD', 'BTC.e', 'BT', '__proto__'),
  )
  .filter((s) => s.isWellFormed() && !SYMBOL_FORBIDDEN.test(s) && [...s].length <= 64)

const idArb = fc
  .oneof(fc.string({ unit: tricky, minLength: 1, maxLength: 6 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }))
  .filter((s) => s.isWellFormed() && !/\p{Cc}/u.test(s))

const timestampArb = fc.oneof(
  fc.constantFrom(0, 1, 255, 256, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, MAX - 1, MAX),
  fc.integer({ min: 0, max: 2 ** 32 + 1000 }),
  fc.maxSafeNat(),
)

const partsArb = fc.record({ symbol: symbolArb, timestamp: timestampArb, id: idArb })

/** Pairs that often share a symbol and/or timestamp, so every level of the comparison is exercised. */
const pairArb = fc.oneof(
  fc.tuple(partsArb, partsArb),
  fc.tuple(partsArb, partsArb).map(([a, b]): [Parts, Parts] => [a, { ...b, symbol: a.symbol }]),
  fc.tuple(partsArb, partsArb).map(([a, b]): [Parts, Parts] => [a, { ...b, symbol: a.symbol, timestamp: a.timestamp }]),
)

function inRange(key: Buffer, range: { gte: Buffer; lt: Buffer }): boolean {
  return Buffer.compare(key, range.gte) >= 0 && Buffer.compare(key, range.lt) < 0
}

describe('key order (property)', () => {
  it('comparing encoded keys has the sign of comparing (symbol bytes, timestamp, id bytes)', () => {
    fc.assert(
      fc.property(pairArb, ([a, b]) => {
        const actual = Math.sign(Buffer.compare(encodeKey(a.symbol, a.timestamp, a.id), encodeKey(b.symbol, b.timestamp, b.id)))
        expect(actual).toBe(compareParts(a, b))
      }),
      { numRuns: 500 },
    )
  })

  it('decoding an encoded key gives back its parts', () => {
    fc.assert(
      fc.property(partsArb, (p) => {
        expect(decodeKey(encodeKey(p.symbol, p.timestamp, p.id))).toEqual(p)
      }),
      { numRuns: 300 },
    )
  })

  it('symbolRange(s, from, to) holds a key exactly when its symbol is s and from <= timestamp <= to', () => {
    const windowArb = fc.tuple(timestampArb, timestampArb).map(([x, y]): [number, number] => (x <= y ? [x, y] : [y, x]))
    fc.assert(
      fc.property(pairArb, windowArb, fc.integer({ min: -2, max: 3 }), ([key, other], [from, to], edge) => {
        // Often put the key's timestamp right at, or just outside, an edge of the window.
        const candidates = [from - 1, from, to, to + 1]
        const pick = edge < 0 ? key.timestamp : (candidates[edge] as number)
        const timestamp = pick >= 0 && pick <= MAX ? pick : key.timestamp
        const encoded = encodeKey(key.symbol, timestamp, key.id)
        const range = symbolRange(other.symbol, from, to)
        expect(inRange(encoded, range)).toBe(key.symbol === other.symbol && from <= timestamp && timestamp <= to)
        expect(inRange(encoded, symbolRange(key.symbol, from, to))).toBe(from <= timestamp && timestamp <= to)
      }),
      { numRuns: 500 },
    )
  })

  it('keys of a symbol never fall in the full range of a symbol it is a prefix of, or the other way round', () => {
    const extension = fc.string({ unit: tricky, minLength: 1, maxLength: 4 })
    fc.assert(
      fc.property(symbolArb, extension, timestampArb, idArb, (symbol, more, timestamp, id) => {
        const longer = symbol + more
        fc.pre([...longer].length <= 64)
        expect(inRange(encodeKey(symbol, timestamp, id), symbolRange(longer))).toBe(false)
        expect(inRange(encodeKey(longer, timestamp, id), symbolRange(symbol))).toBe(false)
      }),
      { numRuns: 300 },
    )
  })

  it('BTC keys never fall in symbolRange("BTC-USD") and vice versa, at any timestamp and id', () => {
    fc.assert(
      fc.property(timestampArb, idArb, (timestamp, id) => {
        expect(inRange(encodeKey('BTC', timestamp, id), symbolRange('BTC-USD'))).toBe(false)
        expect(inRange(encodeKey('BTC-USD', timestamp, id), symbolRange('BTC'))).toBe(false)
        expect(inRange(encodeKey('BTC', timestamp, id), symbolRange('BTC'))).toBe(true)
      }),
    )
  })
})
