/**
 * Validity windows (docs/semantics.md, "Validity windows") at large, on
 * random data sets where equal timestamps (and ids ordered by UTF-8 bytes,
 * not UTF-16) are common: with `validUntil=true`, every form that answers
 * records (latest-N, history, as-of, directed as-of, several, range, gap
 * filled and counted ranges, with `fields` now and then) answers exactly
 * what the reference model answers, through the pure engine over an array,
 * `store.query` on memory-level and classic-level (hot tails whole, partial
 * or off; records open or sealed), `store.batchAsOf`, and cursor walks
 * (`store.page`) whose pages joined are the model's whole answer; and a
 * record is in force at T (`timestamp <= T < validUntil`) exactly when the
 * as-of lookup at T picks it. Fixed seed (FC_SEED explores others).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PriceStore, type PriceRecord } from '../../src/index.js'
import { executeQuery, parseQuery } from '../../src/engine.js'
import { dataSetArb } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { outcomeOf, referenceQuery, storedRecords, type ModelResult } from '../../src/testing/reference-model.js'
import { referenceBatchAsOf } from '../../src/testing/reference-forms/batch-asof.js'
import { referenceValidUntil } from '../../src/testing/reference-forms/valid-until.js'
import { ArraySource } from '../support/array-source.js'
import { propertyBackends } from './backends.js'

// Room for every record of a data set in one answer (up to 80), and for ranges of a few hundred buckets, some over the cap.
const LIMITS = Object.freeze({ maxLimit: 3000, maxSymbols: 5, maxRangePoints: 200 })
const config = { provider: TEST_PROVIDER, limits: LIMITS }
const scale = Number(process.env['FC_SCALE']) || 1
const SEED = Number(process.env['FC_SEED'] ?? 4242)
const SHRINK_TIMEOUT = 300_000
const { backends } = propertyBackends('valid-until-prop', { memory: 100, classic: 20 })

type Params = Readonly<Record<string, string>>

/**
 * How the store reads: its hot tails (the default: small data sets are whole in them), none (every read
 * through the view), tails of a few records (some queries from them, some not), and no open area either
 * (records sealed into chunks as they are written).
 */
const STORE_SHAPES = [
  {},
  { cache: { recordsPerSymbol: 0, headBytes: 0, chunkBytes: 0 } },
  { cache: { recordsPerSymbol: 3 } },
  { openBytes: 0, cache: { recordsPerSymbol: 0, headBytes: 0, chunkBytes: 0 } },
] as const

/** A data set and queries of every record form over it, each asking for validUntil (a few with `fields`, a few pageable). */
const scenarioArb = dataSetArb.chain((data) => {
  const ordinary = data.timestamps.filter((t) => t > 1e12 && t < 2e12)
  const times = ordinary.length === 0 ? [1_700_000_000_000] : ordinary
  const lo = Math.min(...times)
  const hi = Math.max(...times)
  const span = Math.max(1, hi - lo)
  // Times at, next to, and between the stored ones: equal timestamps make the ties.
  const timeArb = fc.oneof(fc.constantFrom(...times), fc.constantFrom(...times).map((t) => t - 1), fc.integer({ min: Math.max(0, lo - span), max: hi + span }))
  const symbolArb = fc.constantFrom(...data.symbols)
  const fieldsArb = fc.option(fc.constantFrom('id,timestamp', '-signature,-providerPublicKey', 'value', '-minutes'), { nil: undefined, freq: 3 })
  const windowArb = fc.tuple(timeArb, timeArb).map(([a, b]) => ({ fromTimestamp: String(Math.min(a, b)), toTimestamp: String(Math.max(a, b)) }))
  const latest = fc.record({ symbol: symbolArb, limit: fc.integer({ min: 1, max: 9 }), offset: fc.integer({ min: 0, max: 3 }), window: fc.option(windowArb, { nil: undefined }), to: fc.option(timeArb, { nil: undefined }) })
    .map(({ symbol, limit, offset, window, to }): Params => ({ symbol, limit: String(limit), ...(offset > 0 ? { offset: String(offset) } : {}), ...(window ?? (to === undefined ? {} : { toTimestamp: String(to) })) }))
  const asOf = fc.record({ symbol: symbolArb, to: timeArb, direction: fc.constantFrom('before', 'after', 'nearest'), tolerance: fc.option(fc.integer({ min: 0, max: span }), { nil: undefined }) })
    .map(({ symbol, to, direction, tolerance }): Params => ({ symbol, toTimestamp: String(to), direction, ...(tolerance === undefined ? {} : { tolerance: String(tolerance) }) }))
  const several = fc.record({ symbols: fc.subarray([...data.symbols], { minLength: 1 }), all: fc.boolean(), to: fc.option(timeArb, { nil: undefined }), from: fc.option(timeArb, { nil: undefined }) })
    .map(({ symbols, all, to, from }): Params => ({
      ...(all ? {} : { symbols: symbols.join(',') }),
      ...(to === undefined ? {} : { toTimestamp: String(to) }),
      ...(from === undefined || (to !== undefined && from > to) ? {} : { fromTimestamp: String(from) }),
    }))
  const range = fc.record({ symbol: symbolArb, window: windowArb, interval: fc.constantFrom(1, 7, data.interval, 2 * data.interval + 1, Math.max(1, Math.ceil(span / 3))), fill: fc.constantFrom(undefined, 'prev', 'none') })
    // At most ~250 buckets, so the model's grids stay small (and some answers pass the cap of 200).
    .map(({ symbol, window, interval, fill }): Params => {
      const width = Number(window.toTimestamp) - Number(window.fromTimestamp) + 1
      return { symbol, ...window, interval: String(Math.max(interval, Math.ceil(width / 250))), ...(fill === undefined ? {} : { fill }) }
    })
  const queryArb = fc.record({ form: fc.oneof(latest, asOf, several, range), fields: fieldsArb })
    .map(({ form, fields }): Params => ({ ...form, ...(fields === undefined ? {} : { fields }), validUntil: 'true' }))
  const batchArb = fc.record({
    symbols: fc.subarray([...data.symbols], { minLength: 1 }),
    times: fc.uniqueArray(timeArb, { minLength: 1, maxLength: 8 }),
    direction: fc.constantFrom('before' as const, 'after' as const, 'nearest' as const),
    tolerance: fc.option(fc.integer({ min: 0, max: span }), { nil: undefined }),
  })
  return fc.record({
    data: fc.constant(data),
    queries: fc.array(queryArb, { minLength: 1, maxLength: 6 }),
    probes: fc.array(timeArb, { minLength: 1, maxLength: 6 }),
    batch: batchArb,
    shape: fc.nat({ max: STORE_SHAPES.length - 1 }),
  })
})

