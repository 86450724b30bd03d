import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPriceStoreError, PriceStore } from '../../src/index.js'
import { dataSetArb, TEST_LIMITS } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { storedRecords } from '../../src/testing/reference-model.js'
import { referenceBatchAsOf } from '../../src/testing/reference-forms/batch-asof.js'
import { runBatch, toBatchQuery } from '../../src/engine/forms/batch.js'
import { MemoryLevel } from 'memory-level'
import { toExactJson } from '../../src/rules/exact-json.js'
import { startServer } from '../../src/adapters/http/node.js'
import { ArraySource } from '../support/array-source.js'
import { propertyBackends } from './backends.js'

// Batch as-of: the store (both backends) against the independent reference model, on fixed seeds.
const SEED = Number(process.env['FC_SEED'] ?? 2424)
const HOUR = 3_600_000
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))
const { backends } = propertyBackends('batch-asof', { memory: 40, classic: 10 })

/** A data set, and batches aimed at its timestamps, next to them, before the first and after the last. */
const scenarioArb = dataSetArb.chain((data) => {
  // Next to stored timestamps, and on the hour edges around them (the store's walk lists one hour at a time).
  const near = data.timestamps
    .flatMap((t) => [t - 1, t, t + 1, Math.floor(t / HOUR) * HOUR - 1, Math.floor(t / HOUR) * HOUR, (Math.floor(t / HOUR) + 1) * HOUR])
    .filter((t) => t >= 0 && t <= Number.MAX_SAFE_INTEGER)
  const timeArb = fc.oneof(fc.constantFrom(...near, 0), fc.integer({ min: 0, max: Math.min(Number.MAX_SAFE_INTEGER, Math.max(...data.timestamps) + 2 * data.interval) }))
  const batchArb = fc.record({
    symbols: fc.uniqueArray(fc.constantFrom(...data.symbols, 'NOPE'), { minLength: 1, maxLength: 5 }),
    times: fc.array(timeArb, { minLength: 1, maxLength: 8 }),
    direction: fc.constantFrom('before' as const, 'after' as const, 'nearest' as const),
    tolerance: fc.option(fc.oneof(fc.constant(0), fc.constant(1), fc.constant(data.interval), fc.nat(3 * data.interval)), { nil: undefined }),
  })
  return fc.record({ data: fc.constant(data), batches: fc.array(batchArb, { minLength: 1, maxLength: 4 }) })
})
type Batch = (typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never)['batches'][number]

/** A batch's options from an arbitrary batch. */
function optionsOf(batch: Batch) {
  return { symbols: batch.symbols, times: batch.times, direction: batch.direction, ...(batch.tolerance === undefined ? {} : { tolerance: batch.tolerance }) }
}

describe('batch as-of: the engine vs reference model (array source, generic seeks)', () => {
  it('answers every entry as the model does', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, batches }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const source = new ArraySource(stored, { batchSize: 2 })
        for (const batch of batches) {
          const actual = await runBatch(toBatchQuery(optionsOf(batch), TEST_LIMITS), source)
          expect(plain(actual), JSON.stringify(optionsOf(batch))).toEqual(plain(referenceBatchAsOf(stored, batch.symbols, batch.times, batch.direction, batch.tolerance)))
        }
      }),
      { numRuns: 60, seed: SEED },
    )
  })
})

describe('batch as-of over HTTP (POST /prices/batch, JSON and NDJSON) vs reference model', () => {
  it('answers every entry as the model does', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.boolean(), async ({ data, batches }, ndjson) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
        const server = await startServer({ store })
        try {
          await store.putMany(data.records)
          for (const batch of batches) {
            const response = await fetch(`${server.url}/prices/batch`, {
              method: 'POST',
              body: JSON.stringify(optionsOf(batch)),
              headers: { 'content-type': 'application/json', ...(ndjson ? { accept: 'application/x-ndjson' } : {}) },
            })
            expect(response.status).toBe(200)
            // Exact JSON on both sides: HTTP writes values as stored (-0 stays -0, which JSON.stringify would not keep).
            const model = toExactJson(referenceBatchAsOf(stored, batch.symbols, batch.times, batch.direction, batch.tolerance))
            if (!ndjson) {
              expect(JSON.parse(await response.text()), JSON.stringify(optionsOf(batch))).toEqual(JSON.parse(model))
              continue
            }
            // One line per entry: rebuilt into the keyed shape, in the same order.
            // Symbols are data (`constructor`, `__proto__`): plain own entries, as the answer sets them.
            const keyed: Record<string, Record<string, unknown>> = {}
            for (const line of (await response.text()).trimEnd().split('\n')) {
              const { symbol, time, record, age } = JSON.parse(line) as { symbol: string; time: number; record: unknown; age: number | null }
              if (!Object.hasOwn(keyed, symbol)) Object.defineProperty(keyed, symbol, { value: {}, enumerable: true, writable: true, configurable: true })
              keyed[symbol]![String(time)] = record === null ? null : { record, age }
            }
            expect(toExactJson(keyed), JSON.stringify(optionsOf(batch))).toBe(model)
          }
        } finally {
          await server.close()
          await store.close()
        }
      }),
      { numRuns: 15, seed: SEED },
    )
  }, 120_000)
})

