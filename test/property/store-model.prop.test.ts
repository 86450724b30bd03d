import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isPriceStoreError, PriceStore, type NewPriceRecord, type QueryParams } from '../../src/index.js'
import { readHeadsPeriod, readLogKey } from '../../src/keys/key-layout.js'
import { queryParamsArb, showParams } from '../../src/testing/query-arbitraries.js'
import { badRecordArb, dataSetArb, inputRecordArb, splitBatches, TEST_LIMITS, type DataSet } from '../../src/testing/record-arbitraries.js'
import { T0, TEST_PROVIDER, type InputRecord } from '../../src/testing/records.js'
import { compareRecords, compareUtf8, outcomeOf, referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { typedCallArb, typedCallParams, type TypedCall } from '../../src/testing/typed-call-arbitraries.js'
import { prng } from '../reliability/crash-plan.js'
import {
  HOUR, HOURS_LIMITS, MINUTE, TEN_MINUTES, cacheArb, callTyped, collect, expectHoursMatch, expectSameOutcome, hoursConfig, hoursScenarioArb,
  memorySettingsArb, rangeParams, settle, storeOptionsFor, streamConfig, type MemorySettings, type RangeCall,
} from './hours-model.js'
import { FULL_RUNS } from '../support/full-runs.js'

const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
// FC_SCALE=10 npx vitest run test/property multiplies every run count, for a deeper search before a release.
const scale = Number(process.env['FC_SCALE']) || 1
// A third of the runs in `npm test` (but for the property that counts what its runs covered); the slow set
// (`npm run test:slow`, run by CI too) makes them all.
const runScale = scale * (FULL_RUNS ? 1 : 1 / 3)


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
const SHRINK_TIMEOUT = 300_000 * scale
// A run that hangs fails after a minute (and is shrunk) rather than holding the test until vitest gives up,
// and a long shrink stops before SHRINK_TIMEOUT: either way the report names the seed and a counterexample.
fc.configureGlobal({ ...fc.readConfigureGlobal(), timeout: 60_000, interruptAfterTimeLimit: SHRINK_TIMEOUT - 30_000, markInterruptAsFailure: true })

const BACKENDS: readonly Backend[] = [
  { name: 'memory-level', numRuns: 40, location: () => new MemoryLevel() },
  { name: 'classic-level', numRuns: 25, location: () => join(root, `run-${runs++}`) },
]


function* iterate<T>(items: readonly T[]): Generator<T> {
  yield* items
}

/** Writes the records in the given batches, sometimes as a generator (putMany takes any iterable), single records with put(). */
async function writeBatches(store: PriceStore, batches: readonly (readonly InputRecord[])[], asGenerator: boolean): Promise<void> {
  for (const batch of batches) {
    if (batch.length === 1 && asGenerator) {
      await store.put(batch[0]!)
      continue
    }
    const written = await store.putMany(asGenerator ? iterate(batch) : batch)
    expect(written).toBe(batch.length)
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
    cache: cacheArb,
  }),
)

async function withStore<T>(location: MemoryLevel<string, string> | string, cache: MemorySettings, use: (store: PriceStore) => Promise<T>): Promise<T> {
  const store = await PriceStore.open(location, storeOptionsFor(cache, TEST_LIMITS))
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
      { numRuns: Math.ceil(backend.numRuns * runScale) },
    )
  }, SHRINK_TIMEOUT)

  it('a batch holding invalid records is rejected whole, naming the first bad record and its field', async () => {
    const arb = dataSetArb.chain((data) => {
      const valid = inputRecordArb(data.symbols, data.interval)
      return fc.record({
        data: fc.constant(data),
        batch: fc.array(valid, { maxLength: 12 }),
        bad: fc.array(fc.tuple(fc.nat(), badRecordArb(valid)), { minLength: 1, maxLength: 2 }),
        cache: cacheArb,
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
          // Bad records on purpose, as a JavaScript caller would pass them: the store checks at run time.
          const error = await store.putMany(mixed as NewPriceRecord[]).then(
            () => undefined,
            (err: unknown) => err,
          )
          expect(isPriceStoreError(error, 'PRICE_INVALID_RECORD'), String(error)).toBe(true)
          const details = (error as { details: { index?: number; field?: string } }).details
          expect({ index: details.index, field: details.field }).toEqual({ index: firstBad, field: expectedField })
          await expectStoreMatchesModel(store, data.records, dumpQueries(data), [])
        })
      }),
      { numRuns: Math.ceil(backend.numRuns * runScale) },
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
      { numRuns: Math.ceil((backend.numRuns / 2) * runScale) },
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
        cache: cacheArb,
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
      { numRuns: Math.ceil(10 * runScale) },
    )
  }, SHRINK_TIMEOUT)
})

