import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { answerToJson, sizedAnswerJson } from '../../src/engine/answer-json.js'
import type { PriceAnswer } from '../../src/types.js'

// A JSON round trip turns every -0 into 0.
const plainJson = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown)
const recordArb = fc.record({
  // -0 is left out here: JSON.stringify writes it as 0, answerToJson keeps it (tested below).
  id: fc.string(), symbol: fc.string(), value: fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => v + 0),
  source: fc.dictionary(fc.string(), plainJson), timestamp: fc.nat(), extra: plainJson,
})
const freezeSome = (records: object[], mask: boolean[]) => records.map((r, i) => (mask[i] ? Object.freeze(r) : r))

describe('answerToJson', () => {
  test('equals JSON.stringify (when there is no -0) for arrays and keyed objects, frozen or not, first call or cached', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 6 }), fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        fc.array(fc.oneof(fc.string(), fc.constantFrom('__proto__', '42', 'constructor')), { minLength: 6, maxLength: 6 }), (records, frozen, symbols) => {
          const list = freezeSome(records, frozen) as unknown as PriceAnswer
          const keyed: Record<string, unknown> = {}
          ;(list as object[]).forEach((record, i) => Object.defineProperty(keyed, symbols[i] as string, { value: record, enumerable: true, configurable: true, writable: true }))
          for (let pass = 0; pass < 2; pass++) {
            expect(answerToJson(list)).toBe(JSON.stringify(list))
            expect(answerToJson(keyed as PriceAnswer)).toBe(JSON.stringify(keyed))
          }
        }),
    )
  })

  test('never serves stale JSON for an object that can still change', () => {
    const record = { id: 'a', value: 1 }
    expect(answerToJson([record] as unknown as PriceAnswer)).toBe('[{"id":"a","value":1}]')
    record.value = 2
    expect(answerToJson([record] as unknown as PriceAnswer)).toBe('[{"id":"a","value":2}]')
  })
})

describe('answerToJson with -0', () => {
  test('keeps -0 in a value and in nested fields, cached or not', () => {
    const record = Object.freeze({ id: 'a', value: -0, source: Object.freeze({ x: -0 }) })
    for (let pass = 0; pass < 2; pass++) {
      expect(answerToJson([record] as unknown as PriceAnswer)).toBe('[{"id":"a","value":-0,"source":{"x":-0}}]')
    }
  })
})

describe('sizedAnswerJson', () => {
  test('the same text as answerToJson, with its UTF-8 length, for arrays and keyed objects, frozen or not, first call or cached', () => {
    // Any strings: non-ASCII and lone surrogates (escaped by JSON.stringify) change the byte count.
    const unicodeRecord = fc.record({ id: fc.string({ unit: 'binary' }), symbol: fc.string({ unit: 'grapheme' }), value: fc.double({ noNaN: true, noDefaultInfinity: true }) })
    fc.assert(
      fc.property(fc.array(unicodeRecord, { maxLength: 6 }), fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        fc.array(fc.string({ unit: 'binary' }), { minLength: 6, maxLength: 6 }), (records, frozen, symbols) => {
          const list = freezeSome(records, frozen) as unknown as PriceAnswer
          const keyed: Record<string, unknown> = {}
          ;(list as object[]).forEach((record, i) => Object.defineProperty(keyed, symbols[i] as string, { value: record, enumerable: true, configurable: true, writable: true }))
          for (let pass = 0; pass < 2; pass++) {
            for (const answer of [list, keyed as PriceAnswer]) {
              const sized = sizedAnswerJson(answer)
              expect(sized.json).toBe(answerToJson(answer))
              expect(sized.bytes).toBe(Buffer.byteLength(sized.json, 'utf8'))
            }
          }
        }),
    )
  })

  test('an empty answer', () => {
    expect(sizedAnswerJson([])).toEqual({ json: '[]', bytes: 2 })
    expect(sizedAnswerJson({})).toEqual({ json: '{}', bytes: 2 })
  })
})
