import { describe, expect, it } from 'vitest'
import {
  decodeKey, describeKey, encodeKey, readTimestamp, symbolPrefix, symbolRange,
} from '../../src/keys/key-codec.js'

const MAX = Number.MAX_SAFE_INTEGER

/** The documented layout, built by hand: symbol UTF-8 | 0x00 | uint64 BE timestamp | id UTF-8. */
function layout(symbol: string, timestamp: number, id: string): Buffer {
  const ts = Buffer.alloc(8)
  ts.writeBigUInt64BE(BigInt(timestamp))
  return Buffer.concat([Buffer.from(symbol, 'utf8'), Buffer.from([0]), ts, Buffer.from(id, 'utf8')])
}

function inRange(key: Buffer, range: { gte: Buffer; lt: Buffer }): boolean {
  return Buffer.compare(key, range.gte) >= 0 && Buffer.compare(key, range.lt) < 0
}

const CASES: [string, number, string][] = [
  ['BTC', 0, 'a'],
  ['BTC', 1, 'b3b0c44c-1f2a-4e4b-9d1e-0f2c3a4b5c6d'],
  ['BTC-USD', 2 ** 32 - 1, 'x'],
  ['stETH', 2 ** 32, 'id with spaces, commas'],
  ['USDC.e', 1_700_000_000_000, '\u00e9\u4e2d'],
  ['\u{1F600}', MAX, '\u{10FFFF}'.repeat(128)],
  ['__proto__', MAX - 1, '\uE000'],
]

describe('encodeKey', () => {
  it.each(CASES)('lays out %j @ %d # %j as symbol|00|uint64be|id', (symbol, timestamp, id) => {
    expect(encodeKey(symbol, timestamp, id).equals(layout(symbol, timestamp, id))).toBe(true)
  })

  it('writes timestamps across the 32-bit boundary exactly', () => {
    for (const ts of [2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 40 + 12345, MAX]) {
      const key = encodeKey('A', ts, 'i')
      expect(key.readBigUInt64BE(2)).toBe(BigInt(ts))
    }
  })
})

describe('decodeKey', () => {
  it.each(CASES)('round-trips %j @ %d # %j', (symbol, timestamp, id) => {
    expect(decodeKey(encodeKey(symbol, timestamp, id))).toEqual({ symbol, timestamp, id })
  })

  it('reads a key that is a view into a larger buffer (non-zero byteOffset)', () => {
    const key = layout('ETH', 2 ** 33 + 7, 'the-id')
    const big = Buffer.concat([Buffer.from('garbage-before'), key, Buffer.from('after')])
    const view = new Uint8Array(big.buffer, big.byteOffset + 14, key.length)
    expect(decodeKey(view)).toEqual({ symbol: 'ETH', timestamp: 2 ** 33 + 7, id: 'the-id' })
    expect(readTimestamp(view, 4)).toBe(2 ** 33 + 7)
  })

  it('returns undefined for bytes that are not a record key', () => {
    expect(decodeKey(Buffer.from('no separator here'))).toBeUndefined()
    expect(decodeKey(Buffer.concat([Buffer.from([0]), Buffer.alloc(8)]))).toBeUndefined() // empty symbol
    expect(decodeKey(Buffer.concat([Buffer.from('BTC'), Buffer.from([0]), Buffer.alloc(7)]))).toBeUndefined() // short timestamp
    expect(decodeKey(new Uint8Array(0))).toBeUndefined()
  })

  it('decodes a key with an empty id', () => {
    expect(decodeKey(layout('BTC', 5, ''))).toEqual({ symbol: 'BTC', timestamp: 5, id: '' })
  })
})

