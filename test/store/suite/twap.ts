/**
 * TWAP on the suite's backend: each symbol's time-weighted average over a
 * window, the record in force at `from` carried in, typed and through
 * query(), against the reference model of `price-store/testing` (exact
 * arithmetic, compared within a few units in the last place).
 */
import { describe, expect, it } from 'vitest'
import { outcomeOf } from '../../../src/testing/reference-model.js'
import { rec } from '../../support/records.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MAX, MINUTE, Model } from './model.js'

const WINDOWS: [number, number][] = [
  [H - HOUR, H + 3 * HOUR],
  [H, H + HOUR - 1],
  [H + 30 * MINUTE, H + 30 * MINUTE],
  [H + 7 * MINUTE, H + 43 * MINUTE + 1],
  [H + 10 * MINUTE, MAX],
  [0, H - HOUR], // before every record: nothing in force
]

const twapParams = (from: number, to: number, symbols?: string) => ({
  ...(symbols === undefined ? {} : { symbols }), fromTimestamp: String(from), toTimestamp: String(to), aggregate: 'twap',
})

export const twapTests: FeatureTests = (suite) => {
  describe('twap', () => {
    const { seeded, openStore } = useStores(suite)

    it('twap and query() give the model\'s averages, named symbols or all, a symbol with nothing in force left out', async () => {
      const { store, model } = await seeded()
      for (const [from, to] of WINDOWS) {
        const named = twapParams(from, to, 'ETH,BTC,NOPE')
        const label = JSON.stringify(named)
        expect(await outcomeOf(() => store.twap(['ETH', 'BTC', 'NOPE'], { from, to })), label).toEqual(model.query(named))
        expect(await outcomeOf(() => store.query(named)), label).toEqual(model.query(named))
        expect(await outcomeOf(() => store.twap(undefined, { from, to })), label).toEqual(model.query(twapParams(from, to)))
      }
    })

    it('weighs each value by the time it was in force, with extreme values', async () => {
      const store = await openStore()
      const records = [
        rec({ symbol: 'W', timestamp: H, value: 1e308 }),
        rec({ symbol: 'W', timestamp: H + 1, value: -1e308 }),
        rec({ symbol: 'W', timestamp: H + MINUTE, value: 5e-324 }),
        rec({ symbol: 'W', timestamp: H + MINUTE, id: 'zz', value: 3 }),
        rec({ symbol: 'W', timestamp: H + HOUR, value: -0 }),
      ]
      await store.putMany(records)
      const model = new Model().add(records)
      for (const [from, to] of [[H, H + 2 * HOUR], [H + 1, H + MINUTE], [H + MINUTE, H + MINUTE], [H - 5, H + 5]] as const) {
        expect(await outcomeOf(() => store.twap(['W'], { from, to })), `${from}..${to}`).toEqual(model.query(twapParams(from, to, 'W')))
      }
    })
  })
}