describe('PriceStore on classic-level: durability', () => {
  it('data written before close is all there after reopen, and later writes merge with it', async () => {
    const arb = scenarioArb.chain((s) =>
      fc.record({ s: fc.constant(s), split: fc.nat({ max: s.data.records.length }), caches: fc.array(cacheArb, { minLength: 3, maxLength: 3 }) }),
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
      { numRuns: Math.ceil(15 * runScale) },
    )
  }, SHRINK_TIMEOUT)
})


/** What the database holds, for checking that the scenarios really seal and merge: log entries, chunks, and hours with both. */
async function layoutOf(db: MemoryLevel<string, string>): Promise<{ log: number; chunks: number; pendingMerges: number }> {
  const bytes = (name: string) => db.sublevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' })
  const logPeriods = (await bytes('l').keys().all()).map((key) => readLogKey(key).period)
  const headPeriods = new Set((await bytes('h').keys().all()).map(readHeadsPeriod))
  const chunks = (await bytes('c').keys().all()).length
  return { log: logPeriods.length, chunks, pendingMerges: logPeriods.filter((period) => headPeriods.has(period)).length }
}

describe.each(BACKENDS)('PriceStore on $name over several hours (sealing, chunk merges, heads, caches) vs reference model', (backend) => {
  it('every query form equals the model after every batch and after reopening, whatever the memory settings', async () => {
    const seen = { runs: 0, sealed: 0, pendingMerges: 0, openAndSealed: 0 }
    await fc.assert(
      fc.asyncProperty(hoursScenarioArb, async ({ data, queries, settings, reopenSettings }) => {
        const location = backend.location()
        const written: InputRecord[] = []
        seen.runs++
        let sealed = false
        const store = await PriceStore.open(location, storeOptionsFor(settings, HOURS_LIMITS))
        try {
          for (const [i, batch] of data.batches.entries()) {
            expect(await store.putMany(batch)).toBe(batch.length)
            written.push(...batch)
            if (typeof location !== 'string') {
              // Taken before the seals this batch queued have run, as the first queries below see it.
              const layout = await layoutOf(location)
              if (layout.chunks > 0) sealed = true
              if (layout.chunks > 0 && layout.log > 0) seen.openAndSealed++
              seen.pendingMerges += layout.pendingMerges
            }
            if (data.settle[i] === true) await settle()
            await expectHoursMatch(store, written, data, queries, `after batch ${i + 1} of ${data.batches.length} (${JSON.stringify(settings)})`)
          }
        } finally {
          await store.close()
        }
        if (sealed) seen.sealed++
        // Reopened, perhaps with other memory settings: the log is replayed into the open area and the rest read from chunks.
        const reopened = await PriceStore.open(location, storeOptionsFor(reopenSettings, HOURS_LIMITS))
        try {
          await expectHoursMatch(reopened, written, data, queries, `after reopening (${JSON.stringify(reopenSettings)})`)
        } finally {
          await reopened.close()
        }
      }),
      { numRuns: Math.ceil(backend.numRuns * scale) },
    )
    // Not vacuous: hours were sealed, open and sealed hours were read together, and late records waited for a merge.
    if (backend.name === 'memory-level') {
      expect(seen.sealed, JSON.stringify(seen)).toBeGreaterThan(seen.runs / 3)
      expect(seen.openAndSealed, JSON.stringify(seen)).toBeGreaterThan(0)
      expect(seen.pendingMerges, JSON.stringify(seen)).toBeGreaterThan(0)
    }
  }, SHRINK_TIMEOUT)
})

