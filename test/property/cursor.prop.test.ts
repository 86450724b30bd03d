/**
 * Cursors (issue 24, point 2) at large, on random data sets (equal
 * timestamps, equal keys and UTF-8/UTF-16 id order clashes are common):
 *
 * - paging any list answer (latest-N, history, range, candles, fill=prev,
 *   fill=none, with origin and fields; cross-rate ranges and candles, with
 *   origin and maxAge) with any page size gives exactly the
 *   unpaged answer's items in order, each page equal to the reference
 *   model's page after the page before (`referencePage`), the next cursor
 *   absent exactly on the last page: through the pure engine over an array
 *   (positions, no cursor bytes) and `store.page` on memory-level and
 *   classic-level;
 * - with writes landing between pages (records newer than the first page,
 *   older ones, records at the very millisecond of a page's last item, and
 *   rewrites of stored keys with a new value): each page is the reference
 *   page of the answer *as it is when that page is read*, after the last
 *   item of the page before; so no record (latest-N) or bucket (bucketed
 *   forms) that existed throughout is lost or repeated.
 *
 * Over HTTP: test/http/cursor-http.test.ts. Fixed seed (FC_SEED explores others).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PriceStore, type PriceRecord } from '../../src/index.js'
import { parseQuery } from '../../src/engine.js'
import { planPage, runPage, type PageableQuery } from '../../src/engine/cursor-page.js'
import type { PagePosition } from '../../src/engine/cursor.js'
import { dataSetArb } from '../../src/testing/record-arbitraries.js'
import { makeRecord, TEST_PROVIDER, type InputRecord } from '../../src/testing/records.js'
import { referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { positionOf, referencePage, type ReferencePageGrid, type ReferencePosition } from '../../src/testing/reference-forms/page.js'
import { ArraySource } from '../support/array-source.js'
import { propertyBackends } from './backends.js'

const LIMITS = Object.freeze({ maxLimit: 3000, maxSymbols: 5, maxRangePoints: 10000 })
const config = { provider: TEST_PROVIDER, limits: LIMITS }
const scale = Number(process.env['FC_SCALE']) || 1
const { backends } = propertyBackends('cursor-prop', { memory: 60, classic: 12 })

/** A paged query: its parameters without limit, the page size, and the grid of bucketed forms. */
interface PagedQuery {
  readonly params: Readonly<Record<string, string>>
  readonly limit: number
  readonly grid?: ReferencePageGrid
}

const scenarioArb = dataSetArb.chain((data) => {
  // Windows around the ordinary timestamps (the pool may hold 0 or 2^53-1 too: records there stay in the store).
  const ordinary = data.timestamps.filter((t) => t > 1e12 && t < 2e12)
  const times = ordinary.length === 0 ? [1_700_000_000_000] : ordinary
  const lo = Math.min(...times)
  const hi = Math.max(...times)
  const span = Math.max(1, hi - lo)
  const windowArb = fc.record({ from: fc.integer({ min: Math.max(0, lo - Math.floor(span / 4)), max: hi }), length: fc.integer({ min: 0, max: 2 * span }) })
  const symbolArb = fc.constantFrom(...data.symbols)
  const latestArb = fc.record({
    symbol: symbolArb,
    window: fc.option(windowArb, { nil: undefined }),
    limit: fc.integer({ min: 1, max: 9 }),
    fields: fc.option(fc.constantFrom('id,timestamp', '-signature'), { nil: undefined }),
  }).map(({ symbol, window, limit, fields }): PagedQuery => ({
    params: {
      symbol,
      ...(window === undefined ? {} : { fromTimestamp: String(window.from), toTimestamp: String(window.from + window.length) }),
      ...(fields === undefined ? {} : { fields }),
    },
    limit,
  }))
  const bucketedArb = fc.record({
    symbol: symbolArb,
    window: windowArb,
    interval: fc.oneof(fc.constant(data.interval), fc.integer({ min: 1, max: Math.max(2, Math.ceil(span / 3)) })),
    origin: fc.option(fc.integer({ min: -2 * data.interval, max: 2 * data.interval }), { nil: undefined }),
    candles: fc.boolean(),
    fill: fc.constantFrom(undefined, 'prev', 'none'),
    limit: fc.integer({ min: 1, max: 9 }),
    fields: fc.option(fc.constantFrom('id,value', '-signature'), { nil: undefined }),
  })
    .filter(({ window, interval }) => window.length / interval < 400)
    .map(({ symbol, window, interval, origin, candles, fill, limit, fields }): PagedQuery => ({
      params: {
        symbol, fromTimestamp: String(window.from), toTimestamp: String(window.from + window.length), interval: String(interval),
        ...(origin === undefined ? {} : { origin: String(origin) }),
        ...(candles ? { aggregate: 'candles' } : {}),
        ...(fill === undefined ? {} : { fill }),
        ...(fields === undefined ? {} : { fields }),
      },
      limit,
      grid: { interval, ...(origin === undefined ? {} : { origin }) },
    }))
  // Cross rates (quote in base) over two symbols holding records (a leg the store has no record of is a 400, not a list).
  const held = [...new Set(data.records.map((record) => record.symbol))]
  const crossArb = fc.record({
    pair: fc.uniqueArray(fc.constantFrom(...(held.length < 2 ? ['unused', 'pair'] : held)), { minLength: 2, maxLength: 2 }),
    window: windowArb,
    interval: fc.oneof(fc.constant(data.interval), fc.integer({ min: 1, max: Math.max(2, Math.ceil(span / 3)) })),
    origin: fc.option(fc.integer({ min: -2 * data.interval, max: 2 * data.interval }), { nil: undefined }),
    candles: fc.boolean(),
    maxAge: fc.option(fc.constantFrom(0, data.interval, 10 * data.interval), { nil: undefined }),
    limit: fc.integer({ min: 1, max: 9 }),
  })
    .filter(({ window, interval }) => window.length / interval < 400)
    .map(({ pair, window, interval, origin, candles, maxAge, limit }): PagedQuery => ({
      params: {
        quote: pair[0]!, base: pair[1]!, fromTimestamp: String(window.from), toTimestamp: String(window.from + window.length), interval: String(interval),
        ...(origin === undefined ? {} : { origin: String(origin) }),
        ...(candles ? { aggregate: 'candles' } : {}),
        ...(maxAge === undefined ? {} : { maxAge: String(maxAge) }),
      },
      limit,
      grid: { interval, ...(origin === undefined ? {} : { origin }) },
    }))
  const queryArb = held.length < 2 ? fc.oneof(latestArb, bucketedArb) : fc.oneof(latestArb, bucketedArb, crossArb)
  return fc.record({ data: fc.constant(data), queries: fc.array(queryArb, { minLength: 1, maxLength: 5 }) })
})

