/**
 * The latest-N form on the suite's backend: newest first, limit, offset and the
 * from/to window (the as-of lookup before `to`), against the filter-and-sort model.
 */
import { describe, expect, it } from 'vitest'
import { difference } from '../../support/assertions.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MINUTE } from './model.js'

export const latestTests: FeatureTests = (suite) => {
  describe('latest', () => {
    const { seeded } = useStores(suite)

    it('latest: newest first; limit (default 1), offset, and the from/to window', async () => {
      const { store, model } = await seeded()
      const cases: { limit?: number; offset?: number; from?: number; to?: number }[] = [
        {},
        { limit: 3 },
        { limit: 3, offset: 2 },
        { limit: 3000 },
        { offset: 100, limit: 5 },
        { to: H + 30 * MINUTE }, // as-of: includes the three records of that millisecond
        { to: H + 30 * MINUTE, limit: 4 },
        { to: H + 30 * MINUTE - 1, limit: 2 },
        { from: H, to: H + HOUR, limit: 3000 },
        { from: H + HOUR }, // from only
        { from: H + HOUR - 1, to: H + HOUR - 1, limit: 10 },
        { to: 0 },
      ]
      for (const symbol of ['BTC', 'ETH', 'BTC-USD', 'NOPE']) {
        for (const o of cases) {
          const got = await store.latest(symbol, o)
          const want = model.latest(symbol, o)
          expect(difference(got, want), `${symbol} ${JSON.stringify(o)}`).toBeUndefined()
        }
      }
    })
  })
}
