import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compareIds } from '../../src/rules/compare-ids.js'

/** The reference: UTF-8 byte order, by encoding. */
const bytes = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')))

describe('compareIds', () => {
  it.each<[string, string, number]>([
    ['a', 'b', -1],
    ['b', 'a', 1],
    ['a', 'a', 0],
    ['', 'a', -1],
    ['a', 'ab', -1],
    ['B', 'a', -1],
    // U+E000..U+FFFF sort before astral characters in UTF-8, after them in UTF-16.
    ['\uE000', '\u{10000}', -1],
    ['\uFFFF', '\u{10000}', -1],
    ['\uFFFD', '\u{1F600}', -1],
    ['\u{1F600}', '\uFF01', 1],
    ['\uD7FF', '\u{10000}', -1],
    ['\u{10FFFF}', '\uFFFF', 1],
    ['\u{1F600}', '\u{1F601}', -1],
    ['\u{1F600}a', '\u{1F600}', 1],
    ['x\u{10000}', 'x\uE000', 1],
  ])('compareIds(%j, %j) has sign %d', (a, b, sign) => {
    expect(Math.sign(compareIds(a, b))).toBe(sign)
    expect(bytes(a, b)).toBe(sign) // the table itself is right
  })

  it('has the sign of comparing UTF-8 bytes (property)', () => {
    const unit = fc.constantFrom('a', 'z', '\u00e9', '\u07ff', '\u0800', '\uD7FF', '\uE000', '\uFFFD', '\uFFFF', '\u{10000}', '\u{1F600}', '\u{10FFFF}')
    const id = fc.oneof(fc.string({ unit, maxLength: 5 }), fc.string({ unit: 'binary', maxLength: 20 })).filter((s) => s.isWellFormed())
    fc.assert(
      fc.property(id, id, (a, b) => {
        expect(Math.sign(compareIds(a, b))).toBe(bytes(a, b))
      }),
      { numRuns: 2000 },
    )
  })

  it('sorting with it gives UTF-8 byte order', () => {
    const ids = ['\u{10000}', '\uE000', 'b', 'a', '\uFFFF', '\u{1F600}', 'ab', '\u00e9']
    const expected = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))
    expect([...ids].sort(compareIds)).toEqual(expected)
    expect(expected).toEqual(['a', 'ab', 'b', '\u00e9', '\uE000', '\uFFFF', '\u{10000}', '\u{1F600}'])
  })
})
