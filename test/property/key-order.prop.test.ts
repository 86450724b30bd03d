/**
 * Key order of format 3 (src/keys/key-layout.ts): the byte order of each
 * kind of key equals the order of the parts it encodes, symbols compared by
 * UTF-8 bytes, and one symbol's keys never interleave with another's, even
 * when one symbol is a prefix of the other (`BTC` and `BTC-USD`).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  PERIOD_MS, chunkKey, headsKey, headsRange, logKey, periodOf, readHeadsPeriod, readLogKey,
} from '../../src/keys/key-layout.js'

const MAX = Number.MAX_SAFE_INTEGER
const MAX_PERIOD = periodOf(MAX)

/** UTF-8 byte order, computed by encoding (independent of the key layout). */
function bytes(a: string, b: string): number {
  return Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')))
}

const num = (a: number, b: number): number => Math.sign(a - b)

// Characters that make prefixes and UTF-8 vs UTF-16 order differ: '-' (0x2D) after the 0x00 separator,
// U+E000..U+FFFF (3 UTF-8 bytes, after surrogates in UTF-16) vs astral characters (4 bytes), and
// the byte 0x01 territory just above the separator (no control characters are valid, so '!' stands in).
const tricky = fc.constantFrom('B', 'T', 'C', '-', '.', '!', 'a', '\u00e9', '\uE000', '\uFFFD', '\u{10000}', '\u{1F600}', '\u{10FFFF}')
const SYMBOL_FORBIDDEN = /[\s,\p{Cc}]/u

const symbolArb = fc
  .oneof(
    fc.string({ unit: tricky, minLength: 1, maxLength: 6 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }),
    fc.constantFrom('BTC', 'BTC-USD', 'BTC.e', 'BT', '__proto__'),
  )
  .filter((s) => s.isWellFormed() && !SYMBOL_FORBIDDEN.test(s) && [...s].length <= 64)

/** Periods at byte edges of the u32 and around today's hours. */
const periodArb = fc.oneof(
  fc.constantFrom(0, 1, 255, 256, 65_535, 65_536, 2 ** 24, 2 ** 31, MAX_PERIOD - 1, MAX_PERIOD),
  fc.integer({ min: 472_000, max: 473_000 }),
  fc.integer({ min: 0, max: MAX_PERIOD }),
)
const partArb = fc.oneof(fc.constantFrom(0, 1, 255, 256, 0xffff), fc.integer({ min: 0, max: 0xffff }))
const sequenceArb = fc.oneof(fc.constantFrom(0, 1, 255, 256, 2 ** 32 - 1, 2 ** 32, MAX), fc.maxSafeNat())

interface ChunkParts {
  period: number
  symbol: string
  part: number
}

const chunkArb = fc.record({ period: periodArb, symbol: symbolArb, part: partArb })

/** Pairs that often share a period and/or symbol, so every level of the comparison is exercised. */
const chunkPairArb = fc.oneof(
  fc.tuple(chunkArb, chunkArb),
  fc.tuple(chunkArb, chunkArb).map(([a, b]): [ChunkParts, ChunkParts] => [a, { ...b, period: a.period }]),
  fc.tuple(chunkArb, chunkArb).map(([a, b]): [ChunkParts, ChunkParts] => [a, { ...b, period: a.period, symbol: a.symbol }]),
  fc.tuple(chunkArb, chunkArb).map(([a, b]): [ChunkParts, ChunkParts] => [a, { ...b, symbol: a.symbol }]),
)

const headsArb = fc.record({ symbol: symbolArb, period: periodArb })
const headsPairArb = fc.oneof(
  fc.tuple(headsArb, headsArb),
  fc.tuple(headsArb, headsArb).map(([a, b]) => [a, { ...b, symbol: a.symbol }] as const),
  fc.tuple(headsArb, headsArb).map(([a, b]) => [a, { ...b, period: a.period }] as const),
)

const logArb = fc.record({ period: periodArb, sequence: sequenceArb })

const cmp = (a: Buffer, b: Buffer): number => Math.sign(Buffer.compare(a, b))
const within = (key: Buffer, range: { gte: Buffer; lte: Buffer }): boolean => cmp(key, range.gte) >= 0 && cmp(key, range.lte) <= 0

