/**
 * `putBatch(records, { position })`: a commit at a position a replication
 * log gives (price-store/cluster). Positions may skip numbers, must grow,
 * survive a reopen (they are the journal's keys, written in the batch's own
 * atomic write), and a watch replays commits across the gaps without a reset.
 */
import { MemoryLevel } from 'memory-level'
import { afterEach, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER as PROVIDER, T0 } from '../../src/testing/records.js'
import { rejectsCode } from '../support/assertions.js'
import { rec } from '../support/records.js'
import { collectUntil, recordsItem } from '../support/watch-items.js'

const open: PriceStore[] = []
afterEach(async () => {
  for (const store of open.splice(0)) await store.close()
})

async function openOn(db: MemoryLevel<any, any>): Promise<PriceStore> {
  const store = await PriceStore.open(db, { provider: PROVIDER })
  open.push(store)
  return store
}

const btc = (offset: number) => rec({ symbol: 'BTC', timestamp: T0 + offset })

describe('putBatch at a given position', () => {
  it('commits at the position given, and the next batch without one goes on after it', async () => {
    const store = await openOn(new MemoryLevel())
    expect(await store.putBatch([btc(1)], { position: 7 })).toEqual({ stored: 1, position: 7 })
    expect(store.position).toBe(7)
    expect(await store.putBatch([btc(2)])).toEqual({ stored: 1, position: 8 })
    expect(await store.putBatch([btc(3)], { position: 20 })).toEqual({ stored: 1, position: 20 })
    expect((await store.latest('BTC', { limit: 5 })).map((r) => r.timestamp)).toEqual([T0 + 3, T0 + 2, T0 + 1])
  })

  it('refuses a position at or below the store position, or not a whole number, and writes nothing', async () => {
    const store = await openOn(new MemoryLevel())
    await store.putBatch([btc(1)], { position: 5 })
    for (const position of [5, 4, 0, -1, 5.5, Number.NaN, 2 ** 53]) {
      const err = await rejectsCode(store.putBatch([btc(100)], { position }), 'PRICE_INVALID_OPTIONS')
      expect(err.details).toMatchObject({ parameter: 'position', position: 5 })
    }
    expect(store.position).toBe(5)
    expect(await store.latest('BTC', { limit: 10 })).toHaveLength(1)
  })

  it('of two batches queued at once for the same position, the second is refused', async () => {
    const store = await openOn(new MemoryLevel())
    const [first, second] = await Promise.allSettled([store.putBatch([btc(1)], { position: 3 }), store.putBatch([btc(2)], { position: 3 })])
    expect(first).toEqual({ status: 'fulfilled', value: { stored: 1, position: 3 } })
    expect(second.status).toBe('rejected')
    expect((second as PromiseRejectedResult).reason.code).toBe('PRICE_INVALID_OPTIONS')
    expect((await store.latest('BTC', { limit: 10 })).map((r) => r.timestamp)).toEqual([T0 + 1])
  })

  it('keeps the positions across a reopen, and a watch replays across the gaps with no reset', async () => {
    const db = new MemoryLevel()
    const store = await openOn(db)
    await store.putBatch([btc(1)], { position: 2 })
    await store.putBatch([btc(2)], { position: 9 })
    await store.putBatch([btc(3)], { position: 10 })
    await store.close()
    open.pop()
    const again = await openOn(db)
    expect(again.position).toBe(10)
    expect(await collectUntil(again.watch({ after: 3 }), 10)).toEqual([recordsItem(9, [btc(2)]), recordsItem(10, [btc(3)])])
    expect(await collectUntil(again.watch({ after: 0 }), 10)).toEqual([recordsItem(2, [btc(1)]), recordsItem(9, [btc(2)]), recordsItem(10, [btc(3)])])
    expect(await again.putBatch([btc(4)])).toEqual({ stored: 1, position: 11 })
  })
})
