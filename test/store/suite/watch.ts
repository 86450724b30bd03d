/**
 * watch() on the suite's backend: commits numbered from 1 and replayed in
 * commit order, live commits after the call, a key written twice in a batch,
 * the symbols filter and its progress items, positions across a reopen, a
 * sealed record rewritten, pruned records counted, a trimmed journal and an
 * unknown position (reset), overflow, and the endings (close, abort) and
 * option checks. Expected records are built from the inputs
 * (test/support/records.ts), not read from the store.
 */
import { describe, expect, it } from 'vitest'
import type { WatchItem, WatchIterator } from '../../../src/index.js'
import { PROGRESS_EVERY } from '../../../src/store/services/watch/watch-options.js'
import { T0 } from '../../../src/testing/records.js'
import { rejectsCode, throwsCode } from '../../support/assertions.js'
import { expected, rec, type Input } from '../../support/records.js'
import { collectUntil, plain, recordsItem } from '../../support/watch-items.js'
import { type FeatureTests, useStores } from './context.js'
import { HOUR } from './model.js'


/** Pulls every item until the watch ends. */
async function collectAll(items: WatchIterator): Promise<unknown[]> {
  const out: unknown[] = []
  for await (const item of items) out.push(plain(item))
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

    it('lists a key written twice in one batch once, at its last place, with the value stored', async () => {
      const store = await openStore()
      const batch = [btc(0, { value: 1 }), eth(0), btc(0, { value: 2 })]
      const watch = store.watch()
      const live = collectUntil(watch, 1)
      await store.putMany(batch)
      expect(await live).toEqual([recordsItem(1, [eth(0), btc(0, { value: 2 })])])
      expect(await collectUntil(store.watch({ after: 0 }), 1)).toEqual([recordsItem(1, [eth(0), btc(0, { value: 2 })])])
      expect(await store.latest('BTC')).toEqual([expected(btc(0, { value: 2 }))])
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

    it(`reports live progress after ${PROGRESS_EVERY} commits without a match`, async () => {
      const store = await openStore()
      const watch = store.watch({ symbols: ['BTC'] })
      const first = watch.next()
      for (let i = 0; i < PROGRESS_EVERY; i++) await store.putMany([eth(i)])
      expect(plain((await first).value as WatchItem)).toEqual({ type: 'progress', position: PROGRESS_EVERY })
      const next = watch.next()
      await store.putMany([btc(0)])
      expect(plain((await next).value as WatchItem)).toEqual(recordsItem(PROGRESS_EVERY + 1, [btc(0)]))
      await watch.return()
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

    it('replays a commit whose records were pruned since with those left out and counted, never silently', async () => {
      const store = await openStore()
      const batches = [[btc(0), eth(10)], [btc(HOUR), btc(20)], [eth(2 * HOUR)]]
      for (const batch of batches) await store.putMany(batch)
      // Everything before the second hour goes: all of commit 1, one record of commit 2.
      await store.prune({ before: T0 + HOUR })
      expect(await collectUntil(store.watch({ after: 0 }), 3)).toEqual([
        { type: 'records', position: 1, records: [], pruned: 2 },
        { type: 'records', position: 2, records: [expected(btc(HOUR))], pruned: 1 },
        recordsItem(3, batches[2] as In[]),
      ])
      // A filter counts only its own symbols' records.
      expect(await collectUntil(store.watch({ after: 0, symbols: ['ETH'] }), 3)).toEqual([
        { type: 'records', position: 1, records: [], pruned: 1 },
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
      // A position still inside the window replays without a reset.
      expect(await collectUntil(store.watch({ after: 2 }), 5)).toEqual([recordsItem(3, [btc(2)]), recordsItem(4, [btc(3)]), recordsItem(5, [btc(4)])])
    })

    it('trims by bytes too, keeping at least the newest commit, also across a reopen', async () => {
      let db = newDb()
      let store = await openStore({ journal: { bytes: 0 } }, db)
      await store.putMany([btc(0)])
      await store.putMany([btc(1), eth(1)])
      expect(await collectUntil(store.watch({ after: 0 }), 2)).toEqual([
        { type: 'reset', reason: 'trimmed', requested: 0, position: 1 }, recordsItem(2, [btc(1), eth(1)]),
      ])
      await store.close()
      // A larger window on reopen keeps more from now on; what was trimmed stays gone.
      db = reopenDb(db)
      store = await openStore({ journal: { bytes: 1_000_000 } }, db)
      await store.putMany([eth(2)])
      expect(await collectUntil(store.watch({ after: 0 }), 3)).toEqual([
        { type: 'reset', reason: 'trimmed', requested: 0, position: 1 }, recordsItem(2, [btc(1), eth(1)]), recordsItem(3, [eth(2)]),
      ])
      await store.close()
      // A smaller window on reopen trims the entries written before.
      store = await openStore({ journal: { commits: 1 } }, reopenDb(db))
      await store.putMany([eth(3)])
      expect(await collectUntil(store.watch({ after: 2 }), 4)).toEqual([{ type: 'reset', reason: 'trimmed', requested: 2, position: 3 }, recordsItem(4, [eth(3)])])
    })

    it('says a position past the newest commit is unknown, then goes on live', async () => {
      const store = await openStore()
      await store.putMany([btc(0)])
      const watch = store.watch({ after: 7 })
      const first = await watch.next()
      expect(plain(first.value as WatchItem)).toEqual({ type: 'reset', reason: 'unknown', requested: 7, position: 1 })
      const next = watch.next()
      await store.putMany([eth(0)])
      expect(plain((await next).value as WatchItem)).toEqual(recordsItem(2, [eth(0)]))
      await watch.return()
    })

    it('ends a watcher that falls more than maxPending records behind with an overflow item; resuming replays the rest', async () => {
      const store = await openStore()
      const watch = store.watch({ maxPending: 3 })
      const first = watch.next()
      await store.putMany([btc(0)])
      expect(plain((await first).value as WatchItem)).toEqual(recordsItem(1, [btc(0)]))
      await store.putMany([btc(1), eth(1)])
      await store.putMany([btc(2)])
      await store.putMany([btc(3)])
      expect(plain((await watch.next()).value as WatchItem)).toEqual({ type: 'overflow', position: 1 })
      expect(await watch.next()).toEqual({ done: true, value: undefined })
      expect(await collectUntil(store.watch({ after: 1 }), 4)).toEqual([recordsItem(2, [btc(1), eth(1)]), recordsItem(3, [btc(2)]), recordsItem(4, [btc(3)])])
    })

    it('lets one commit larger than maxPending through when nothing else waits', async () => {
      const store = await openStore()
      const live = collectUntil(store.watch({ maxPending: 1 }), 1)
      await store.putMany([btc(0), btc(1), btc(2)])
      expect(await live).toEqual([recordsItem(1, [btc(0), btc(1), btc(2)])])
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

    it('ends cleanly on close: queued commits first, then done; a waiting pull resolves done', async () => {
      const store = await openStore()
      const slow = store.watch()
      const slowFirst = slow.next()
      await store.putMany([btc(0)])
      await store.putMany([btc(1)])
      const idle = store.watch()
      const idleFirst = idle.next()
      await store.close()
      expect(await idleFirst).toEqual({ done: true, value: undefined })
      expect(plain((await slowFirst).value as WatchItem)).toEqual(recordsItem(1, [btc(0)]))
      expect(await collectAll(slow)).toEqual([recordsItem(2, [btc(1)])])
    })

    it('delivers the batches queued when close() is called before ending', async () => {
      const store = await openStore()
      const watch = store.watch()
      const first = watch.next()
      const writes = [store.putMany([btc(0)]), store.putMany([eth(0)])]
      await store.close()
      await Promise.all(writes)
      expect(plain((await first).value as WatchItem)).toEqual(recordsItem(1, [btc(0)]))
      expect(await collectAll(watch)).toEqual([recordsItem(2, [eth(0)])])
    })

    it('rejects with PRICE_ABORTED on an abort, the pull in progress and every later one', async () => {
      const store = await openStore()
      const controller = new AbortController()
      const watch = store.watch({ signal: controller.signal })
      const pending = watch.next()
      controller.abort(new Error('client left'))
      const err = await rejectsCode(pending, 'PRICE_ABORTED')
      expect(err.message).toContain('client left')
      await rejectsCode(watch.next(), 'PRICE_ABORTED')
      // An aborted watcher no longer takes commits: the store writes and closes as usual.
      await store.putMany([btc(0)])
      await rejectsCode(watch.next(), 'PRICE_ABORTED')
    })

    it('rejects at the first pull when the signal aborted before it', async () => {
      const store = await openStore()
      await rejectsCode(store.watch({ after: 0, signal: AbortSignal.abort() }).next(), 'PRICE_ABORTED')
    })

    it('checks its options when called', async () => {
      const store = await openStore()
      throwsCode(() => store.watch({ symbols: ['BTC USD'] }), 'PRICE_INVALID_SYMBOL')
      throwsCode(() => store.watch({ symbols: 'BTC' as unknown as string[] }), 'PRICE_INVALID_SYMBOL')
      throwsCode(() => store.watch({ symbols: [] }), 'PRICE_INVALID_QUERY')
      for (const after of [-1, 1.5, '3', Number.MAX_SAFE_INTEGER + 1]) {
        expect(throwsCode(() => store.watch({ after: after as number }), 'PRICE_INVALID_QUERY').details.parameter).toBe('after')
      }
      for (const maxPending of [0, 2.5, null]) {
        expect(throwsCode(() => store.watch({ maxPending: maxPending as number }), 'PRICE_INVALID_QUERY').details.parameter).toBe('maxPending')
      }
      throwsCode(() => store.watch({ signal: {} as AbortSignal }), 'PRICE_INVALID_QUERY')
      throwsCode(() => store.watch(7 as unknown as object), 'PRICE_INVALID_QUERY')
      await store.close()
      throwsCode(() => store.watch(), 'PRICE_NOT_OPEN')
    })
  })
}
