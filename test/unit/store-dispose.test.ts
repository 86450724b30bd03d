/**
 * `await using store = await PriceStore.open(...)`: the store is an
 * AsyncDisposable whose disposal is `close()`, so leaving the scope, by
 * any path, closes it.
 */
import { MemoryLevel } from 'memory-level'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'

describe('PriceStore as an AsyncDisposable', () => {
  it('is typed as one', () => {
    expectTypeOf<PriceStore>().toMatchTypeOf<AsyncDisposable>()
  })

  it('closes at the end of an await using scope, after its pending writes', async () => {
    const db = new MemoryLevel()
    let kept: PriceStore | undefined
    {
      await using store = await PriceStore.open(db, { provider: TEST_PROVIDER })
      kept = store
      void store.put(makeRecord())
      expect(store.status).toBe('open')
    }
    expect(kept.status).toBe('closed')
    // The write queued before the scope ended was kept.
    await using again = await PriceStore.open(db, { provider: TEST_PROVIDER })
    expect(await again.latest('BTC')).toHaveLength(1)
  })

  it('closes when the scope is left by a throw', async () => {
    let kept: PriceStore | undefined
    await expect(
      (async () => {
        await using store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
        kept = store
        throw new Error('the caller failed')
      })(),
    ).rejects.toThrow('the caller failed')
    expect(kept?.status).toBe('closed')
  })

  it('disposing is close(): a closed store disposes without error, and a disposed one is closed', async () => {
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
    await store[Symbol.asyncDispose]()
    expect(store.status).toBe('closed')
    await expect(store[Symbol.asyncDispose]()).resolves.toBeUndefined()
  })
})
