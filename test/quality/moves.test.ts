/**
 * MovesBuilder.addAll skips, without a call, the keys TopIndexes.offer would
 * refuse: checked against offering every move (the loop it replaced) on
 * random values with ties, zeros, repeats and non-finite values. Fixed seed.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MovesBuilder, TopIndexes } from '../../src/engine/quality/moves.js'
import { MOVES_LISTED } from '../../src/engine/quality/quality-types.js'
import type { QualitySeries } from '../../src/engine/quality/series.js'

/** Every move offered, as before addAll. */
function offeredOneByOne(values: readonly number[]): { absolute: readonly number[]; relative: readonly number[] } {
  const absolute = new TopIndexes(MOVES_LISTED)
  const relative = new TopIndexes(MOVES_LISTED)
  for (let index = 1; index < values.length; index++) {
    const before = values[index - 1] as number
    const change = Math.abs((values[index] as number) - before)
    if (!(change > 0)) continue
    absolute.offer(index, change)
    if (before !== 0) relative.offer(index, change / Math.abs(before))
  }
  return { absolute: absolute.indexes, relative: relative.indexes }
}

const VALUE = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0, -0, 1e308, -1e308, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN),
  fc.double(),
)

describe('MovesBuilder.addAll', () => {
  it('keeps the moves offering every one keeps, ties to the earlier', () => {
    fc.assert(
      fc.property(fc.array(VALUE, { maxLength: 300 }), (values) => {
        const series: QualitySeries = { length: values.length, timestamps: values.map((_, i) => i), values, idAt: (index) => `r${index}` }
        const builder = new MovesBuilder(series, values)
        builder.addAll(values.length)
        const summary = builder.summary()
        const expected = offeredOneByOne(values)
        expect(summary.largest.map((move) => move.to.id)).toEqual(expected.absolute.map((index) => `r${index}`))
        expect(summary.largestRelative.map((move) => move.to.id)).toEqual(expected.relative.map((index) => `r${index}`))
      }),
      { seed: 2222, numRuns: 1000 },
    )
  })

  it('has a floor of -Infinity until full, then the smallest key kept', () => {
    const top = new TopIndexes(2)
    expect(top.floor).toBe(Number.NEGATIVE_INFINITY)
    top.offer(1, 5)
    expect(top.floor).toBe(Number.NEGATIVE_INFINITY)
    top.offer(2, 3)
    expect(top.floor).toBe(3)
    top.offer(3, 4)
    expect(top.floor).toBe(4)
    expect(top.indexes).toEqual([1, 3])
  })
})
