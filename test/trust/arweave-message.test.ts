/**
 * arweaveSignedText against RedStone's own verifier (redstone-api's
 * getPriceSignedData, lodash.pick + deep-sort-object): the same text for
 * sorted and unsorted versions, whatever keys `source` has, in whatever
 * order; key lists met again (their sorted order is remembered), lists with
 * a NUL in a key, and more lists than are remembered at once.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { arweaveSignedText } from '../../src/trust/arweave-message.js'
import { redstoneSignedText } from './support/redstone-signers.js'

const base = { id: 'x', symbol: 'ETH', timestamp: 1_685_099_220_000, value: 1800.5, permawebTx: 'tx', provider: 'p' }
const keyText = fc.oneof(fc.constantFrom('binance', 'Binance', 'kraken', 'ä', 'z', '10', '2', '_', 'a\u0000', 'a', '\u0000', 'b\u0000c'), fc.string({ maxLength: 4 }))

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
