import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPriceStoreError, PriceStore, type PriceAnswer, type QueryParams } from '../../src/index.js'
import {
  badRecordArb,
  dataSetArb,
  inputRecordArb,
  queryParamsArb,
  showParams,
  splitBatches,
  TEST_LIMITS,
  typedCallArb,
  typedCallParams,
  type DataSet,
  type TypedCall,
} from '../fixtures/arbitraries.js'
import { TEST_PROVIDER, type InputRecord } from '../fixtures/records.js'
import { compareUtf8, keyOrder, outcomeOf, referenceQuery, storedRecords, type ModelResult } from '../fixtures/reference-model.js'

const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
// FC_SCALE=10 npx vitest run test/property multiplies every run count, for a deeper search before a release.
const scale = Number(process.env['FC_SCALE']) || 1
/** Hot-tail sizes: off, tiny (most reads go to disk), and the default (everything cached). */
const CACHE_SIZES = [0, 1, 2, 5, 128] as const
const optionsFor = (recordsPerSymbol: number) => ({ provider: TEST_PROVIDER, limits: TEST_LIMITS, cache: { recordsPerSymbol } })

let root: string
let runs = 0
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'price-store-prop-'))
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

interface Backend {
  readonly name: string
  readonly numRuns: number
  /** A fresh, empty location: a MemoryLevel or a new directory. */
  location(): MemoryLevel<string, string> | string
}

// Long enough for fast-check to finish shrinking a failure and print its seed (a passing run takes seconds).
const SHRINK_TIMEOUT = 300_000

const BACKENDS: readonly Backend[] = [
  { name: 'memory-level', numRuns: 40, location: () => new MemoryLevel() },
  { name: 'classic-level', numRuns: 25, location: () => join(root, `run-${runs++}`) },
]

function expectSameOutcome(actual: ModelResult, expected: ModelResult, label: string): void {
  expect(actual, label).toEqual(expected)
  if ('answer' in actual && 'answer' in expected) expect(keyOrder(actual.answer), label).toEqual(keyOrder(expected.answer))
}

function* iterate<T>(items: readonly T[]): Generator<T> {
  yield* items
}

/** Writes the records in the given batches, sometimes as a generator (putMany takes any iterable), single records with put(). */
async function writeBatches(store: PriceStore, batches: readonly (readonly InputRecord[])[], asGenerator: boolean): Promise<void> {
  for (const batch of batches) {
    if (batch.length === 1 && asGenerator) {
      await store.put(batch[0])
      continue
    }
    const written = await store.putMany(asGenerator ? iterate(batch) : batch)
    expect(written).toBe(batch.length)
  }
}

function callTyped(store: PriceStore, call: TypedCall): Promise<PriceAnswer> {
  switch (call.method) {
    case 'latest':
      return call.opts === undefined ? store.latest(call.symbol) : store.latest(call.symbol, call.opts)
    case 'several':
      return store.several(call.symbols, call.opts)
    case 'range':
      return store.range(call.symbol, call.opts)
  }
}

/** Compares every raw query, every typed call and symbols() with the model over `writes`. */
async function expectStoreMatchesModel(
  store: PriceStore,
  writes: readonly InputRecord[],
  queries: readonly QueryParams[],
  typed: readonly TypedCall[],
): Promise<void> {
  const stored = storedRecords(writes, TEST_PROVIDER)
  for (const params of queries) {
    expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(stored, params, config), showParams(params))
  }
  for (const call of typed) {
    const params = typedCallParams(call)
    expectSameOutcome(await outcomeOf(() => callTyped(store, call)), referenceQuery(stored, params, config), `${call.method} ${JSON.stringify(call)}`)
  }
  expect(await store.symbols()).toEqual([...new Set(stored.map((r) => r.symbol))].sort(compareUtf8))
}

/** Params that together show everything a store holds (pages of 50, every symbol). */
function dumpQueries(data: DataSet): QueryParams[] {
  const pages = data.symbols.flatMap((symbol) => ['0', '50'].map((offset) => ({ symbol, limit: '50', offset })))
  return [{}, ...pages, ...data.symbols.map((symbol) => ({ symbol, interval: '1', fromTimestamp: '0', toTimestamp: '9007199254740991', limit: '10' }))]
}

const scenarioArb = dataSetArb.chain((data) =>
  fc.record({
    data: fc.constant(data),
    cuts: fc.array(fc.nat(), { maxLength: 4 }),
    asGenerator: fc.boolean(),
    queries: fc.array(queryParamsArb(data), { minLength: 1, maxLength: 6 }),
    typed: fc.array(typedCallArb(data), { maxLength: 4 }),
    cache: fc.constantFrom(...CACHE_SIZES),
  }),
)

async function withStore<T>(location: MemoryLevel<string, string> | string, cache: number, use: (store: PriceStore) => Promise<T>): Promise<T> {
  const store = await PriceStore.open(location, optionsFor(cache))
  try {
    return await use(store)
  } finally {
    await store.close()
  }
}

