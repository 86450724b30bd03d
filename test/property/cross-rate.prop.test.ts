/**
 * Cross rates (`quote` + `base`) against the reference model
 * (src/testing/reference-forms/cross.ts, through `referenceQuery`): at one
 * time (latest, as-of), ranges, candles and TWAP, answered by the engine over
 * an array source, by the store on memory-level and classic-level
 * (`store.query`, `store.cross`) and by HTTP (`answerPrices`, the JSON body),
 * all equal. Timestamps come from a small set, so the legs often tie and
 * records of one symbol tie too; values include 0, -0, a subnormal and
 * MAX_VALUE (refused rates), and a decoy stored symbol `ETH/BTC`, which
 * `symbol=ETH/BTC` keeps answering as itself. Fixed seed (FC_SEED explores others).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { executeQuery, parseQuery } from '../../src/engine.js'
import { answerPrices } from '../../src/http.js'
import { TEST_LIMITS } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { ArraySource } from '../support/array-source.js'
import { propertyBackends } from './backends.js'
import { outcome } from './answer-outcome.js'

const T0 = 1_700_000_000_000
const config = { provider: TEST_PROVIDER, limits: TEST_LIMITS }
const scale = Number(process.env['FC_SCALE']) || 1
const { backends } = propertyBackends('cross', { memory: 200, classic: 30 })

const valueArb = fc.oneof(
  { weight: 4, arbitrary: fc.double({ min: 0.001, max: 100_000, noNaN: true }) },
  // A few small values, so rates repeat: ties of high and low, equal rates from different legs.
  { weight: 3, arbitrary: fc.constantFrom(1, 2, 4, 8) },
  { weight: 1, arbitrary: fc.constantFrom(0, -0, 1e-310, Number.MAX_VALUE, -1, 3) },
)
// Offsets from a small set, so the two legs often share a timestamp (and records of one symbol tie too).
// `unit` stretches the data: at 120 s, grids of ten minutes and more read the store's bucket heads.
const recordArb = (unit: number) => fc.record({
  symbol: fc.constantFrom('ETH', 'BTC', 'ETH', 'BTC', 'ETH/BTC', 'AR'),
  offset: fc.integer({ min: 0, max: 20 }).map((k) => k * unit),
  id: fc.stringMatching(/^[a-z0-9]{1,6}$/),
  value: valueArb,
})
const timeArb = (unit: number) => fc.integer({ min: -3, max: 23 }).map((k) => T0 + k * unit + (k % 3 === 0 ? 0 : unit / 2))
const pairArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(['ETH', 'BTC'], ['BTC', 'ETH']) },
  { weight: 1, arbitrary: fc.constantFrom(['ETH', 'AR'], ['ETH', 'NOPE'], ['NOPE', 'BTC'], ['ETH', 'ETH']) },
)
const msArb = (unit: number) => fc.option(fc.integer({ min: 0, max: 8 * unit }).map(String), { nil: undefined, freq: 3 })

/** A cross-rate query: at one time, a range, candles or a TWAP; now and then one with a parameter that does not belong. */
const queryArb = (unit: number): fc.Arbitrary<Record<string, string>> => fc.oneof(
  { weight: 2, arbitrary: fc.record({ pair: pairArb, to: fc.option(timeArb(unit), { nil: undefined }), maxAge: msArb(unit) })
    .map(({ pair, to, maxAge }) => params({ quote: pair[0], base: pair[1], toTimestamp: to, maxAge })) },
  { weight: 4, arbitrary: fc.record({
    pair: pairArb, from: timeArb(unit), length: fc.integer({ min: 0, max: 25 * unit }), interval: fc.constantFrom(1, 700, unit, 3 * unit, 7 * unit, 60_000, 600_000, 1_800_000),
    aggregate: fc.constantFrom(undefined, 'candles'), origin: fc.option(fc.constantFrom(0, 600_000, -1_200_000, 1_000, -5 * unit), { nil: undefined }),
    offset: fc.option(fc.nat({ max: 4 }), { nil: undefined }), limit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }), maxAge: msArb(unit),
  }).map(({ pair, from, length, interval, aggregate, origin, offset, limit, maxAge }) =>
    params({ quote: pair[0], base: pair[1], fromTimestamp: from, toTimestamp: from + length, interval, aggregate, origin, offset, limit, maxAge })) },
  { weight: 2, arbitrary: fc.record({ pair: pairArb, from: timeArb(unit), length: fc.integer({ min: 0, max: 25 * unit }), maxAge: msArb(unit) })
    .map(({ pair, from, length, maxAge }) => params({ quote: pair[0], base: pair[1], fromTimestamp: from, toTimestamp: from + length, aggregate: 'twap', maxAge })) },
  { weight: 1, arbitrary: fc.record({
    extra: fc.constantFrom({ symbol: 'ETH' }, { symbols: 'ETH,BTC' }, { fill: 'prev' }, { direction: 'after' }, { fields: 'id' }, { fromTimestamp: String(T0) },
      { offset: '1' }, { interval: '1000' }, { aggregate: 'twap', interval: '1000' }, { aggregate: 'candles' }, { origin: '5' }, { quote: undefined }, { base: undefined },
      { quote: 'B TC' }, { maxAge: '-1' }, { fromTimestamp: String(T0 + 5), toTimestamp: String(T0), interval: '1' }),
  }).map(({ extra }) => params({ quote: 'ETH', base: 'BTC', ...extra })) },
)