/** The whole answer of a paged query, without a limit (latest-N: as many as there are), with and without its `fields`. */
function wholeAnswer(stored: readonly PriceRecord[], query: PagedQuery): { readonly plain: readonly unknown[]; readonly selected: readonly unknown[] } {
  const params = query.grid === undefined ? { ...query.params, limit: String(LIMITS.maxLimit) } : query.params
  const answerOf = (given: Record<string, string>): readonly unknown[] => {
    const result = referenceQuery(stored, given, config)
    if (!('answer' in result)) throw new Error(`the model refused ${JSON.stringify(given)}: ${result.error}`)
    return result.answer as unknown[]
  }
  const { fields: _fields, ...plain } = params
  return { plain: answerOf(plain), selected: answerOf(params) }
}

/**
 * The model's page after `after`: cut from the whole answer without `fields`
 * (a selected record may lack the id or timestamp its position needs), then
 * the same items with `fields`.
 */
function modelPage(whole: ReturnType<typeof wholeAnswer>, after: ReferencePosition | undefined, query: PagedQuery): { readonly items: readonly unknown[]; readonly last?: ReferencePosition } {
  const page = referencePage(whole.plain, after, query.limit, query.grid)
  const start = page.items.length === 0 ? 0 : whole.plain.indexOf(page.items[0])
  return { items: whole.selected.slice(start, start + page.items.length), ...(page.last === undefined ? {} : { last: page.last }) }
}

/** Pages of cross-rate series resumed after a position (the property must reach them). */
let crossResumed = 0

describe('cursors over the pure engine (an array source, positions without cursor bytes)', () => {
  it('paging with any page size gives the unpaged answer, page by page as the model pages it', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, queries }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const source = new ArraySource(stored, { batchSize: 3 })
        for (const query of queries) {
          const label = JSON.stringify(query)
          const whole = wholeAnswer(stored, query)
          const pageable = parseQuery({ ...query.params, limit: String(query.limit) }, config) as PageableQuery
          let position: PagePosition | undefined
          let after: ReferencePosition | undefined
          const seen: unknown[] = []
          for (let turn = 0; turn <= whole.plain.length; turn++) {
            let outcome = await runPage(pageable, position, planPage(pageable, position, LIMITS.maxRangePoints), source)
            for (let slack = 8; outcome.retry === true; slack *= 2) outcome = await runPage(pageable, position, planPage(pageable, position, LIMITS.maxRangePoints, slack), source)
            const expected = modelPage(whole, after, query)
            expect(outcome.answer, label).toEqual(expected.items)
            expect(outcome.next !== undefined, label).toBe(expected.last !== undefined)
            seen.push(...(outcome.answer as unknown[]))
            if (outcome.next === undefined) break
            if (query.params.quote !== undefined) crossResumed++
            position = outcome.next
            after = expected.last
          }
          expect(seen, label).toEqual(whole.selected)
        }
      }),
      { numRuns: Math.ceil(80 * scale) },
    )
    // Not vacuous: cross-rate series were resumed after a position.
    expect(crossResumed).toBeGreaterThan(0)
  }, 300_000)
})

