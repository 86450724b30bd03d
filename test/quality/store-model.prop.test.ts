/**
 * `store.quality()` against the reference model on generated data written
 * to a real store in several batches (so hours are sealed into chunks,
 * late records join them as delta parts and open rows are merged over
 * them), then again after a reopen (every hour sealed). Fixed seed.
 */
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER, referenceQuality } from '../../src/testing/index.js'
import { DEFAULT_LIMITS } from '../../src/types.js'
import { qualityCaseArb } from './arbitraries.js'

const LIMITS = { ...DEFAULT_LIMITS, maxRangePoints: 1_000_000 }

describe('store.quality', () => {
  it('reports as the reference model does, before and after a reopen', async () => {
    await fc.assert(
      fc.asyncProperty(qualityCaseArb, fc.integer({ min: 1, max: 4 }), async ({ inputs, records, options }, batches) => {
        const db = new MemoryLevel()
        let store = await PriceStore.open(db as never, { provider: TEST_PROVIDER, limits: LIMITS })
        try {
          const size = Math.ceil(inputs.length / batches) || 1
          for (let i = 0; i < inputs.length; i += size) await store.putMany(inputs.slice(i, i + size) as never)
          const want = referenceQuality(records, options)
          expect(await store.quality(options)).toEqual(want)
          await store.close()
          store = await PriceStore.open(db as never, { provider: TEST_PROVIDER, limits: LIMITS })
          expect(await store.quality(options)).toEqual(want)
        } finally {
          await store.close()
        }
      }),
      { seed: 2222, numRuns: 60 },
    )
  })
})
