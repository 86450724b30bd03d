import { describe, expect, it } from 'vitest'
import { MalformedBytes } from '../../src/keys/bytes.js'
import {
  HEAD_MS, HEADS_PER_PERIOD, PERIOD_MS, chunkKey, describeChunk, describeHeads, describeLog, headsKey, headsRange, logKey, periodOf,
  readHeadsPeriod, readLogKey, symbolKey,
} from '../../src/keys/key-layout.js'

const MAX = Number.MAX_SAFE_INTEGER
/** An hour boundary (UTC). */
const H = 1_699_999_200_000
const P = H / PERIOD_MS

describe('periods', () => {
  it('are UTC hours, ten-minute heads six to a period', () => {
    expect(PERIOD_MS).toBe(3_600_000)
    expect(HEAD_MS).toBe(600_000)
    expect(HEADS_PER_PERIOD).toBe(6)
  })

  it('periodOf puts both edges of an hour in the right period', () => {
    expect(periodOf(0)).toBe(0)
    expect(periodOf(PERIOD_MS - 1)).toBe(0)
    expect(periodOf(PERIOD_MS)).toBe(1)
    expect(periodOf(H - 1)).toBe(P - 1)
    expect(periodOf(H)).toBe(P)
    expect(periodOf(H + PERIOD_MS - 1)).toBe(P)
    expect(periodOf(H + PERIOD_MS)).toBe(P + 1)
  })

  it('the period of the largest safe timestamp fits in 32 bits, so every key can hold it', () => {
    expect(periodOf(MAX)).toBe(2_501_999_792)
    expect(periodOf(MAX)).toBeLessThan(2 ** 32)
    expect(() => chunkKey(periodOf(MAX), 'BTC', 0xffff)).not.toThrow()
    expect(readHeadsPeriod(headsKey('BTC', periodOf(MAX)))).toBe(periodOf(MAX))
    expect(readLogKey(logKey(periodOf(MAX), MAX))).toEqual({ period: periodOf(MAX), sequence: MAX })
  })
})

describe('key bytes, as documented in key-layout.ts', () => {
  it('log key: period u32 BE · sequence u64 BE', () => {
    const key = logKey(0x01020304, 2 ** 32 + 5)
    expect(key.toString('hex')).toBe('01020304' + '0000000100000005')
    expect(readLogKey(key)).toEqual({ period: 0x01020304, sequence: 2 ** 32 + 5 })
  })

  it('a log key of any other length is MalformedBytes', () => {
    for (const length of [0, 4, 11, 13]) expect(() => readLogKey(Buffer.alloc(length)), String(length)).toThrow(MalformedBytes)
  })

  it('readLogKey reads a key inside a larger buffer', () => {
    const backing = Buffer.concat([Buffer.from([0xaa, 0xbb]), logKey(P, 77), Buffer.from([0xcc])])
    expect(readLogKey(backing.subarray(2, 14))).toEqual({ period: P, sequence: 77 })
  })

  it('chunk key: period u32 BE · symbol UTF-8 · 0x00 · part u16 BE', () => {
    const key = chunkKey(0x0a0b0c0d, 'Ω€', 0x0102)
    expect(key.toString('hex')).toBe('0a0b0c0d' + Buffer.from('Ω€', 'utf8').toString('hex') + '00' + '0102')
    expect(chunkKey(P, '\u{1F600}', 0).length).toBe(4 + 4 + 1 + 2)
  })

  it('heads key: symbol UTF-8 · 0x00 · period u32 BE', () => {
    const key = headsKey('stETH', 0x0a0b0c0d)
    expect(key.toString('hex')).toBe(Buffer.from('stETH', 'utf8').toString('hex') + '00' + '0a0b0c0d')
    expect(readHeadsPeriod(key)).toBe(0x0a0b0c0d)
    const backing = Buffer.concat([Buffer.from([1, 2, 3]), key, Buffer.from([9])])
    expect(readHeadsPeriod(backing.subarray(3, 3 + key.length))).toBe(0x0a0b0c0d)
  })

  it('headsRange spans exactly the heads keys of one symbol from the first to the last period, both inclusive', () => {
    const range = headsRange('BTC', P, P + 5)
    expect(range.gte).toEqual(headsKey('BTC', P))
    expect(range.lte).toEqual(headsKey('BTC', P + 5))
  })

  it('symbol key: the symbol UTF-8 bytes alone', () => {
    expect(symbolKey('a\u{1F600}')).toEqual(Buffer.from('a\u{1F600}', 'utf8'))
  })

  it('keys are fresh buffers of their exact length', () => {
    const a = chunkKey(P, 'BTC', 1)
    const b = chunkKey(P, 'BTC', 1)
    expect(a).toEqual(b)
    expect(a.buffer === b.buffer && a.byteOffset === b.byteOffset).toBe(false)
    expect(a.length).toBe(4 + 3 + 1 + 2)
    expect(headsKey('BTC', P).length).toBe(3 + 1 + 4)
    expect(logKey(P, 1).length).toBe(12)
  })
})

describe('names of stored entries in error messages', () => {
  it('name the symbol, the hour as a timestamp, and the part or sequence', () => {
    expect(describeChunk(P, 'BTC', 2)).toBe(`chunk BTC@${H}+3600000ms part 2`)
    expect(describeHeads('BTC-USD', P)).toBe(`heads BTC-USD@${H}+3600000ms`)
    expect(describeLog(P, 42)).toBe(`log entry 42 of period ${H}+3600000ms`)
  })
})