describe.each(BACKENDS)('PriceStore on $name: an hour larger than one chunk part', (backend) => {
  it('sealed in parts, merged with late records and rewrites, every query form equals the model', async () => {
    const arb = fc.record({ seed: fc.integer(), settings: memorySettingsArb, first: fc.integer({ min: 3_000, max: 4_200 }), second: fc.integer({ min: 1_300, max: 2_500 }) })
    await fc.assert(
      fc.asyncProperty(arb, async ({ seed, settings, first, second }) => {
        const random = prng(seed)
        const at = (offset: number): number => T0 + offset
        const small = (timestamp: number, id: string, value: number, symbol = 'BTC'): InputRecord => ({
          id, symbol, provider: TEST_PROVIDER.id, value, signature: `s${value}`, permawebTx: 't', version: '0.4', source: { v: value }, timestamp,
        })
        // Lowercase UUIDs (stored compact in chunks) and plain ids, on timestamps that often tie.
        const idFor = (i: number): string => (i % 3 === 0 ? `0000${i.toString(16).padStart(4, '0')}-aaaa-4bbb-8ccc-${String(i).padStart(12, '0')}` : `r${i}`)
        let offset = 0
        const batch1 = Array.from({ length: first }, (_, i) => {
          offset += Math.floor(random() * 3) === 0 ? 0 : 1 + Math.floor(random() * 700)
          return small(at(Math.min(offset, HOUR - 1)), idFor(i), i)
        })
        const batch2 = Array.from({ length: second }, (_, i) => small(at(Math.floor(random() * HOUR)), idFor(first + i), first + i))
        batch2.push(small(at(HOUR + 5 * TEN_MINUTES), 'next-hour', -1), small(at(HOUR - 1), 'x', -2, 'ETH'))
        const pool = [...batch1, ...batch2]
        const batch3 = Array.from({ length: 60 }, (_, i) => {
          const target = pool[Math.floor(random() * pool.length)]!
          return i % 4 === 0 ? small(at(Math.floor(random() * HOUR)), `late${i}`, 1e6 + i) : { ...target, value: 2e6 + i, signature: `rewrite${i}` }
        })
        // Far enough ahead that the default openBytes seals the big hour too.
        batch3.push(small(at(3 * HOUR), 'later', -3))
        const location = backend.location()
        const written: InputRecord[] = []
        const check = async (store: PriceStore, label: string) => {
          const stored = storedRecords(written, TEST_PROVIDER)
          const btc = stored.filter((r) => r.symbol === 'BTC').sort(compareRecords)
          // Around the first part's end, and across the whole hour.
          const edge = btc[Math.min(btc.length - 1, 4_095)]!.timestamp
          const ranges: RangeCall[] = [
            { symbol: 'BTC', from: edge - 700, to: edge + 700, interval: 1 },
            { symbol: 'BTC', from: T0, to: T0 + HOUR - 1, interval: TEN_MINUTES },
            { symbol: 'BTC', from: T0 + 123_456, to: edge, interval: 7 * MINUTE },
            { symbol: 'BTC', from: 0, to: Number.MAX_SAFE_INTEGER, interval: HOUR },
          ]
          for (const call of ranges) {
            const { symbol, ...opts } = call
            expectSameOutcome(await outcomeOf(() => store.range(symbol, opts)), referenceQuery(stored, rangeParams(call), hoursConfig), `${label}: range ${JSON.stringify(call)}`)
          }
          const every = { symbol: 'BTC', fromTimestamp: '0', toTimestamp: String(Number.MAX_SAFE_INTEGER), interval: '1' }
          expect(await collect(store.rangeStream('BTC', { from: 0, to: Number.MAX_SAFE_INTEGER, interval: 1 })), `${label}: every record`).toEqual(
            (referenceQuery(stored, every, streamConfig) as { answer: unknown }).answer,
          )
          for (const opts of [{ limit: 400 }, { limit: 400, offset: btc.length - 4_100 }, { limit: 3, to: edge }, { limit: 3, to: edge - 1 }, { limit: 2, from: edge, to: edge }]) {
            const params = typedCallParams({ method: 'latest', symbol: 'BTC', opts })
            expectSameOutcome(await outcomeOf(() => store.latest('BTC', opts)), referenceQuery(stored, params, hoursConfig), `${label}: latest ${JSON.stringify(opts)}`)
          }
          expectSameOutcome(await outcomeOf(() => store.several(undefined, { to: edge })), referenceQuery(stored, { toTimestamp: String(edge) }, hoursConfig), `${label}: several`)
        }
        const store = await PriceStore.open(location, storeOptionsFor(settings, HOURS_LIMITS))
        try {
          for (const [i, batch] of [batch1, batch2, batch3].entries()) {
            await store.putMany(batch)
            written.push(...batch)
            await check(store, `after batch ${i + 1} (${JSON.stringify(settings)})`)
          }
        } finally {
          await store.close()
        }
        if (typeof location !== 'string') {
          // Closing waited for the seals: the big hour is in two parts or more, and BTC hours 1 and 3 and ETH hour 0 in one each.
          await location.open()
          expect((await layoutOf(location)).chunks).toBeGreaterThanOrEqual(5)
          await location.close()
        }
        const reopened = await PriceStore.open(location, storeOptionsFor(settings, HOURS_LIMITS))
        try {
          await check(reopened, 'after reopening')
        } finally {
          await reopened.close()
        }
      }),
      { numRuns: Math.ceil((backend.name === 'memory-level' ? 6 : 3) * runScale) },
    )
  }, SHRINK_TIMEOUT)
})
