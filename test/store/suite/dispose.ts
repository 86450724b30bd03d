/**
 * `await using store = await PriceStore.open(...)` on the suite's backend:
 * leaving the scope, by any path, closes the store after its pending writes,
 * which a reopened store then holds; disposing is close().
 */
import { describe, expect, expectTypeOf, it } from 'vitest'
import { PriceStore } from '../../../src/index.js'
import { rec } from '../../support/records.js'
import { type FeatureTests, useStores } from './context.js'

export const disposeTests: FeatureTests = (suite) => {
  describe('dispose (await using)', () => {
    const { newDb, reopenDb, options } = useStores(suite)

    it('is typed as an AsyncDisposable', () => {
      expectTypeOf<PriceStore>().toMatchTypeOf<AsyncDisposable>()
    })

    it('closes at the end of an await using scope, after its pending writes, which a reopen finds', async () => {
      const db = newDb()
      let kept: PriceStore | undefined
      {
        await using store = await PriceStore.open(db, options())
        kept = store
        void store.putMany([rec(), rec({ symbol: 'ETH' })])
        expect(store.status).toBe('open')
      }
      expect(kept.status).toBe('closed')
      await using again = await PriceStore.open(reopenDb(db), options())
      expect(await again.symbols()).toEqual(['BTC', 'ETH'])
      expect(await again.latest('BTC')).toHaveLength(1)
    })

    it('closes when the scope is left by a throw', async () => {
      let kept: PriceStore | undefined
      await expect(
        (async () => {
          await using store = await PriceStore.open(newDb(), options())
          kept = store
          throw new Error('the caller failed')
        })(),
      ).rejects.toThrow('the caller failed')
      expect(kept?.status).toBe('closed')
    })

    it('disposing is close(): a disposed store is closed, and a closed store disposes without error', async () => {
      const store = await PriceStore.open(newDb(), options())
      await store[Symbol.asyncDispose]()
      expect(store.status).toBe('closed')
      await expect(store[Symbol.asyncDispose]()).resolves.toBeUndefined()
    })
  })
}
