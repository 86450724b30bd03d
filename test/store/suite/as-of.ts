/**
 * As-of lookups with a direction (`before`, `after`, `nearest`) and a
 * tolerance, on the suite's backend: the latest and several forms, typed and
 * through query(), against the reference model of `price-store/testing`.
 */
import { describe, expect, it } from 'vitest'
import type { QueryParams } from '../../../src/index.js'
import type { AsOfDirection } from '../../../src/types.js'
import { outcomeOf } from '../../../src/testing/reference-model.js'
import { difference } from '../../support/assertions.js'
import { type FeatureTests, useStores } from './context.js'
import { H, HOUR, MINUTE } from './model.js'

const DIRECTIONS: readonly AsOfDirection[] = ['before', 'after', 'nearest']
/** Before the first record, on records, between them (also at equal distances), inside a shared millisecond, after the last. */
const TIMES = [H - HOUR, H - 20 * MINUTE, H + 30 * MINUTE - 1, H + 30 * MINUTE, H + 30 * MINUTE + 1, H + 45 * MINUTE + 5, H + 3 * HOUR]
const TOLERANCES = [undefined, 0, 1, MINUTE, 10 * MINUTE]

function asOfParams(to: number, direction: AsOfDirection, tolerance: number | undefined): Record<string, string> {
  return { toTimestamp: String(to), direction, ...(tolerance === undefined ? {} : { tolerance: String(tolerance) }) }
}

export const asOfTests: FeatureTests = (suite) => {
  describe('as-of direction and tolerance', () => {
    const { seeded } = useStores(suite)

    it('latest: before, after and nearest, within a tolerance or not, typed and by query(), as the model answers', async () => {
      const { store, model } = await seeded()
      for (const symbol of ['BTC', 'ETH', 'NOPE']) {
        for (const to of TIMES) {
          for (const direction of DIRECTIONS) {
            for (const tolerance of TOLERANCES) {
              const params = { symbol, ...asOfParams(to, direction, tolerance) }
              const want = model.query(params)
              const label = JSON.stringify(params)
              expect(difference(await outcomeOf(() => store.query(params)), want), label).toBeUndefined()
              const typed = { to, direction, ...(tolerance === undefined ? {} : { tolerance }) }
              expect(difference(await outcomeOf(() => store.latest(symbol, typed)), want), label).toBeUndefined()
            }
          }
        }
      }
    })

    it('several: each symbol\'s as-of record, named or all, a symbol with none left out', async () => {
      const { store, model } = await seeded()
      for (const to of TIMES) {
        for (const direction of DIRECTIONS) {
          for (const tolerance of TOLERANCES) {
            const typed = { to, direction, ...(tolerance === undefined ? {} : { tolerance }) }
            const named = { symbols: 'ETH,BTC,NOPE,BTC-USD', ...asOfParams(to, direction, tolerance) }
            const label = JSON.stringify(named)
            expect(difference(await outcomeOf(() => store.query(named)), model.query(named)), label).toBeUndefined()
            expect(difference(await outcomeOf(() => store.several(['ETH', 'BTC', 'NOPE', 'BTC-USD'], typed)), model.query(named)), label).toBeUndefined()
            const all = asOfParams(to, direction, tolerance)
            expect(difference(await outcomeOf(() => store.several(undefined, typed)), model.query(all)), `all ${label}`).toBeUndefined()
          }
        }
      }
    })

    it('refuses what the model refuses: a direction without a time, with a window or several records, an unknown direction', async () => {
      const { store, model } = await seeded()
      const cases: QueryParams[] = [
        { symbol: 'BTC', direction: 'after' },
        { symbol: 'BTC', toTimestamp: String(H), direction: 'sideways' },
        { symbol: 'BTC', toTimestamp: String(H), direction: 'after', limit: '2' },
        { symbol: 'BTC', toTimestamp: String(H), fromTimestamp: String(H - HOUR), direction: 'nearest' },
        { symbol: 'BTC', toTimestamp: String(H), tolerance: '-1' },
        { symbol: 'BTC', toTimestamp: String(H), tolerance: 'x' },
      ]
      for (const params of cases) {
        const want = model.query(params)
        expect('error' in want, JSON.stringify(params)).toBe(true)
        expect(await outcomeOf(() => store.query(params)), JSON.stringify(params)).toEqual(want)
      }
    })
  })
}
