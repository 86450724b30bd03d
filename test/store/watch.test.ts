/**
 * store.watch() at the database level, on memory-level: a replay holds one
 * snapshot of the database and releases it when the loop is left or the
 * watch is aborted, and a write the database refuses ends live watchers
 * with its error. (Everything a watcher is told runs on both backends in the
 * store suite: test/store/suite/watch.ts.)
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import type { PriceStoreOptions } from '../../src/index.js'
import { TEST_PROVIDER as PROVIDER, T0 } from '../../src/testing/records.js'
import { rejectsCode } from '../support/assertions.js'
import { rec, type Input } from '../support/records.js'
import { collectUntil, recordsItem } from '../support/watch-items.js'
import { countSnapshots } from '../support/snapshots.js'

const open: PriceStore[] = []

afterEach(async () => {
  for (const store of open.splice(0)) await store.close()
})

async function openOn(db: () => MemoryLevel<any, any>, options: Partial<PriceStoreOptions> = {}): Promise<PriceStore> {
  const store = await PriceStore.open(db(), { provider: PROVIDER, ...options })
  open.push(store)
  return store
}


type In = ReturnType<typeof rec>
const btc = (offset: number, extra: Input = {}): In => rec({ symbol: 'BTC', timestamp: T0 + offset, ...extra })

describe('store.watch(): resources', () => {

  it('leaving the loop during a replay releases its view; leaving a live watch ends it', async () => {
    const db = new MemoryLevel()
    const snapshots = countSnapshots(db)
    const store = await openOn(() => db)
    for (let i = 0; i < 40; i++) await store.putMany([btc(i)])
    const base = snapshots.open
    for await (const item of store.watch({ after: 0 })) {
      expect(snapshots.open).toBe(base + 1)
      if (item.position === 3) break
    }
    expect(snapshots.open).toBe(base)
    const live = store.watch()
    const next = live.next()
    await store.putMany([btc(100)])
    await next
    expect(await live.return()).toEqual({ done: true, value: undefined })
    expect(await live.next()).toEqual({ done: true, value: undefined })
  })

  it('an abort during a replay releases the view at once, without another pull', async () => {
    const db = new MemoryLevel()
    const snapshots = countSnapshots(db)
    const store = await openOn(() => db)
    for (let i = 0; i < 40; i++) await store.putMany([btc(i)])
    const base = snapshots.open
    const controller = new AbortController()
    const watch = store.watch({ after: 0, signal: controller.signal })
    await watch.next()
    expect(snapshots.open).toBe(base + 1)
    controller.abort()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(snapshots.open).toBe(base)
    await rejectsCode(watch.next(), 'PRICE_ABORTED')
  })

  it('a write that fails ends live watchers with its error; a resumed watch replays what landed', async () => {
    const db = new MemoryLevel()
    const store = await openOn(() => db)
    await store.putMany([btc(0)])
    const watch = store.watch()
    const pending = watch.next()
    const batch = db.batch.bind(db)
    let failNext = true
    db.batch = ((...args: Parameters<typeof batch>) => {
      if (failNext) {
        failNext = false
        return Promise.reject(new Error('disk full'))
      }
      return batch(...args)
    }) as typeof db.batch
    await rejectsCode(store.putMany([btc(1)]), 'PRICE_STORAGE_ERROR')
    await rejectsCode(pending, 'PRICE_STORAGE_ERROR')
    await store.putMany([btc(2)])
    // The failed batch's number stays unused: no gap is reported, nothing is repeated.
    expect(await collectUntil(store.watch({ after: 1 }), 3)).toEqual([recordsItem(3, [btc(2)])])
  })
})
