import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeDirectory, encodeDirectory } from '../../src/keys/bucket-key.js'

const entryArb = fc.record({ timestamp: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), id: fc.string({ unit: 'grapheme', maxLength: 40 }) })

describe('minute directories', () => {
  it('round-trip any entries, in order, and the overflow mark', () => {
    fc.assert(fc.property(fc.array(entryArb, { maxLength: 50 }), (entries) => {
      expect(decodeDirectory(encodeDirectory(entries))).toEqual(entries)
    }))
    expect(decodeDirectory(encodeDirectory('overflow'))).toBe('overflow')
    expect(decodeDirectory(encodeDirectory([]))).toEqual([])
  })

  it('refuse bytes that are not a directory: short, truncated, trailing bytes, a long overflow mark', () => {
    const good = encodeDirectory([{ timestamp: 1_700_000_000_000, id: 'abc' }, { timestamp: 1_700_000_000_001, id: 'é' }])
    expect(decodeDirectory(new Uint8Array(0))).toBeUndefined()
    expect(decodeDirectory(new Uint8Array([0]))).toBeUndefined()
    for (let cut = 1; cut < good.length; cut++) expect(decodeDirectory(good.subarray(0, cut)), `cut at ${cut}`).toBeUndefined()
    expect(decodeDirectory(Buffer.concat([good, Buffer.from([0])]))).toBeUndefined()
    expect(decodeDirectory(Buffer.from([0xff, 0xff, 0]))).toBeUndefined()
  })
})