function params(entries: Record<string, string | number | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]))
}

const caseArb = fc.constantFrom(1_000, 1_000, 120_000).chain((unit) => fc.record({
  records: fc.uniqueArray(recordArb(unit), { minLength: 2, maxLength: 30, selector: (r) => r.id }),
  queries: fc.array(queryArb(unit), { minLength: 1, maxLength: 6 }),
}))


/** The same answer through HTTP: the JSON body, or the error's code. */
async function overHttp(store: PriceStore, query: Record<string, string>): Promise<unknown> {
  const answer = await answerPrices(store, new URLSearchParams(query))
  const body = JSON.parse(answer.body) as { error?: { code: string } }
  if (answer.status === 200) return { answer: body }
  return { error: body.error!.code }
}

/** An expected result as HTTP gives it: an error's code only (the body carries no details). */
function asHttp(expected: unknown): unknown {
  return typeof expected === 'object' && expected !== null && 'error' in expected ? { error: (expected as { error: string }).error } : expected
}

/** `store.cross()` with the query's options (the typed method), for queries without stray parameters. */
function typed(store: PriceStore, q: Record<string, string>): Promise<unknown> {
  const n = (name: string) => (q[name] === undefined ? {} : { [name]: Number(q[name]) })
  const options = {
    ...(q['fromTimestamp'] === undefined ? {} : { from: Number(q['fromTimestamp']) }),
    ...(q['toTimestamp'] === undefined ? {} : { to: Number(q['toTimestamp']) }),
    ...n('interval'), ...n('origin'), ...n('offset'), ...n('limit'), ...n('maxAge'),
    ...(q['aggregate'] === undefined ? {} : { aggregate: q['aggregate'] as 'candles' | 'twap' }),
  }
  return store.cross(q['quote']!, q['base']!, options)
}

describe.each(backends)('cross rates on $name', (backend) => {
  it('engine, store (query and store.cross), HTTP and the reference model agree', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ records, queries }) => {
        const input = records.map((r) => makeRecord({ symbol: r.symbol, id: r.id, timestamp: T0 + r.offset, value: r.value }))
        const stored = storedRecords(input, TEST_PROVIDER)
        const store = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
        try {
          if (input.length > 0) await store.putMany(input)
          for (const q of queries) {
            const label = JSON.stringify(q)
            const expected = referenceQuery(stored, q, config)
            expect(await outcome(async () => executeQuery(parseQuery(q, config), new ArraySource(stored, { batchSize: 3 }), TEST_LIMITS)), label).toEqual(expected)
            expect(await outcome(() => store.query(q)), label).toEqual(expected)
            expect(await overHttp(store, q), label).toEqual(asHttp(expected))
            const plain = Object.keys(q).every((k) => ['quote', 'base', 'fromTimestamp', 'toTimestamp', 'interval', 'origin', 'offset', 'limit', 'maxAge', 'aggregate'].includes(k))
            if (plain && q['quote'] !== undefined && q['base'] !== undefined) expect(await outcome(() => typed(store, q)), label).toEqual(expected)
          }
          // A stored symbol with a slash is still itself.
          expect(await store.query({ symbol: 'ETH/BTC' })).toEqual((referenceQuery(stored, { symbol: 'ETH/BTC' }, config) as { answer: unknown }).answer)
        } finally {
          await store.close()
        }
      }),
      { numRuns: backend.numRuns * scale },
    )
  })
})
