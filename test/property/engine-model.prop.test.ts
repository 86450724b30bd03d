import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPriceStoreError } from '../../src/index.js'
import { executeQuery, parseQuery } from '../../src/engine.js'
import { paramContextArb, queryParamsArb, showParams } from '../../src/testing/query-arbitraries.js'
import { dataSetArb, TEST_LIMITS } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { keyOrder, outcomeOf, referenceFaultParameters, referenceQuery, storedRecords, type ModelResult } from '../../src/testing/reference-model.js'
import { ArraySource } from '../support/array-source.js'

const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
// FC_SCALE=10 npx vitest run test/property multiplies every run count, for a deeper search before a release.
const scale = Number(process.env['FC_SCALE']) || 1
// Long enough for fast-check to finish shrinking a failure and print its seed (a passing run takes seconds).
const SHRINK_TIMEOUT = 300_000

const scenarioArb = dataSetArb.chain((data) =>
  fc.record({
    data: fc.constant(data),
    queries: fc.array(queryParamsArb(data), { minLength: 1, maxLength: 8 }),
    batchSize: fc.constantFrom(1, 2, 5, 64),
  }),
)

/** toEqual (Object.is on numbers, so -0 counts) plus the key order the contract fixes. */
function expectSameOutcome(actual: ModelResult, expected: ModelResult, label: string): void {
  expect(actual, label).toEqual(expected)
  if ('answer' in actual && 'answer' in expected) expect(keyOrder(actual.answer), label).toEqual(keyOrder(expected.answer))
}

describe('engine vs reference model', () => {
  it('parseQuery + executeQuery over an array source answer exactly what the model answers, errors included', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, queries, batchSize }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        for (const params of queries) {
          const expected = referenceQuery(stored, params, config)
          const actual = await outcomeOf(() => executeQuery(parseQuery(params, config), new ArraySource(stored, { batchSize }), TEST_LIMITS))
          expectSameOutcome(actual, expected, showParams(params))
        }
      }),
      { numRuns: Math.ceil(300 * scale) },
    )
  }, SHRINK_TIMEOUT)

  it('a rejected parameter set gets a message naming the parameter at fault', () => {
    const arb = paramContextArb.chain((context) => queryParamsArb(context))
    fc.assert(
      fc.property(arb, (params) => {
        const parameters = referenceFaultParameters(params, config)
        let message: string | undefined
        try {
          parseQuery(params, config)
        } catch (err) {
          if (!isPriceStoreError(err)) throw err
          message = err.message
        }
        if (parameters === undefined) return
        expect(message, showParams(params)).toBeDefined()
        expect(
          parameters.some((name) => message!.includes(name)),
          `${showParams(params)}: "${message}" should name ${parameters.join(' or ')}`,
        ).toBe(true)
      }),
      { numRuns: Math.ceil(500 * scale) },
    )
  }, SHRINK_TIMEOUT)

  it('the default limits apply when a query asks for a lot', async () => {
    const limits = { maxLimit: 3000, maxSymbols: 1000, maxRangePoints: 10000 }
    const stored = storedRecords([], TEST_PROVIDER)
    for (const params of [{ limit: '3000', symbol: 'BTC' }, { limit: '3001', symbol: 'BTC' }, { symbols: Array.from({ length: 1001 }, (_, i) => `S${i}`).join(',') }]) {
      const expected = referenceQuery(stored, params, { provider: TEST_PROVIDER, limits })
      const actual = await outcomeOf(() => executeQuery(parseQuery(params, { provider: TEST_PROVIDER, limits }), new ArraySource(stored), limits))
      expectSameOutcome(actual, expected, JSON.stringify(params).slice(0, 80))
    }
  })
})