describe('symbolPrefix / readTimestamp', () => {
  it('the prefix is the symbol bytes and a 0x00', () => {
    expect(symbolPrefix('BTC').equals(Buffer.from([0x42, 0x54, 0x43, 0]))).toBe(true)
    expect(symbolPrefix('\u00e9').equals(Buffer.from([0xc3, 0xa9, 0]))).toBe(true)
  })

  it('every key of a symbol starts with its prefix; a longer symbol sharing the text does not', () => {
    const prefix = symbolPrefix('BTC')
    expect(encodeKey('BTC', 9, 'x').subarray(0, prefix.length).equals(prefix)).toBe(true)
    expect(encodeKey('BTC-USD', 9, 'x').subarray(0, prefix.length).equals(prefix)).toBe(false)
  })

  it('reads the timestamp back after a multi-byte symbol', () => {
    const key = layout('\u{1F600}x', 123_456_789_012, 'id')
    expect(readTimestamp(key, Buffer.byteLength('\u{1F600}x') + 1)).toBe(123_456_789_012)
  })
})

describe('symbolRange', () => {
  it('defaults to the whole time axis: 0 .. 2^53-1 inclusive', () => {
    const range = symbolRange('BTC')
    expect(range.gte.equals(layout('BTC', 0, ''))).toBe(true)
    const lt = Buffer.concat([Buffer.from('BTC\u0000'), Buffer.from([0, 0x20, 0, 0, 0, 0, 0, 0])]) // 2^53
    expect(range.lt.equals(lt)).toBe(true)
    expect(inRange(layout('BTC', 0, ''), range)).toBe(true)
    expect(inRange(layout('BTC', 0, 'a'), range)).toBe(true)
    expect(inRange(layout('BTC', MAX, '\u{10FFFF}'.repeat(128)), range)).toBe(true)
  })

  it('includes exactly from..to, with any id at either end', () => {
    const range = symbolRange('BTC', 100, 200)
    for (const id of ['', 'a', '\u{10FFFF}'.repeat(128)]) {
      expect(inRange(layout('BTC', 99, id), range)).toBe(false)
      expect(inRange(layout('BTC', 100, id), range)).toBe(true)
      expect(inRange(layout('BTC', 150, id), range)).toBe(true)
      expect(inRange(layout('BTC', 200, id), range)).toBe(true)
      expect(inRange(layout('BTC', 201, id), range)).toBe(false)
    }
  })

  it('a single-millisecond range holds that millisecond only', () => {
    const range = symbolRange('X', 2 ** 32, 2 ** 32)
    expect(inRange(layout('X', 2 ** 32 - 1, '\u{10FFFF}'), range)).toBe(false)
    expect(inRange(layout('X', 2 ** 32, ''), range)).toBe(true)
    expect(inRange(layout('X', 2 ** 32, '\u{10FFFF}'), range)).toBe(true)
    expect(inRange(layout('X', 2 ** 32 + 1, ''), range)).toBe(false)
  })

  it('handles the edges 0 and 2^53-1 as single-point ranges', () => {
    expect(inRange(layout('X', 0, 'a'), symbolRange('X', 0, 0))).toBe(true)
    expect(inRange(layout('X', 1, 'a'), symbolRange('X', 0, 0))).toBe(false)
    expect(inRange(layout('X', MAX, 'a'), symbolRange('X', MAX, MAX))).toBe(true)
    expect(inRange(layout('X', MAX - 1, 'a'), symbolRange('X', MAX, MAX))).toBe(false)
  })

  it('keeps BTC and BTC-USD apart in both directions', () => {
    for (const ts of [0, 1, 2 ** 32, MAX]) {
      for (const id of ['', 'a', '\u{10FFFF}'.repeat(128)]) {
        expect(inRange(layout('BTC', ts, id), symbolRange('BTC-USD'))).toBe(false)
        expect(inRange(layout('BTC-USD', ts, id), symbolRange('BTC'))).toBe(false)
        expect(inRange(layout('BTC', ts, id), symbolRange('BTC'))).toBe(true)
        expect(inRange(layout('BTC-USD', ts, id), symbolRange('BTC-USD'))).toBe(true)
      }
    }
  })
})

describe('describeKey', () => {
  it('names symbol, timestamp and id of a record key', () => {
    const text = describeKey(layout('BTC', 1_700_000_000_000, 'abc-123'))
    expect(text).toContain('BTC')
    expect(text).toContain('1700000000000')
    expect(text).toContain('abc-123')
  })

  it('falls back to hex for bytes that are not a key', () => {
    expect(describeKey(Buffer.from([0xde, 0xad]))).toContain('dead')
  })
})