describe.each(BACKENDS)('PriceStore on $name vs reference model', (backend) => {
  it('query() and the typed methods answer what the model answers after batched writes', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, cuts, asGenerator, queries, typed, cache }) => {
        await withStore(backend.location(), cache, async (store) => {
          // Asking after every batch loads the hot tails early, so later batches must be merged into them correctly.
          const written: InputRecord[] = []
          for (const batch of splitBatches(data.records, cuts)) {
            await writeBatches(store, [batch], asGenerator)
            written.push(...batch)
            await expectStoreMatchesModel(store, written, queries, typed)
          }
          await expectStoreMatchesModel(store, data.records, queries, typed)
        })
      }),
      { numRuns: Math.ceil(backend.numRuns * scale) },
    )
  }, SHRINK_TIMEOUT)

  it('a batch holding invalid records is rejected whole, naming the first bad record and its field', async () => {
    const arb = dataSetArb.chain((data) => {
      const valid = inputRecordArb(data.symbols, data.interval)
      return fc.record({
        data: fc.constant(data),
        batch: fc.array(valid, { maxLength: 12 }),
        bad: fc.array(fc.tuple(fc.nat(), badRecordArb(valid)), { minLength: 1, maxLength: 2 }),
        cache: fc.constantFrom(...CACHE_SIZES),
      })
    })
    await fc.assert(
      fc.asyncProperty(arb, async ({ data, batch, bad, cache }) => {
        const mixed: unknown[] = [...batch]
        for (const [at, { record }] of bad) mixed.splice(at % (mixed.length + 1), 0, record)
        const firstBad = mixed.findIndex((r) => bad.some(([, b]) => b.record === r))
        const expectedField = bad.find(([, b]) => b.record === mixed[firstBad])![1].field

        await withStore(backend.location(), cache, async (store) => {
          await writeBatches(store, [data.records], false)
          // Warm the hot tails first: a rejected batch must not leak into them either.
          await expectStoreMatchesModel(store, data.records, dumpQueries(data), [])
          const error = await store.putMany(mixed).then(
            () => undefined,
            (err: unknown) => err,
          )
          expect(isPriceStoreError(error, 'PRICE_INVALID_RECORD'), String(error)).toBe(true)
          const details = (error as { details: { index?: number; field?: string } }).details
          expect({ index: details.index, field: details.field }).toEqual({ index: firstBad, field: expectedField })
          await expectStoreMatchesModel(store, data.records, dumpQueries(data), [])
        })
      }),
      { numRuns: Math.ceil(backend.numRuns * scale) },
    )
  }, SHRINK_TIMEOUT)

  it('a query running while a batch is written sees all of the batch or none of it', async () => {
    const arb = scenarioArb.chain((s) => fc.record({ s: fc.constant(s), split: fc.nat({ max: s.data.records.length }) }))
    await fc.assert(
      fc.asyncProperty(arb, async ({ s: { data, queries, cache }, split }) => {
        const before = data.records.slice(0, split)
        const asked = [...queries, ...dumpQueries(data)]
        await withStore(backend.location(), cache, async (store) => {
          await writeBatches(store, [before], false)
          const early = asked.map((params) => outcomeOf(() => store.query(params)))
          const writing = store.putMany(data.records.slice(split))
          const late = asked.map((params) => outcomeOf(() => store.query(params)))
          await writing
          const [answersEarly, answersLate] = [await Promise.all(early), await Promise.all(late)]
          const storedBefore = storedRecords(before, TEST_PROVIDER)
          const storedAfter = storedRecords(data.records, TEST_PROVIDER)
          asked.forEach((params, i) => {
            const either = [referenceQuery(storedBefore, params, config), referenceQuery(storedAfter, params, config)]
            for (const actual of [answersEarly[i]!, answersLate[i]!]) expect(either, showParams(params)).toContainEqual(actual)
          })
        })
      }),
      { numRuns: Math.ceil((backend.numRuns / 2) * scale) },
    )
  }, SHRINK_TIMEOUT)

  it('strings holding lone surrogates outside id and symbol come back unchanged ("any string")', async () => {
    const lone = fc.constantFrom('\uD800', 'a\uDC00', '\uDBFF\uDBFF', '\uDFFF\uD800x')
    const arb = dataSetArb.chain((data) =>
      fc.record({
        data: fc.constant(data),
        wild: fc.array(
          fc.tuple(inputRecordArb(data.symbols, data.interval), lone, fc.constantFrom('signature', 'permawebTx', 'version', 'note', 'source')),
          { minLength: 1, maxLength: 5 },
        ),
        cache: fc.constantFrom(...CACHE_SIZES),
      }),
    )
    await fc.assert(
      fc.asyncProperty(arb, async ({ data, wild, cache }) => {
        const records = [
          ...data.records,
          ...wild.map(([r, text, field]): InputRecord => (field === 'source' ? { ...r, source: { [text]: text } } : { ...r, [field]: text })),
        ]
        await withStore(backend.location(), cache, async (store) => {
          await writeBatches(store, [records], false)
          await expectStoreMatchesModel(store, records, dumpQueries(data), [])
        })
      }),
      { numRuns: Math.ceil(10 * scale) },
    )
  }, SHRINK_TIMEOUT)
})

describe('PriceStore on classic-level: durability', () => {
  it('data written before close is all there after reopen, and later writes merge with it', async () => {
    const arb = scenarioArb.chain((s) =>
      fc.record({ s: fc.constant(s), split: fc.nat({ max: s.data.records.length }), caches: fc.array(fc.constantFrom(...CACHE_SIZES), { minLength: 3, maxLength: 3 }) }),
    )
    await fc.assert(
      fc.asyncProperty(arb, async ({ s: { data, cuts, asGenerator, queries, typed }, split, caches: [c0, c1, c2] }) => {
        const dir = join(root, `run-${runs++}`)
        const before = data.records.slice(0, split)
        const asked = [...dumpQueries(data), ...queries]
        await withStore(dir, c0!, (store) => writeBatches(store, splitBatches(before, cuts), asGenerator))
        await withStore(dir, c1!, async (store) => {
          await expectStoreMatchesModel(store, before, asked, typed)
          await writeBatches(store, [data.records.slice(split)], false)
        })
        await withStore(dir, c2!, (store) => expectStoreMatchesModel(store, data.records, asked, typed))
      }),
      { numRuns: Math.ceil(15 * scale) },
    )
  }, SHRINK_TIMEOUT)
})
