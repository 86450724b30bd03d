/**
 * A range over the cap on a grid finer than ten minutes is refused when it
 * is planned and weighed (`store.cost`), before it waits or reads a record:
 * a sealed hour's key column (format 5) says exactly which buckets hold a
 * record, where its ten-minute heads only bound them from below (issue 20,
 * the gap issue 23 left: such a range was refused only after its read).
 * The count the refusal names is computed here from the records written.
 */
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import type { QueryParams } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../src/testing/reference-model.js'

const HOUR = 3_600_000
const SECOND = 1_000
const CAP = 500
const limits = { maxLimit: 3000, maxSymbols: 100, maxRangePoints: CAP }

/** One BTC record every 7 s for three hours, and a later ETH record that makes those hours due. */
const records = [
  ...Array.from({ length: (3 * HOUR) / (7 * SECOND) }, (_, i) => makeRecord({ symbol: 'BTC', timestamp: T0 + i * 7 * SECOND, value: 100 + i })),
  makeRecord({ symbol: 'ETH', timestamp: T0 + 4 * HOUR }),
]

/** Buckets of `interval` in `from..to` holding a BTC record, counted from the records. */
function bucketsHeld(from: number, to: number, interval: number): number {
  return new Set(records.filter((r) => r.symbol === 'BTC' && r.timestamp >= from && r.timestamp <= to).map((r) => Math.floor(r.timestamp / interval))).size
}

async function sealedStore(): Promise<PriceStore> {
  const db = new MemoryLevel<string, string>()
  const first = await PriceStore.open(db, { provider: TEST_PROVIDER, limits })
  await first.putMany(records)
  // Closing seals every open hour: the BTC hours are paged chunks.
  await first.close()
  return PriceStore.open(db, { provider: TEST_PROVIDER, limits })
}

describe('a range over the cap on a fine grid', () => {
  it('is refused by cost(), naming at least the buckets held (counted from the records), before any read; one under the cap is weighed and answered', async () => {
    const store = await sealedStore()
    try {
      const from = T0
      const to = T0 + 3 * HOUR - 1
      const interval = 10 * SECOND
      const held = bucketsHeld(from, to, interval)
      expect(held).toBeGreaterThan(CAP)
      const params: QueryParams = { symbol: 'BTC', fromTimestamp: String(from), toTimestamp: String(to), interval: String(interval) }
      const error = (() => {
        try {
          store.cost(store.plan(params))
          return undefined
        } catch (err) {
          return err
        }
      })()
      expect(isPriceStoreError(error, 'PRICE_RANGE_TOO_LARGE'), String(error)).toBe(true)
      // The ten-minute heads alone prove only 18 buckets (6 an hour): the exact count comes from the key columns.
      expect((error as { details: { count: number } }).details.count).toBe(held)
      expect((error as Error).message).toContain(`at least ${held}`)
      // The same answer as the query itself gives, from the model.
      expect(referenceQuery(storedRecords(records, TEST_PROVIDER), params, { provider: TEST_PROVIDER, limits })).toMatchObject({ error: 'PRICE_RANGE_TOO_LARGE' })

      // An hour's worth is under the cap: weighed without refusal, and answered as the model answers it.
      const small: QueryParams = { ...params, toTimestamp: String(T0 + HOUR - 1) }
      expect(bucketsHeld(from, T0 + HOUR - 1, interval)).toBeLessThanOrEqual(CAP)
      expect(store.cost(store.plan(small))).toBeGreaterThan(0)
      expect({ answer: await store.query(small) }).toEqual(referenceQuery(storedRecords(records, TEST_PROVIDER), small, { provider: TEST_PROVIDER, limits }))
    } finally {
      await store.close()
    }
  })
})
