import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { executeQuery, parseQuery } from '../../src/engine.js'
import { DeferredAnswer } from '../../src/engine/deferred-answer.js'
import { scopedSource, type ReadScope } from '../../src/engine/read-scope.js'
import { queryParamsArb, showParams } from '../../src/testing/query-arbitraries.js'
import { dataSetArb, TEST_LIMITS, type DataSet } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { outcomeOf, referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { referenceBatchAsOf } from '../../src/testing/reference-forms/batch-asof.js'
import type { PriceRecord } from '../../src/types.js'
import { ArraySource } from '../support/array-source.js'
import { propertyBackends } from './backends.js'

// A read in a scope (records up to a time, of some symbols) answers every form exactly as the reference model
// answers over the records in that scope alone: the engine over a scoped source, and the store on both backends.

const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
const scale = Number(process.env['FC_SCALE']) || 1
const SEED = Number(process.env['FC_SEED'] ?? 4545)
const { backends } = propertyBackends('read-scope', { memory: 30, classic: 12 })

/** A scope over a data set: a time at, just before or between its timestamps (or none), and a subset of its symbols (or none). */
function scopeArb(data: DataSet): fc.Arbitrary<ReadScope> {
  const time = fc.oneof(fc.constantFrom(...data.timestamps), fc.constantFrom(...data.timestamps).map((t) => t - 1))
  return fc
    .record({ notAfter: fc.option(time, { nil: undefined }), symbols: fc.option(fc.subarray([...data.symbols]), { nil: undefined }) })
    .filter(({ notAfter, symbols }) => notAfter !== undefined || symbols !== undefined)
    .map(({ notAfter, symbols }) => ({ ...(notAfter === undefined ? {} : { notAfter }), ...(symbols === undefined ? {} : { symbols: new Set(symbols) }) }))
}

const scenarioArb = dataSetArb.chain((data) =>
  fc.record({
    data: fc.constant(data),
    scope: scopeArb(data),
    queries: fc.array(queryParamsArb(data), { minLength: 1, maxLength: 8 }),
    times: fc.uniqueArray(fc.oneof(fc.constantFrom(...data.timestamps), fc.integer({ min: 0, max: Math.max(...data.timestamps) + 10 })), { minLength: 1, maxLength: 5 }),
  }),
)

/** The records a read in `scope` may see. */
function inScope(records: readonly PriceRecord[], scope: ReadScope): PriceRecord[] {
  return records.filter((r) => (scope.notAfter === undefined || r.timestamp <= scope.notAfter) && (scope.symbols === undefined || scope.symbols.has(r.symbol)))
}

function showScope(scope: ReadScope): string {
  return JSON.stringify({ notAfter: scope.notAfter, symbols: scope.symbols === undefined ? undefined : [...scope.symbols] })
}

describe('a read scope vs the reference model over the records in scope', () => {
  it('the engine over a scoped source answers every form as the model does over the scoped records', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, scope, queries }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const visible = inScope(stored, scope)
        for (const params of queries) {
          const expected = referenceQuery(visible, params, config)
          const actual = await outcomeOf(() => executeQuery(parseQuery(params, config), scopedSource(new ArraySource(stored, { batchSize: 3 }), scope), TEST_LIMITS))
          expect(actual, `${showScope(scope)} ${showParams(params)}`).toEqual(expected)
        }
      }),
      { seed: SEED, numRuns: Math.ceil(150 * scale) },
    )
  }, 300_000)

  describe.each(backends)('a store ($name)', (backend) => {
    it('query, run, runDeferred and batchAsOf in a scope answer as the model does over the scoped records, sealed hours and open ones', async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArb, fc.constantFrom(0, undefined), async ({ data, scope, queries, times }, openBytes) => {
          const stored = storedRecords(data.records, TEST_PROVIDER)
          const visible = inScope(stored, scope)
          // openBytes 0 seals every hour after each write: the second write leaves delta parts beside sealed chunks.
          const store = await PriceStore.open(backend.location(), { ...config, ...(openBytes === undefined ? {} : { openBytes }) })
          try {
            const half = Math.floor(data.records.length / 2)
            await store.putMany(data.records.slice(0, half))
            await store.putMany(data.records.slice(half))
            for (const params of queries) {
              const label = `${showScope(scope)} ${showParams(params)}`
              const expected = referenceQuery(visible, params, config)
              expect(await outcomeOf(() => store.query(params, { scope })), label).toEqual(expected)
              const planned = await outcomeOf(async () => {
                const plan = store.plan(params)
                const deferred = await store.runDeferred(plan, { scope })
                const answer = deferred instanceof DeferredAnswer ? deferred.toArray() : deferred
                expect(await store.run(plan, { scope }), label).toEqual(answer)
                return answer as never
              })
              expect(planned, label).toEqual(expected)
            }
            const symbols = [...data.symbols]
            const batch = await store.batchAsOf({ symbols, times, scope })
            expect(JSON.parse(JSON.stringify(batch)), showScope(scope)).toEqual(JSON.parse(JSON.stringify(referenceBatchAsOf(visible, symbols, times, 'before'))))
          } finally {
            await store.close()
          }
        }),
        { seed: SEED + 1, numRuns: Math.ceil(backend.numRuns * scale) },
      )
    }, 300_000)
  })

  it('refuses a scope that is not one, with a coded error', async () => {
    const store = await PriceStore.open(new (await import('memory-level')).MemoryLevel(), config)
    try {
      const plan = store.plan({ symbol: 'BTC' })
      for (const scope of [1, { notAfter: 1.5 }, { symbols: ['BTC'] }, { symbols: new Set([1]) }]) {
        const error = await (async () => store.run(plan, { scope } as never))().then(() => undefined, (err: unknown) => err)
        expect(error, JSON.stringify(scope)).toMatchObject({ code: 'PRICE_INVALID_OPTIONS' })
      }
    } finally {
      await store.close()
    }
  })
})
