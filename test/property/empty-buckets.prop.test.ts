/**
 * `fill=none` (empty buckets made explicit) at large: on random data sets,
 * valid range and candles grids around the data (before its first record,
 * over it, past it, with `origin`, paged) answered by the engine over an
 * array source, by the store on both backends (`query()` and the stream)
 * and by the reference model, all equal. The general property tests draw
 * `fill=none` too, mostly among malformed parameters; this one aims at
 * answers. Fixed seed (FC_SEED explores others).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { executeQuery, parseQuery } from '../../src/engine.js'
import { dataSetArb, TEST_LIMITS } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { ArraySource } from '../support/array-source.js'
import { propertyBackends } from './backends.js'
import { outcome } from './answer-outcome.js'

const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
const scale = Number(process.env['FC_SCALE']) || 1
const { backends } = propertyBackends('empty-buckets-prop', { memory: 40, classic: 10 })

const scenarioArb = dataSetArb.chain((data) => {
  const times = data.timestamps.length === 0 ? [0] : data.timestamps
  const lo = Math.min(...times)
  const hi = Math.max(...times)
  const span = Math.max(1, hi - lo)
  const queryArb = fc
    .record({
      symbol: fc.constantFrom(...data.symbols, 'NOPE'),
      from: fc.integer({ min: Math.max(0, lo - span), max: hi + span }),
      length: fc.integer({ min: 0, max: 2 * span }),
      interval: fc.oneof(fc.constant(data.interval), fc.integer({ min: 1, max: Math.max(2, Math.ceil(span / 3)) })),
      origin: fc.option(fc.integer({ min: -2 * data.interval, max: 2 * data.interval }), { nil: undefined }),
      candles: fc.boolean(),
      offset: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
      limit: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
      fields: fc.option(fc.constantFrom('id,value', '-signature'), { nil: undefined }),
    })
    .filter(({ length, interval }) => length / interval < 5000)
    .map(({ symbol, from, length, interval, origin, candles, offset, limit, fields }) => ({
      symbol, fromTimestamp: String(from), toTimestamp: String(from + length), interval: String(interval), fill: 'none',
      ...(origin === undefined ? {} : { origin: String(origin) }),
      ...(candles ? { aggregate: 'candles' } : {}),
      ...(offset === undefined ? {} : { offset: String(offset) }),
      ...(limit === undefined ? {} : { limit: String(limit) }),
      ...(fields === undefined ? {} : { fields }),
    }))
  return fc.record({ data: fc.constant(data), queries: fc.array(queryArb, { minLength: 1, maxLength: 6 }) })
})


describe.each(backends)('fill=none on $name', (backend) => {
  it('engine, store (query and stream) and the reference model answer every bucket alike', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, queries }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const store = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
        try {
          if (data.records.length > 0) await store.putMany(data.records as never)
          for (const params of queries) {
            const label = JSON.stringify(params)
            const expected = referenceQuery(stored, params, config)
            expect(await outcome(async () => executeQuery(parseQuery(params, config), new ArraySource(stored), TEST_LIMITS)), label).toEqual(expected)
            expect(await outcome(() => store.query(params)), label).toEqual(expected)
            if ('answer' in expected && params.offset === undefined && params.limit === undefined && params.fields === undefined) {
              const streamed: unknown[] = []
              const options = { from: Number(params.fromTimestamp), to: Number(params.toTimestamp), interval: Number(params.interval), fill: 'none' as const, ...(params.origin === undefined ? {} : { origin: Number(params.origin) }) }
              for await (const item of params.aggregate === 'candles' ? store.candleStream(params.symbol, options) : store.rangeStream(params.symbol, options)) streamed.push(item)
              expect(streamed, label).toEqual(expected.answer)
            }
          }
        } finally {
          await store.close()
        }
      }),
      { numRuns: Math.ceil(backend.numRuns * scale) },
    )
  }, 300_000)
})