describe('key order (property)', () => {
  it('chunk keys compare as (period, symbol bytes, part)', () => {
    fc.assert(
      fc.property(chunkPairArb, ([a, b]) => {
        expect(cmp(chunkKey(a.period, a.symbol, a.part), chunkKey(b.period, b.symbol, b.part)))
          .toBe(num(a.period, b.period) || bytes(a.symbol, b.symbol) || num(a.part, b.part))
      }),
      { numRuns: 1000 },
    )
  })

  it('heads keys compare as (symbol bytes, period), and give back their period', () => {
    fc.assert(
      fc.property(headsPairArb, ([a, b]) => {
        expect(cmp(headsKey(a.symbol, a.period), headsKey(b.symbol, b.period))).toBe(bytes(a.symbol, b.symbol) || num(a.period, b.period))
        expect(readHeadsPeriod(headsKey(a.symbol, a.period))).toBe(a.period)
      }),
      { numRuns: 1000 },
    )
  })

  it('log keys compare as (period, sequence), and give back both', () => {
    fc.assert(
      fc.property(logArb, logArb, (a, b) => {
        expect(cmp(logKey(a.period, a.sequence), logKey(b.period, b.sequence))).toBe(num(a.period, b.period) || num(a.sequence, b.sequence))
        expect(readLogKey(logKey(a.period, a.sequence))).toEqual(a)
      }),
      { numRuns: 500 },
    )
  })

  it('a record\'s chunk and heads keys use the period of its timestamp: later hours sort after earlier ones', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), fc.maxSafeNat(), symbolArb, (t1, t2, symbol) => {
        const [p1, p2] = [periodOf(t1), periodOf(t2)]
        expect(p1 * PERIOD_MS <= t1 && t1 < (p1 + 1) * PERIOD_MS).toBe(true)
        if (t1 <= t2) {
          expect(cmp(chunkKey(p1, symbol, 0xffff), chunkKey(p2, '!', 0))).toBe(p1 < p2 ? -1 : bytes(symbol, '!') || 1)
          expect(cmp(headsKey(symbol, p1), headsKey(symbol, p2))).toBe(num(p1, p2))
        }
      }),
      { numRuns: 300 },
    )
  })

  it('headsRange(s, first, last) holds a heads key exactly when its symbol is s and first <= period <= last', () => {
    const windowArb = fc.tuple(periodArb, periodArb).map(([x, y]) => (x <= y ? [x, y] : [y, x]))
    fc.assert(
      fc.property(headsPairArb, windowArb, fc.integer({ min: -1, max: 3 }), ([key, other], [first, last], edge) => {
        // Often put the key's period right at, or just outside, an edge of the window.
        const candidates = [(first as number) - 1, first as number, last as number, (last as number) + 1]
        const pick = edge < 0 ? key.period : (candidates[edge] as number)
        const period = pick >= 0 && pick <= MAX_PERIOD ? pick : key.period
        const encoded = headsKey(key.symbol, period)
        const inWindow = (first as number) <= period && period <= (last as number)
        expect(within(encoded, headsRange(other.symbol, first as number, last as number))).toBe(key.symbol === other.symbol && inWindow)
        expect(within(encoded, headsRange(key.symbol, first as number, last as number))).toBe(inWindow)
      }),
      { numRuns: 1000 },
    )
  })

  it('a symbol and a longer symbol it is a prefix of never interleave: all chunk parts of one period of the shorter come first', () => {
    const extension = fc.string({ unit: tricky, minLength: 1, maxLength: 4 })
    fc.assert(
      fc.property(symbolArb, extension, periodArb, partArb, partArb, (symbol, more, period, part, otherPart) => {
        const longer = symbol + more
        fc.pre([...longer].length <= 64)
        // Every part of the shorter symbol sorts before every part of the longer one, in one period.
        expect(cmp(chunkKey(period, symbol, 0xffff), chunkKey(period, longer, 0))).toBe(-1)
        expect(cmp(chunkKey(period, symbol, part), chunkKey(period, longer, otherPart))).toBe(-1)
        // The heads keys of one symbol, over all periods, form a run that no key of the other enters.
        const all = headsRange(symbol, 0, MAX_PERIOD)
        const allLonger = headsRange(longer, 0, MAX_PERIOD)
        expect(within(headsKey(longer, period), all)).toBe(false)
        expect(within(headsKey(symbol, period), allLonger)).toBe(false)
        expect(cmp(headsKey(symbol, MAX_PERIOD), headsKey(longer, 0))).toBe(-1)
      }),
      { numRuns: 500 },
    )
  })

  it('BTC and BTC-USD never interleave, at any period and part', () => {
    fc.assert(
      fc.property(periodArb, periodArb, partArb, partArb, (p1, p2, a, b) => {
        expect(cmp(chunkKey(p1, 'BTC', a), chunkKey(p1, 'BTC-USD', b))).toBe(-1)
        expect(cmp(chunkKey(p1, 'BTC', a), chunkKey(p2, 'BTC-USD', b))).toBe(p1 === p2 ? -1 : num(p1, p2))
        expect(cmp(headsKey('BTC', p1), headsKey('BTC-USD', p2))).toBe(-1)
        expect(within(headsKey('BTC', p1), headsRange('BTC-USD', 0, MAX_PERIOD))).toBe(false)
        expect(within(headsKey('BTC-USD', p1), headsRange('BTC', 0, MAX_PERIOD))).toBe(false)
        expect(within(headsKey('BTC', p1), headsRange('BTC', 0, MAX_PERIOD))).toBe(true)
      }),
    )
  })
})
