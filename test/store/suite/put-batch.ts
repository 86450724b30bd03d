/**
 * putBatch() on the suite's backend: each batch's count and the position of
 * its own commit, for concurrent batches too (a watcher sees each batch under
 * that position), nothing committed for an empty or a bad batch.
 */
import { describe, expect, it } from 'vitest'
import type { WatchItem } from '../../../src/index.js'
import { T0 } from '../../../src/testing/records.js'
import { rejectsCode } from '../../support/assertions.js'
import { rec } from '../../support/records.js'
import { type FeatureTests, useStores } from './context.js'

export const putBatchTests: FeatureTests = (suite) => {
  describe('putBatch', () => {
    const { openStore, newDb, reopenDb } = useStores(suite)

    it('resolves with the count and the position of its own commit, for concurrent batches too', async () => {
      const store = await openStore()
      await store.putMany([rec({ timestamp: T0 - 1 })])
      const before = store.position
      const batches = Array.from({ length: 8 }, (_, b) => Array.from({ length: b + 1 }, (_, i) => rec({ symbol: `S${b}`, timestamp: T0 + i })))
      const watcher = store.watch({ after: before })
      const commits = await Promise.all(batches.map((batch) => store.putBatch(batch)))
      expect(commits.map((commit) => commit.stored)).toEqual(batches.map((batch) => batch.length))
      // Called in order, committed in order: positions are consecutive after the one before.
      expect(commits.map((commit) => commit.position)).toEqual(batches.map((_, b) => before + b + 1))
      const seen = new Map<number, string[]>()
      for await (const item of watcher as AsyncIterable<WatchItem>) {
        if (item.type !== 'records') continue
        seen.set(item.position, item.records.map((record) => record.symbol))
        if (seen.size === batches.length) break
      }
      for (const [b, commit] of commits.entries()) expect(seen.get(commit.position)).toEqual(batches[b]!.map(() => `S${b}`))
    })

    it('commits nothing for an empty batch and names the newest commit', async () => {
      const store = await openStore()
      const { position } = await store.putBatch([rec()])
      expect(await store.putBatch([])).toEqual({ stored: 0, position })
      expect(store.position).toBe(position)
    })

    it('refuses a bad batch as putMany does, with nothing written and no position used', async () => {
      const store = await openStore()
      const before = store.position
      await rejectsCode(store.putBatch([rec(), rec({ value: 'x' })]), 'PRICE_INVALID_RECORD')
      expect(store.position).toBe(before)
      expect(await store.latest('BTC')).toEqual([])
    })

    it('positions go on after a reopen', async () => {
      const db = newDb()
      const store = await openStore({}, db)
      expect((await store.putBatch([rec({ timestamp: T0 })])).position).toBe(1)
      expect((await store.putBatch([rec({ timestamp: T0 + 1 }), rec({ symbol: 'ETH' })])).position).toBe(2)
      await store.close()
      const again = await openStore({}, reopenDb(db))
      expect(again.position).toBe(2)
      expect(await again.putBatch([rec({ timestamp: T0 + 2 })])).toEqual({ stored: 1, position: 3 })
    })
  })
}
