/**
 * store.prune against the naive reference model: random records across
 * sealed and open hours (late records and rewrites included, whatever the
 * memory settings), random prunes (of every symbol or one, `before` on hour
 * edges, inside hours, next to written timestamps, 0 or past everything)
 * between the batches; after each prune, its result (and its dry run's)
 * equals the model's, and every query form over the store equals the model
 * over the records left, also after more writes and after reopening.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import type { PriceRecord } from '../../src/index.js'
import { rarely, symbolArb } from '../../src/testing/record-arbitraries.js'
import { T0, TEST_PROVIDER } from '../../src/testing/records.js'
import { referencePrune, storedRecords } from '../../src/testing/reference-model.js'
import { HOUR, HOURS, HOURS_LIMITS, expectHoursHold, hoursDataArb, hoursQueriesArb, memorySettingsArb, settle, storeOptionsFor } from './hours-model.js'
import type { HoursData } from './hours-model.js'
import { propertyBackends } from './backends.js'

const scale = Number(process.env['FC_SCALE']) || 1
const SHRINK_TIMEOUT = 300_000

const { backends: BACKENDS } = propertyBackends('prune-prop', { memory: 30, classic: 10 })

/** A prune as generated: after which batch it runs, its `before`, and its symbol (or every symbol). */
interface PruneCall {
  readonly after: number
  readonly before: number
  readonly symbol: string | undefined
}

function pruneCallArb(data: HoursData): fc.Arbitrary<PruneCall> {
  const timestamps = [...new Set(data.batches.flat().map((r) => r.timestamp))]
  const before = fc.oneof(
    { arbitrary: fc.integer({ min: 0, max: HOURS + 1 }).map((h) => T0 + h * HOUR), weight: 2 },
    { arbitrary: fc.integer({ min: -HOUR, max: (HOURS + 1) * HOUR }).map((offset) => Math.max(0, T0 + offset)), weight: 3 },
    { arbitrary: fc.tuple(fc.constantFrom(...timestamps), fc.constantFrom(-1, 0, 1)).map(([t, d]) => Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, t + d))), weight: 3 },
    { arbitrary: fc.constantFrom(0, Number.MAX_SAFE_INTEGER), weight: 1 },
  )
  const symbol = rarely(fc.oneof({ arbitrary: fc.constantFrom(...data.symbols), weight: 4 }, { arbitrary: symbolArb, weight: 1 }), 2)
  return fc.record({ after: fc.nat({ max: data.batches.length - 1 }), before, symbol }).map(({ after, before, symbol }) => ({ after, before, symbol: symbol ?? undefined }))
}

// A prune runs after a batch: scenarios whose batches all came out empty have nowhere to put one.
const scenarioArb = hoursDataArb.filter((data) => data.batches.length > 0).chain((data) =>
  fc.record({
    data: fc.constant(data),
    queries: hoursQueriesArb(data),
    prunes: fc.array(pruneCallArb(data), { minLength: 1, maxLength: 3 }),
    settings: memorySettingsArb,
    reopenSettings: memorySettingsArb,
  }),
)

const keyOf = (r: PriceRecord): string => `${r.symbol}\u0000${r.timestamp}\u0000${r.id}`

describe.each(BACKENDS)('store.prune on $name vs reference model', (backend) => {
  it('after random prunes between batches, every query form equals the model over the records left', async () => {
    const seen = { runs: 0, removed: 0, cutHours: 0 }
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, queries, prunes, settings, reopenSettings }) => {
        seen.runs++
        const location = backend.location()
        // The model: the records the writes and prunes so far leave, by key.
        const model = new Map<string, PriceRecord>()
        const store = await PriceStore.open(location, storeOptionsFor(settings, HOURS_LIMITS))
        try {
          for (const [i, batch] of data.batches.entries()) {
            await store.putMany(batch)
            for (const record of storedRecords(batch, TEST_PROVIDER)) model.set(keyOf(record), record)
            if (data.settle[i] === true) await settle()
            for (const call of prunes.filter((p) => p.after === i)) {
              const options = { before: call.before, ...(call.symbol === undefined ? {} : { symbol: call.symbol }) }
              const label = `prune ${JSON.stringify(options)} after batch ${i + 1} (${JSON.stringify(settings)})`
              const expected = referencePrune([...model.values()], call.before, call.symbol)
              expect(await store.prune({ ...options, dryRun: true }), `${label}, dry run`).toEqual(expected.result)
              expect(await store.prune(options), label).toEqual(expected.result)
              model.clear()
              for (const record of expected.left) model.set(keyOf(record), record)
              seen.removed += expected.result.records
              if (call.before % HOUR !== 0 && expected.result.records > 0) seen.cutHours++
              await expectHoursHold(store, [...model.values()], data, queries, label)
            }
          }
          await expectHoursHold(store, [...model.values()], data, queries, 'after every batch')
        } finally {
          await store.close()
        }
        const reopened = await PriceStore.open(location, storeOptionsFor(reopenSettings, HOURS_LIMITS))
        try {
          await expectHoursHold(reopened, [...model.values()], data, queries, `after reopening (${JSON.stringify(reopenSettings)})`)
        } finally {
          await reopened.close()
        }
      }),
      { numRuns: Math.ceil(backend.numRuns * scale) },
    )
    // Not vacuous: prunes removed records, some cutting an hour in two.
    if (backend.name === 'memory-level') {
      expect(seen.removed, JSON.stringify(seen)).toBeGreaterThan(0)
      expect(seen.cutHours, JSON.stringify(seen)).toBeGreaterThan(0)
    }
  }, SHRINK_TIMEOUT)
})