/** Writes between two pages: new records at chosen times (some at the last item's millisecond), and rewrites of stored keys. */
const writesArb = fc.array(
  fc.record({
    kind: fc.constantFrom('newer', 'older', 'tie', 'pool', 'rewrite'),
    pick: fc.nat(),
    step: fc.integer({ min: 1, max: 5 }),
    id: fc.constantFrom('0', 'a', 'b', 'zz', '\uFF61', '\u{1F600}', 'mid'),
    value: fc.double({ min: 1, max: 1e6, noNaN: true }),
  }),
  { maxLength: 4 },
)

/** The records a list of writes makes, given what is stored and where the page before ended. */
function writesOf(writes: readonly { kind: string; pick: number; step: number; id: string; value: number }[], inputs: readonly InputRecord[], symbol: string, pool: readonly number[], interval: number, at: number | undefined): InputRecord[] {
  const template = inputs.find((record) => record.symbol === symbol) ?? makeRecord({ symbol })
  const stored = inputs.map((record) => record.timestamp).filter((t) => t > 1e12 && t < 2e12)
  const times = stored.length === 0 ? [1_700_000_000_000] : stored
  const newest = Math.max(...times)
  const oldest = Math.min(...times)
  return writes.map(({ kind, pick, step, id, value }) => {
    if (kind === 'rewrite' && inputs.length > 0) return { ...inputs[pick % inputs.length]!, value }
    const timestamp =
      kind === 'newer' ? newest + step * interval : kind === 'older' ? Math.max(0, oldest - step * interval) : kind === 'tie' && at !== undefined ? at : pool[pick % pool.length] ?? newest
    return { ...template, symbol, timestamp, id: `${id}-${kind}-${pick % 7}`, value }
  })
}

describe.each(backends)('cursors on $name', (backend) => {
  it('store.page: paging with any page size gives the unpaged answer, page by page as the model pages it', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, queries }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const store = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER, limits: LIMITS })
        try {
          await store.putMany(data.records as never)
          for (const query of queries) {
            const label = JSON.stringify(query)
            const whole = wholeAnswer(stored, query)
            let cursor = ''
            let after: ReferencePosition | undefined
            const seen: unknown[] = []
            for (let turn = 0; turn <= whole.plain.length; turn++) {
              const page = await store.page({ ...query.params, limit: String(query.limit), cursor })
              const expected = modelPage(whole, after, query)
              expect(page.answer, label).toEqual(expected.items)
              expect(page.next !== undefined, label).toBe(expected.last !== undefined)
              seen.push(...(page.answer as unknown[]))
              if (page.next === undefined) break
              cursor = page.next
              after = expected.last
            }
            expect(seen, label).toEqual(whole.selected)
          }
        } finally {
          await store.close()
        }
      }),
      { numRuns: Math.ceil(backend.numRuns * scale) },
    )
  }, 300_000)

  it('with writes landing between pages, each page is the model\'s page of the answer as it is then: nothing that existed throughout is lost or repeated', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.array(writesArb, { minLength: 1, maxLength: 12 }), async ({ data, queries }, writeTurns) => {
        const store = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER, limits: LIMITS })
        try {
          let inputs = [...data.records]
          await store.putMany(inputs as never)
          for (const query of queries) {
            const label = JSON.stringify(query)
            const before = wholeAnswer(storedRecords(inputs, TEST_PROVIDER), query)
            let cursor = ''
            let after: ReferencePosition | undefined
            const seen: unknown[] = []
            for (let turn = 0; ; turn++) {
              const whole = wholeAnswer(storedRecords(inputs, TEST_PROVIDER), query)
              const page = await store.page({ ...query.params, limit: String(query.limit), cursor })
              const expected = modelPage(whole, after, query)
              expect(page.answer, `${label} page ${turn}`).toEqual(expected.items)
              expect(page.next !== undefined, label).toBe(expected.last !== undefined)
              seen.push(...(page.answer as unknown[]))
              if (page.next === undefined) break
              after = expected.last
              cursor = page.next
              const at = after !== undefined && 'timestamp' in after ? after.timestamp : undefined
              // Writes land between the first pages only: older records written before every page would keep a newest-first paging going.
              const written = turn < writeTurns.length ? writesOf(writeTurns[turn]!, inputs, (query.params.symbol ?? (turn % 2 === 0 ? query.params.quote : query.params.base))!, data.timestamps.filter((t) => t > 1e12 && t < 2e12), data.interval, at) : []
              if (written.length > 0) {
                await store.putMany(written as never)
                inputs = [...inputs, ...written]
              }
            }
            // What the guarantee says in one line: every item (by record key, or bucket) of the answer before
            // paging began is returned, once; items stay in the answer's order.
            if (query.params.fields === undefined) {
              const keys = seen.map((item) => JSON.stringify(positionOf(item, query.grid)))
              expect(new Set(keys).size, label).toBe(keys.length)
              for (const item of before.plain) expect(keys, label).toContain(JSON.stringify(positionOf(item, query.grid)))
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
