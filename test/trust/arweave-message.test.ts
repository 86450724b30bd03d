/**
 * arweaveSignedText against RedStone's own verifier (redstone-api's
 * getPriceSignedData, lodash.pick + deep-sort-object): the same text for
 * sorted and unsorted versions, whatever keys `source` has, in whatever
 * order; key lists met again (their sorted order is remembered), lists with
 * a NUL in a key, and more lists than are remembered at once; and for any
 * values in the signed fields, those the text is written from directly
 * (strings, numbers, plain objects) and those left to the general path
 * (arrays, integer-like, `__proto__`, `constructor` or `toJSON` keys, dates,
 * objects without a prototype, undefined members).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { arweaveSignedText } from '../../src/trust/arweave-message.js'
import { redstoneSignedText } from './support/redstone-signers.js'

const base = { id: 'x', symbol: 'ETH', timestamp: 1_685_099_220_000, value: 1800.5, permawebTx: 'tx', provider: 'p' }
const keyText = fc.oneof(fc.constantFrom('binance', 'Binance', 'kraken', 'ä', 'z', '10', '2', '_', 'a\u0000', 'a', '\u0000', 'b\u0000c'), fc.string({ maxLength: 4 }))

/** The text `build` returns, or that it threw. */
function outcome(build: () => string): string {
  try {
    return `text ${build()}`
  } catch (error) {
    return `threw ${(error as Error).name}`
  }
}

describe('arweaveSignedText', () => {
  it("is RedStone's text for any source keys, met once or again, in any order", () => {
    fc.assert(
      fc.property(fc.uniqueArray(keyText, { maxLength: 6 }), fc.constantFrom('0.4', '3', '1'), fc.boolean(), (keys, version, reversed) => {
        const source = Object.fromEntries((reversed ? [...keys].reverse() : keys).map((key, i) => [key, { n: i, [key]: [i, { [key]: i }] }]))
        const record = { ...base, version, source }
        // Twice: the second time from the remembered order of the same lists.
        expect(arweaveSignedText(record)).toBe(redstoneSignedText(record))
        expect(arweaveSignedText({ ...record })).toBe(redstoneSignedText(record))
      }),
      { numRuns: 300 },
    )
  })

  it("is RedStone's text for any values in the signed fields, written directly or by the general path", () => {
    const key = fc.oneof(keyText, fc.constantFrom('__proto__', 'constructor', 'toJSON', '0', '4294967295', '01', 'value'))
    const leaf = fc.oneof(
      fc.string(), fc.double(), fc.constantFrom(-0, NaN, Infinity, null, undefined, true), fc.integer(),
      fc.constant(new Date(0)), fc.constant(Object.assign(Object.create(null) as object, { b: 1, a: 2 })),
    )
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(key, tie('value'), { maxKeys: 4 })),
    }))
    const fields = fc.record({ id: value, source: value, symbol: value, timestamp: value, value, permawebTx: value, provider: value }, { requiredKeys: [] })
    fc.assert(
      fc.property(fields, fc.constantFrom('0.4', '3', '1', undefined), fc.boolean(), (picked, version, parsed) => {
        // Through JSON.parse as well, as a record from the wire: an own `__proto__` key is then a plain member.
        const record: Record<string, unknown> = parsed ? (JSON.parse(JSON.stringify({ ...picked, version })) as Record<string, unknown>) : { ...picked, version }
        // Some values make RedStone's own text throw (a `__proto__` member set to a Date): then this throws too.
        expect(outcome(() => arweaveSignedText(record))).toBe(outcome(() => redstoneSignedText(record)))
      }),
      { numRuns: 1000 },
    )
  })

  it('leaves to the general path every object JSON or deep-sort-object treats apart', () => {
    class Quote {
      constructor(readonly b = 1, readonly a = 2) {}
    }
    const sources: unknown[] = [
      JSON.parse('{"__proto__":5,"a":1}'), JSON.parse('{"__proto__":{"z":1},"b":1,"a":2}'), { toJSON: () => ({ b: 1, a: 2 }), c: 3 },
      { constructor: 'x', b: 1, a: 2 }, { 10: 1, 2: 2, b: 3, a: 4 }, { [Symbol.toStringTag]: 'Odd', b: 1, a: 2 },
      Object.assign(Object.create(null) as object, { b: 1, a: 2 }), new Quote(), [{ b: 1, a: 2 }], { b: { d: [1], c: 2 }, a: 1 },
    ]
    for (const source of sources) {
      const record = { ...base, version: '0.4', source }
      expect(outcome(() => arweaveSignedText(record))).toBe(outcome(() => redstoneSignedText(record)))
    }
  })

  it('tells apart key lists that read alike joined with NUL', () => {
    for (const keys of [['a\u0000', 'b'], ['a', '\u0000b'], ['a\u0000', 'b']]) {
      const record = { ...base, version: '0.4', source: Object.fromEntries(keys.map((key, i) => [key, i])) }
      expect(arweaveSignedText(record)).toBe(redstoneSignedText(record))
    }
  })

  it('stays right past the number of key lists it remembers', () => {
    for (let i = 0; i < 600; i++) {
      const record = { ...base, version: '0.4', source: { [`s${i}`]: 1, [`r${i % 7}`]: 2, A: 3 } }
      expect(arweaveSignedText(record)).toBe(redstoneSignedText(record))
    }
  })
})
