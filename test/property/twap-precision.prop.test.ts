/**
 * TWAP against the exact model where floating point is at its worst:
 * subnormal values (whose products round to a multiple of the smallest
 * double, an error absolute rather than relative), values at and near the
 * largest double (whose sum may round past it), and both mixed with
 * ordinary prices.
 */
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { PriceStore, type PriceRecord } from '../../src/index.js'
import { TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { referenceTwap } from '../../src/testing/reference-forms/twap.js'

const T0 = 1_700_000_000_000

const valueArb = fc.oneof(
  fc.integer({ min: -40, max: 40 }).map((k) => k * Number.MIN_VALUE),
  fc.double({ min: -1e-300, max: 1e-300, noNaN: true }),
  fc.double({ min: 1e307, max: Number.MAX_VALUE, noNaN: true }).chain((v) => fc.constantFrom(v, -v)),
  fc.constantFrom(Number.MAX_VALUE, -Number.MAX_VALUE),
  fc.double({ min: 0.01, max: 100_000, noNaN: true }),
)

const caseArb = fc.record({
  points: fc.uniqueArray(fc.record({ offset: fc.integer({ min: 0, max: 10_000 }), value: valueArb }), { minLength: 1, maxLength: 30, selector: (point) => point.offset }),
  // Every value the largest double (or its negative): the span's shares may add up to a hair over 1, so their sum may round past it.
  every: fc.oneof(fc.constant(undefined), fc.constantFrom(Number.MAX_VALUE, -Number.MAX_VALUE)),
  from: fc.integer({ min: -1_000, max: 10_000 }),
  length: fc.integer({ min: 0, max: 12_000 }),
})

describe('TWAP precision', () => {
  it('equals the exact average within a few units in the last place, subnormal and huge values included', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ points, every, from, length }) => {
        const records = points.map(({ offset, value }) => makeRecord({ timestamp: T0 + offset, value: every ?? value }))
        const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
        try {
          await store.putMany(records)
          const stored = (await store.latest('BTC', { limit: 50 })).reverse() as PriceRecord[]
          const expected = referenceTwap(stored, T0 + from, T0 + from + length)
          const answer = await store.twap(['BTC'], { from: T0 + from, to: T0 + from + length })
          expect(answer).toEqual(expected === undefined ? {} : { BTC: expected })
        } finally {
          await store.close()
        }
      }),
      { numRuns: 300 * (Number(process.env['FC_SCALE']) || 1) },
    )
  })
})
