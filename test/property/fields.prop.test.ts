import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { PriceStore, type QueryParams } from '../../src/index.js'
import { executeQuery, parseQuery } from '../../src/engine.js'
import { withFieldsArb } from '../../src/testing/field-arbitraries.js'
import { rawEntriesArb, renderParamsArb, showParams } from '../../src/testing/query-arbitraries.js'
import { dataSetArb, TEST_LIMITS } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { NearNumber, outcomeOf, referenceQuery, storedRecords, type ModelResult } from '../../src/testing/reference-model.js'
import { ArraySource } from '../support/array-source.js'

// `fields` on every form: the engine, the store and the HTTP service against the reference model.

const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
// FC_SCALE=10 npx vitest run test/property multiplies every run count, for a deeper search before a release.
const scale = Number(process.env['FC_SCALE']) || 1
// Long enough for fast-check to finish shrinking a failure and print its seed (a passing run takes seconds).
const SHRINK_TIMEOUT = 300_000
// Fixed, so a run never depends on luck; FC_SEED explores others.
const SEED = Number(process.env['FC_SEED'] ?? 2323)

/** A data set and parameter sets over it, each with a `fields` entry (valid or not, rarely repeated). */
const scenarioArb = dataSetArb.chain((data) =>
  fc.record({
    data: fc.constant(data),
    queries: fc.array(rawEntriesArb(data).chain(withFieldsArb).chain(renderParamsArb), { minLength: 1, maxLength: 6 }),
  }),
)

/** Every object's keys, all the way down: toEqual ignores key order, and a selection must keep the record's. */
function deepKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepKeys)
  if (typeof value !== 'object' || value === null || value instanceof NearNumber) return null
  return Object.keys(value).map((key) => [key, deepKeys((value as Record<string, unknown>)[key])])
}

function expectSameOutcome(actual: ModelResult, expected: ModelResult, label: string): void {
  expect(actual, label).toEqual(expected)
  if ('answer' in actual && 'answer' in expected) expect(deepKeys(actual.answer), label).toEqual(deepKeys(expected.answer))
}

/** The outcome an HTTP answer stands for: the parsed body, or the error's code (details are checked in the engine's runs). */
async function httpOutcome(server: RunningServer, params: QueryParams): Promise<ModelResult> {
  const search = params instanceof URLSearchParams ? params : toSearch(params)
  const response = await fetch(`${server.url}/prices?${search}`)
  const body = JSON.parse(await response.text()) as unknown
  if (response.status === 200) return { answer: body as never }
  return { error: (body as { error: { code: never } }).error.code }
}

function toSearch(params: Readonly<Record<string, string | readonly string[] | undefined>>): URLSearchParams {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) for (const one of value === undefined ? [] : typeof value === 'string' ? [value] : value) search.append(name, one)
  return search
}

/** Whether every name and value of a parameter set is well-formed Unicode, so that a URL carries it unchanged. */
function urlSafe(params: QueryParams): boolean {
  // URLSearchParams made its values well-formed already (the engine saw the same); a plain object did not.
  if (params instanceof URLSearchParams) return true
  for (const [name, value] of Object.entries(params)) {
    if (!name.isWellFormed() || ![value ?? []].flat().every((one) => one.isWellFormed())) return false
  }
  return true
}

/** The model's outcome as HTTP can show it: an error is its code alone. */
function asHttp(result: ModelResult): ModelResult {
  return 'error' in result ? { error: result.error } : result
}

describe('fields selection vs reference model', () => {
  it('parseQuery + executeQuery answer exactly what the model answers, for random selections on every form', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, queries }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        for (const params of queries) {
          const expected = referenceQuery(stored, params, config)
          const actual = await outcomeOf(() => executeQuery(parseQuery(params, config), new ArraySource(stored, { batchSize: 3 }), TEST_LIMITS))
          expectSameOutcome(actual, expected, showParams(params))
        }
      }),
      { seed: SEED, numRuns: Math.ceil(200 * scale) },
    )
  }, SHRINK_TIMEOUT)

  describe('a store and its HTTP service', () => {
    let server: RunningServer
    let current: PriceStore | undefined
    // One server for every run; each run swaps the store it answers from.
    const proxy = {
      query: (params: QueryParams) => (current as PriceStore).query(params),
      plan: (params: QueryParams) => (current as PriceStore).plan(params),
      run: (plan: Parameters<PriceStore['run']>[0]) => (current as PriceStore).run(plan),
      runDeferred: (plan: Parameters<PriceStore['runDeferred']>[0]) => (current as PriceStore).runDeferred(plan),
    }
    beforeAll(async () => {
      // streamAbove is the handler's: long answers go out piece by piece, so both paths are compared.
      server = await startServer({ store: proxy })
    })
    afterAll(async () => {
      await server?.close()
    })

    it('store.query and GET /prices answer what the model answers', async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArb, async ({ data, queries }) => {
          const stored = storedRecords(data.records, TEST_PROVIDER)
          const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
          current = store
          try {
            await store.putMany(data.records)
            for (const params of queries) {
              const expected = referenceQuery(stored, params, config)
              expectSameOutcome(await outcomeOf(() => store.query(params)), expected, showParams(params))
              // A lone surrogate cannot travel in a URL (it arrives as U+FFFD): such sets are the engine's alone.
              if (!urlSafe(params)) continue
              expectSameOutcome(await httpOutcome(server, params), asHttp(expected), `HTTP ${showParams(params)}`)
            }
          } finally {
            current = undefined
            await store.close()
          }
        }),
        { seed: SEED + 1, numRuns: Math.ceil(40 * scale) },
      )
    }, SHRINK_TIMEOUT)
  })
})