describe.each(backends)('batch as-of vs reference model ($name)', (backend) => {
  it('answers every entry as the model does (ties, times before the first record, tolerance edges, directions, sealed and open hours)', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.constantFrom(0, undefined), async ({ data, batches }, openBytes) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        // openBytes 0 seals every hour after each write: two writes give sealed chunks with delta parts and open rows.
        const store = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER, limits: TEST_LIMITS, ...(openBytes === undefined ? {} : { openBytes }) })
        try {
          const half = Math.floor(data.records.length / 2)
          await store.putMany(data.records.slice(0, half))
          await store.putMany(data.records.slice(half))
          for (const batch of batches) {
            const options = { symbols: batch.symbols, times: batch.times, direction: batch.direction, ...(batch.tolerance === undefined ? {} : { tolerance: batch.tolerance }) }
            const actual = await store.batchAsOf(options)
            expect(JSON.parse(JSON.stringify(actual)), JSON.stringify(options)).toEqual(
              JSON.parse(JSON.stringify(referenceBatchAsOf(stored, batch.symbols, batch.times, batch.direction, batch.tolerance))),
            )
          }
        } finally {
          await store.close()
        }
      }),
      { numRuns: backend.numRuns, seed: SEED },
    )
  }, 120_000)
})

describe('batch as-of: bad input', () => {
  const cases: readonly [string, Record<string, unknown>][] = [
    ['empty symbols', { symbols: [], times: [1] }],
    ['empty times', { symbols: ['A'], times: [] }],
    ['times not integers', { symbols: ['A'], times: [1.5] }],
    ['negative time', { symbols: ['A'], times: [-1] }],
    ['times as text', { symbols: ['A'], times: ['1'] }],
    ['both times and grid', { symbols: ['A'], times: [1], grid: { from: 0, to: 1, interval: 1 } }],
    ['neither times nor grid', { symbols: ['A'] }],
    ['too many times', { symbols: ['A'], times: Array.from({ length: 10_001 }, (_, i) => i) }],
    ['too many entries', { symbols: Array.from({ length: 11 }, (_, i) => `S${i}`), times: Array.from({ length: 10_000 }, (_, i) => i) }],
    ['grid too long', { symbols: ['A'], grid: { from: 0, to: 10_000, interval: 1 } }],
    ['grid interval zero', { symbols: ['A'], grid: { from: 0, to: 10, interval: 0 } }],
    ['repeated symbols', { symbols: ['A', 'A'], times: [1] }],
  ]
  it.each(cases)('%s → PRICE_INVALID_QUERY', async (_, options) => {
    const store = await PriceStore.open(propertyBackendsMemory(), { provider: TEST_PROVIDER, limits: { ...TEST_LIMITS, maxSymbols: 1000 } })
    try {
      const error = await store.batchAsOf(options as never).then(() => undefined, (e: unknown) => e)
      expect(isPriceStoreError(error) && error.code).toBe('PRICE_INVALID_QUERY')
    } finally {
      await store.close()
    }
  })

  it('an aborted signal stops the batch with PRICE_ABORTED', async () => {
    const store = await PriceStore.open(propertyBackendsMemory(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
    try {
      const controller = new AbortController()
      controller.abort()
      const error = await store.batchAsOf({ symbols: ['A'], times: [1], signal: controller.signal }).then(() => undefined, (e: unknown) => e)
      expect(isPriceStoreError(error) && error.code).toBe('PRICE_ABORTED')
    } finally {
      await store.close()
    }
  })

  it('a grid gives the same answer as its times listed', async () => {
    const store = await PriceStore.open(propertyBackendsMemory(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
    try {
      const grid = await store.batchAsOf({ symbols: ['A'], grid: { from: 10, to: 35, interval: 10 } })
      expect(Object.keys(grid['A']!)).toEqual(['10', '20', '30'])
      expect(grid).toEqual(await store.batchAsOf({ symbols: ['A'], times: [30, 10, 20, 10] }))
    } finally {
      await store.close()
    }
  })
})

function propertyBackendsMemory() {
  return backends[0]!.location()
}