function show(params: Params): string {
  return new URLSearchParams(params as Record<string, string>).toString()
}

/** The model's result with the same keys in the same order (toEqual ignores key order; validUntil must be last). */
function expectSame(actual: ModelResult, expected: ModelResult, label: string): void {
  expect(actual, label).toEqual(expected)
  expect(JSON.stringify(actual), label).toBe(JSON.stringify(expected))
}

/** Each symbol's records in force by their windows: the one with `timestamp <= t < validUntil` (null: no end). */
function inForceByWindows(records: readonly (PriceRecord & { validUntil: number | null })[], t: number): string | undefined {
  const found = records.filter((r) => r.timestamp <= t && (r.validUntil === null || t < r.validUntil))
  expect(found.length).toBeLessThanOrEqual(1)
  return found[0]?.id
}

describe('validUntil vs the reference model', () => {
  it('parseQuery + executeQuery over an array answer what the model answers, for every record form', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, queries }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        for (const params of queries) {
          const expected = referenceQuery(stored, params, config)
          const actual = await outcomeOf(() => executeQuery(parseQuery(params, config), new ArraySource(stored, { batchSize: 3 }), LIMITS))
          expectSame(actual, expected, show(params))
        }
      }),
      { seed: SEED, numRuns: Math.ceil(200 * scale) },
    )
  }, SHRINK_TIMEOUT)

  it('a record\'s window holds T exactly when the as-of lookup at T picks it', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, probes }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const source = new ArraySource(stored, { batchSize: 3 })
        for (const symbol of data.symbols) {
          const all = await executeQuery(parseQuery({ symbol, limit: '3000', validUntil: 'true' }, config), source, LIMITS) as (PriceRecord & { validUntil: number | null })[]
          for (const t of probes) {
            const asOf = await executeQuery(parseQuery({ symbol, toTimestamp: String(t) }, config), source, LIMITS) as PriceRecord[]
            expect(inForceByWindows(all, t), `${symbol} at ${t}`).toBe(asOf[0]?.id)
          }
        }
      }),
      { seed: SEED + 1, numRuns: Math.ceil(100 * scale) },
    )
  }, SHRINK_TIMEOUT)

  describe.each(backends)('a store on $name', (backend) => {
    it('store.query and cursor walks answer what the model answers', async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArb, fc.integer({ min: 1, max: 4 }), async ({ data, queries, batch, shape }, pageSize) => {
          const stored = storedRecords(data.records, TEST_PROVIDER)
          const store = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER, limits: LIMITS, ...STORE_SHAPES[shape] })
          try {
            await store.putMany(data.records)
            for (const params of queries) {
              const expected = referenceQuery(stored, params, config)
              expectSame(await outcomeOf(() => store.query(params)), expected, show(params))
              // Lists without an offset or a direction page by cursor: the pages joined are the whole answer.
              if (!('answer' in expected) || !('symbol' in params) || 'offset' in params || 'direction' in params || 'tolerance' in params) continue
              if (!('limit' in params) && !('interval' in params)) continue
              const whole = referenceQuery(stored, { ...params, ...('interval' in params ? {} : { limit: '3000' }) }, config)
              if (!('answer' in whole)) continue
              const walked: unknown[] = []
              let cursor = ''
              do {
                const page = await store.page({ ...params, limit: String(pageSize), cursor })
                walked.push(...(page.answer as unknown[]))
                cursor = page.next ?? ''
              } while (cursor !== '')
              expect(JSON.stringify(walked), `pages of ${show(params)}`).toBe(JSON.stringify(whole.answer))
            }
            // Batch as-of: each entry's record with its validUntil, the rest as the batch model answers.
            const { tolerance, ...asked } = batch
            const answer = await store.batchAsOf({ ...asked, ...(tolerance === undefined ? {} : { tolerance }), validUntil: true })
            const model = referenceBatchAsOf(stored, batch.symbols, batch.times, batch.direction, tolerance)
            for (const symbol of Object.keys(model)) {
              for (const time of Object.keys(model[symbol]!)) {
                const entry = model[symbol]![time]!
                model[symbol]![time] = entry === null ? null : { ...entry, record: { ...entry.record, validUntil: referenceValidUntil(stored, entry.record) } }
              }
            }
            expect(JSON.stringify(answer), `batch ${JSON.stringify(batch)}`).toBe(JSON.stringify(model))
          } finally {
            await store.close()
          }
        }),
        { seed: SEED + 2, numRuns: Math.ceil(backend.numRuns * scale) },
      )
    }, SHRINK_TIMEOUT)
  })
})
