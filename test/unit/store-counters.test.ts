/**
 * store.recordsWritten and store.lastCommitAt: the cheap counters /metrics
 * reads at scrape time. Expectations come from the batches written here.
 */
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'

describe('store.recordsWritten and store.lastCommitAt', () => {
  it('count every committed record since open, not failed batches; start again at each open', async () => {
    const db = new MemoryLevel()
    const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
    try {
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
    } finally {
      await store.close()
    }
  })
})
