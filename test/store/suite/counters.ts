/**
 * recordsWritten and lastCommitAt on the suite's backend: the cheap counters
 * /metrics reads at scrape time. Expectations come from the batches written here.
 */
import { describe, expect, it } from 'vitest'
import { T0, makeRecord } from '../../../src/testing/records.js'
import { type FeatureTests, useStores } from './context.js'

export const countersTests: FeatureTests = (suite) => {
  describe('recordsWritten and lastCommitAt', () => {
    const { openStore } = useStores(suite)

    it('count every committed record since open, not failed batches; start again at each open', async () => {
      const store = await openStore()
      expect(store.recordsWritten).toBe(0)
      expect(store.lastCommitAt).toBeUndefined()
      const before = Date.now()
      await store.putMany([0, 1, 2].map((i) => makeRecord({ timestamp: T0 + i * 1000 })))
      await store.put(makeRecord({ symbol: 'ETH', timestamp: T0 }))
      expect(store.recordsWritten).toBe(4)
      const committedAt = store.lastCommitAt as number
      expect(committedAt).toBeGreaterThanOrEqual(before)
      expect(committedAt).toBeLessThanOrEqual(Date.now())

      // A batch refused by validation commits nothing, so counts nothing.
      await expect(store.putMany([makeRecord({ timestamp: T0 + 5000 }), { ...makeRecord(), value: 'x' } as never])).rejects.toThrow()
      expect(store.recordsWritten).toBe(4)
      expect(store.lastCommitAt).toBe(committedAt)

      await store.close()
      await store.open()
      expect(store.recordsWritten).toBe(0)
      expect(store.lastCommitAt).toBeUndefined()
      await store.putMany([makeRecord({ symbol: 'AR', timestamp: T0 })])
      expect(store.recordsWritten).toBe(1)
    })
  })
}
