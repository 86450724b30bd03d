/**
 * watch() on the suite's backend: commits numbered from 1 and replayed in
 * commit order, live commits after the call, the symbols filter and its
 * progress items, positions across a reopen, a sealed record rewritten, pruned
 * records counted, a trimmed journal (reset), and the end on close. Expected
 * records are built from the inputs, not read from the store.
 */
import { describe, expect, it } from 'vitest'
import type { WatchItem, WatchIterator } from '../../src/index.js'
import { T0 } from '../../src/testing/records.js'
import { throwsCode } from '../support/assertions.js'
import { expected, rec, type Input } from '../support/records.js'
import { type FeatureTests, useStores } from './context.js'
import { HOUR } from './model.js'

/** An item as plain data: records as their expected JSON shape. */
const plain = (item: WatchItem): unknown => JSON.parse(JSON.stringify(item))
const recordsItem = (position: number, inputs: readonly Input[]): unknown => ({ type: 'records', position, records: inputs.map((input) => expected(input)) })

/** Pulls items until one reaches `position` (or the watch ends). */
async function collectUntil(items: WatchIterator, position: number): Promise<unknown[]> {
  const out: unknown[] = []
  if (position <= 0) return out
  for await (const item of items) {
    out.push(plain(item))
    if (item.position >= position) break
  }
  return out
}

type In = ReturnType<typeof rec>
const btc = (offset: number, extra: Input = {}): In => rec({ symbol: 'BTC', timestamp: T0 + offset, ...extra })
const eth = (offset: number, extra: Input = {}): In => rec({ symbol: 'ETH', timestamp: T0 + offset, ...extra })

export const watchTests: FeatureTests = (suite) => {
  describe('watch', () => {
    const { openStore, newDb, reopenDb } = useStores(suite)

    it('numbers commits from 1 and replays them in commit order, records in batch order', async () => {
      const store = await openStore()
      expect(store.position).toBe(0)
      const batches = [[eth(5), btc(1)], [btc(0)], [eth(2 * HOUR), btc(HOUR), eth(0)]]
      for (const batch of batches) await store.putMany(batch)
      expect(store.position).toBe(3)
      expect(await collectUntil(store.watch({ after: 0 }), 3)).toEqual(batches.map((batch, i) => recordsItem(i + 1, batch)))
      expect(await collectUntil(store.watch({ after: 2 }), 3)).toEqual([recordsItem(3, batches[2] as In[])])
    })

    it('gives live commits after the call when no position is given', async () => {
      const store = await openStore()
      await store.putMany([btc(0)])
      const watch = store.watch()
      // Written after the call and before the first pull: still delivered.
      await store.putMany([btc(1)])
      const pulled = collectUntil(watch, 3)
      await store.putMany([eth(2), btc(2)])
      expect(await pulled).toEqual([recordsItem(2, [btc(1)]), recordsItem(3, [eth(2), btc(2)])])
    })

    it('filters by symbols, reporting the commits it skipped at the end of the replay', async () => {
      const store = await openStore()
      await store.putMany([btc(0), eth(0)])
      await store.putMany([eth(1)])
      await store.putMany([rec({ symbol: 'AR', timestamp: T0 })])
      expect(await collectUntil(store.watch({ symbols: ['BTC'], after: 0 }), 3)).toEqual([
        recordsItem(1, [btc(0)]),
        { type: 'progress', position: 3 },
      ])
      expect(await collectUntil(store.watch({ symbols: ['AR', 'ETH'], after: 0 }), 3)).toEqual([
        recordsItem(1, [eth(0)]), recordsItem(2, [eth(1)]), recordsItem(3, [rec({ symbol: 'AR', timestamp: T0 })]),
      ])
    })

    it('continues positions across a reopen and replays commits sealed into chunks', async () => {
      const db = newDb()
      const store = await openStore({}, db)
      await store.putMany([btc(0), eth(0)])
      await store.putMany([btc(HOUR)])
      await store.close()
      const again = await openStore({}, reopenDb(db))
      expect(again.position).toBe(2)
      await again.putMany([eth(HOUR)])
      expect(again.position).toBe(3)
      expect(await collectUntil(again.watch({ after: 0 }), 3)).toEqual([
        recordsItem(1, [btc(0), eth(0)]), recordsItem(2, [btc(HOUR)]), recordsItem(3, [eth(HOUR)]),
      ])
    })

    it('replays a rewritten record as it is now, once in each commit that wrote it; live watchers saw each version', async () => {
      const store = await openStore({ openBytes: 0 })
      const live = collectUntil(store.watch(), 3)
      await store.putMany([btc(0, { value: 1 }), eth(0)])
      await store.putMany([btc(HOUR)])
      // A rewrite of a sealed record (openBytes 0 seals after each batch).
      await store.putMany([btc(0, { value: 3 })])
      expect(await live).toEqual([recordsItem(1, [btc(0, { value: 1 }), eth(0)]), recordsItem(2, [btc(HOUR)]), recordsItem(3, [btc(0, { value: 3 })])])
      expect(await collectUntil(store.watch({ after: 0 }), 3)).toEqual([
        recordsItem(1, [btc(0, { value: 3 }), eth(0)]), recordsItem(2, [btc(HOUR)]), recordsItem(3, [btc(0, { value: 3 })]),
      ])
    })

    it('replays a commit whose records were pruned since with those left out and counted', async () => {
      const store = await openStore()
      const batches = [[btc(0), eth(10)], [btc(HOUR), btc(20)], [eth(2 * HOUR)]]
      for (const batch of batches) await store.putMany(batch)
      await store.prune({ before: T0 + HOUR })
      expect(await collectUntil(store.watch({ after: 0 }), 3)).toEqual([
        { type: 'records', position: 1, records: [], pruned: 2 },
        { type: 'records', position: 2, records: [expected(btc(HOUR))], pruned: 1 },
        recordsItem(3, batches[2] as In[]),
      ])
    })

    it('says a trimmed position is too old (reset), then replays what the journal keeps', async () => {
      const store = await openStore({ journal: { commits: 3 } })
      for (let i = 0; i < 5; i++) await store.putMany([btc(i)])
      expect(await collectUntil(store.watch({ after: 0 }), 5)).toEqual([
        { type: 'reset', reason: 'trimmed', requested: 0, position: 2 },
        recordsItem(3, [btc(2)]), recordsItem(4, [btc(3)]), recordsItem(5, [btc(4)]),
      ])
    })

    it('ends when the store closes; refuses bad options when called', async () => {
      const store = await openStore()
      await store.putMany([btc(0)])
      const watch = store.watch({ after: 0 })
      expect(plain((await watch.next()).value as WatchItem)).toEqual(recordsItem(1, [btc(0)]))
      const pending = watch.next()
      await store.close()
      expect((await pending).done).toBe(true)
      const other = await openStore()
      throwsCode(() => other.watch({ symbols: ['BTC USD'] }), 'PRICE_INVALID_SYMBOL')
      throwsCode(() => other.watch({ after: -1 }), 'PRICE_INVALID_QUERY')
    })
  })
}
