import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { startServer } from '../../src/adapters/http/node.js'
import { batchPageOf, type BatchAsOfPage, type BatchAsOfPageOptions } from '../../src/engine/batch-page.js'
import { cursorBytes, cursorText } from '../../src/engine/cursor.js'
import { runBatch, toBatchQuery, type BatchAsOfAnswer, type BatchAsOfOptions } from '../../src/engine/forms/batch.js'
import { isPriceStoreError, PriceStore } from '../../src/index.js'
import { toExactJson } from '../../src/rules/exact-json.js'
import { answerBatchAsOf } from '../../src/store/batch-as-of.js'
import { dataSetArb, TEST_LIMITS } from '../../src/testing/record-arbitraries.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { referenceBatchAsOf } from '../../src/testing/reference-forms/batch-asof.js'
import { storedRecords } from '../../src/testing/reference-model.js'
import type { PriceRecord } from '../../src/types.js'
import { ArraySource } from '../support/array-source.js'
import { propertyBackends } from './backends.js'

// Batch as-of pages (issue 24): pages of any batch, any page size, put together, are the unpaged answer (the
// reference model's), on the engine, the store (both backends) and over HTTP; a page read after writes is the model's
// answer at that moment for its times; bad cursors are refused before anything is read.
const SEED = Number(process.env['FC_SEED'] ?? 2424)
const { backends } = propertyBackends('batch-pages', { memory: 25, classic: 6 })

const scenarioArb = dataSetArb.chain((data) => {
  const near = data.timestamps.flatMap((t) => [t - 1, t, t + 1]).filter((t) => t >= 0 && t <= Number.MAX_SAFE_INTEGER)
  const timeArb = fc.oneof(fc.constantFrom(...near, 0), fc.integer({ min: 0, max: Math.min(Number.MAX_SAFE_INTEGER, Math.max(...data.timestamps) + 2 * data.interval) }))
  const batchArb = fc.record({
    symbols: fc.uniqueArray(fc.constantFrom(...data.symbols, 'NOPE'), { minLength: 1, maxLength: 4 }),
    times: fc.array(timeArb, { minLength: 1, maxLength: 12 }),
    direction: fc.constantFrom('before' as const, 'after' as const, 'nearest' as const),
    tolerance: fc.option(fc.oneof(fc.constant(0), fc.constant(data.interval), fc.nat(3 * data.interval)), { nil: undefined }),
    pageSize: fc.integer({ min: 1, max: 14 }),
  })
  return fc.record({ data: fc.constant(data), batch: batchArb })
})
type Batch = (typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never)['batch']

function optionsOf(batch: Batch): BatchAsOfOptions {
  return { symbols: batch.symbols, times: batch.times, direction: batch.direction, ...(batch.tolerance === undefined ? {} : { tolerance: batch.tolerance }) }
}

function modelOf(stored: readonly PriceRecord[], batch: Batch, times: readonly number[] = batch.times): BatchAsOfAnswer {
  return referenceBatchAsOf(stored, batch.symbols, times, batch.direction, batch.tolerance)
}

/** Pages put together: each symbol's entries, page after page (symbols are data: plain own entries). */
function joined(pages: readonly BatchAsOfAnswer[]): BatchAsOfAnswer {
  const out: BatchAsOfAnswer = {}
  for (const page of pages) {
    for (const symbol of Object.keys(page)) {
      if (!Object.hasOwn(out, symbol)) Object.defineProperty(out, symbol, { value: {}, enumerable: true, writable: true, configurable: true })
      Object.assign(out[symbol]!, page[symbol])
    }
  }
  return out
}

/** The sorted distinct times a page holds, from its first symbol's keys. */
function timesOf(page: BatchAsOfAnswer, symbols: readonly string[]): number[] {
  return Object.keys(page[symbols[0]!] ?? {}).map(Number)
}

/** Parts of a store for `answerBatchAsOf`: views over an array of stored records, a cursor secret in a memory meta level. */
function partsOver(stored: () => readonly PriceRecord[], meta = new MemoryLevel<Uint8Array, Uint8Array>({ keyEncoding: 'view', valueEncoding: 'view' })) {
  const counts = { reads: 0 }
  const reader = { read: (_: string, body: (view: ArraySource) => unknown) => { counts.reads++; return Promise.resolve(body(new ArraySource(stored(), { batchSize: 2 }))) } }
  const parts = { reader, options: { limits: TEST_LIMITS }, levels: { meta }, life: { assertOpen: () => undefined } } as never
  return { parts, counts }
}

/** Follows `next` from the first page to the last. */
async function allPages(ask: (cursor: string) => Promise<BatchAsOfPage>): Promise<BatchAsOfPage[]> {
  const pages: BatchAsOfPage[] = []
  let cursor = ''
  for (;;) {
    const page = await ask(cursor)
    pages.push(page)
    if (page.next === undefined) return pages
    expect(pages.length).toBeLessThanOrEqual(12)
    cursor = page.next
  }
}

describe('batch pages: the engine (array source) vs reference model', () => {
  it('pages of any size hold each sorted time once, in order, and together answer as the model does', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, batch }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const query = toBatchQuery(optionsOf(batch), TEST_LIMITS)
        const pages: BatchAsOfAnswer[] = []
        let position
        const seen: number[] = []
        do {
          const page = batchPageOf(query, position, batch.pageSize)
          expect(page.query.times.length).toBe(Math.min(batch.pageSize, query.times.length - seen.length))
          seen.push(...page.query.times)
          pages.push(await runBatch(page.query, new ArraySource(stored)))
          position = page.next
          expect(pages.length).toBeLessThanOrEqual(12)
        } while (position !== undefined)
        expect(seen).toEqual(query.times)
        expect(toExactJson(joined(pages))).toBe(toExactJson(modelOf(stored, batch)))
      }),
      { numRuns: 60, seed: SEED },
    )
  })
})

describe('batch pages: the store module (signed cursors)', () => {
  it('following next from cursor= gives the unpaged answer, and no page repeats or skips a time', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ data, batch }) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const { parts } = partsOver(() => stored)
        const pages = await allPages((cursor) => answerBatchAsOf(parts, { ...optionsOf(batch), pageSize: batch.pageSize, cursor }))
        expect(pages.length).toBe(Math.ceil(new Set(batch.times).size / batch.pageSize))
        expect(toExactJson(joined(pages.map((p) => p.answer)))).toBe(toExactJson(modelOf(stored, batch)))
        // Without paging options: the answer as before, not a page.
        expect(toExactJson(await answerBatchAsOf(parts, optionsOf(batch)))).toBe(toExactJson(modelOf(stored, batch)))
      }),
      { numRuns: 40, seed: SEED },
    )
  })

  it('writes between pages: each page is the model at the moment it is read, for its own times', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.integer({ min: 1, max: 4 }), async ({ data, batch }, chunks) => {
        let written = data.records.slice(0, Math.floor(data.records.length / (chunks + 1)))
        const { parts } = partsOver(() => storedRecords(written, TEST_PROVIDER))
        const all = [...new Set(batch.times)].sort((a, b) => a - b)
        const seen: number[] = []
        let cursor = ''
        for (let k = 1; ; k++) {
          const page = await answerBatchAsOf(parts, { ...optionsOf(batch), pageSize: batch.pageSize, cursor })
          const times = timesOf(page.answer, batch.symbols)
          seen.push(...times)
          expect(toExactJson(page.answer)).toBe(toExactJson(modelOf(storedRecords(written, TEST_PROVIDER), batch, times)))
          if (page.next === undefined) break
          expect(k).toBeLessThanOrEqual(12)
          cursor = page.next
          written = data.records.slice(0, Math.floor((data.records.length * Math.min(k + 1, chunks + 1)) / (chunks + 1)))
        }
        expect(seen).toEqual(all)
      }),
      { numRuns: 30, seed: SEED },
    )
  })

  it('refuses bad cursors with PRICE_INVALID_QUERY (parameter cursor) before reading anything', async () => {
    const stored = storedRecords([], TEST_PROVIDER)
    const { parts, counts } = partsOver(() => stored)
    const other = partsOver(() => stored).parts
    const batch = { symbols: ['A', 'B'], times: [1, 2, 3, 4, 5] }
    const first = await answerBatchAsOf(parts, { ...batch, pageSize: 2 })
    const next = first.next as string
    expect(next).toBeTypeOf('string')
    const fromOther = (await answerBatchAsOf(other, { ...batch, pageSize: 2 })).next as string
    const bytes = Buffer.from(next, 'base64url')
    bytes[bytes.length - 1]! ^= 1
    const tampered = bytes.toString('base64url')
    const position = Buffer.from(next, 'base64url')
    position[7]! ^= 1 // the time: tag no longer matches
    const prices = (await answerBatchAsOf(parts, { ...batch, pageSize: 2 })).next as string
    // A bucket cursor with this batch's tag: made with the real secret through another kind (as a /prices cursor is).
    const wrongKind = cursorText(cursorBytes({ kind: 'bucket', bucket: 2 }, 0), new Uint8Array(16))
    const cases: readonly [string, string, Record<string, unknown>][] = [
      ['garbage', 'not a cursor!', batch],
      ['truncated', next.slice(0, 10), batch],
      ['tampered tag', tampered, batch],
      ['tampered time', position.toString('base64url'), batch],
      ['another store', fromOther, batch],
      ['another batch (times)', next, { ...batch, times: [1, 2, 3, 4, 6] }],
      ['another batch (symbols)', next, { ...batch, symbols: ['B', 'A'] }],
      ['another batch (direction)', next, { ...batch, direction: 'after' }],
      ['another kind', wrongKind, batch],
      ['not a string', 42 as never, batch],
    ]
    expect(prices).toBe(next)
    for (const [name, cursor, options] of cases) {
      const reads = counts.reads
      const error = await answerBatchAsOf(parts, { ...options, cursor, pageSize: 2 } as never).then(() => undefined, (e: unknown) => e)
      expect(isPriceStoreError(error) && [error.code, error.details?.['parameter']], name).toEqual(['PRICE_INVALID_QUERY', 'cursor'])
      expect(counts.reads, name).toBe(reads)
    }
    const size = await answerBatchAsOf(parts, { ...batch, pageSize: 0 }).then(() => undefined, (e: unknown) => e)
    expect(isPriceStoreError(size) && [size.code, size.details?.['parameter']]).toEqual(['PRICE_INVALID_QUERY', 'pageSize'])
  })
})

const page = (store: PriceStore, options: Record<string, unknown>): Promise<BatchAsOfPage> => store.batchAsOf(options as unknown as BatchAsOfPageOptions)

describe.each(backends)('batch pages: PriceStore.batchAsOf ($name)', (backend) => {
  it('pages put together are the unpaged answer and the model\'s; writes between pages show in later pages only', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.constantFrom(0, undefined), async ({ data, batch }, openBytes) => {
        const store = await PriceStore.open(backend.location(), { provider: TEST_PROVIDER, limits: TEST_LIMITS, ...(openBytes === undefined ? {} : { openBytes }) })
        try {
          const half = Math.floor(data.records.length / 2)
          await store.putMany(data.records.slice(0, half))
          const before = storedRecords(data.records.slice(0, half), TEST_PROVIDER)
          const pages = await allPages((cursor) => page(store, { ...optionsOf(batch), pageSize: batch.pageSize, cursor }))
          expect(toExactJson(joined(pages.map((p) => p.answer)))).toBe(toExactJson(modelOf(before, batch)))
          expect(toExactJson(joined(pages.map((p) => p.answer)))).toBe(toExactJson(await store.batchAsOf(optionsOf(batch))))
          // Writes after the first page: the next page reads them (its own times), nothing repeated or skipped.
          const first = await page(store, { ...optionsOf(batch), pageSize: batch.pageSize, cursor: '' })
          await store.putMany(data.records.slice(half))
          const after = storedRecords(data.records, TEST_PROVIDER)
          const rest = first.next === undefined ? [] : await allPages((cursor) => page(store, { ...optionsOf(batch), pageSize: batch.pageSize, cursor: cursor === '' ? first.next : cursor }))
          const times = [first, ...rest].map((p) => timesOf(p.answer, batch.symbols))
          expect(times.flat()).toEqual([...new Set(batch.times)].sort((a, b) => a - b))
          for (const [i, p] of rest.entries()) expect(toExactJson(p.answer)).toBe(toExactJson(modelOf(after, batch, times[i + 1])))
        } finally {
          await store.close()
        }
      }),
      { numRuns: backend.numRuns, seed: SEED },
    )
  }, 120_000)
})

describe('batch pages over HTTP (GET with limit and link, POST with cursor in the body, NDJSON)', () => {
  it('pages followed by link or x-next-cursor put together are the model\'s answer', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, fc.constantFrom('get', 'post', 'ndjson'), async ({ data, batch }, how) => {
        const stored = storedRecords(data.records, TEST_PROVIDER)
        const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
        const server = await startServer({ store })
        try {
          await store.putMany(data.records)
          const pages: BatchAsOfAnswer[] = []
          const params = new URLSearchParams({ symbols: batch.symbols.join(','), times: batch.times.join(','), direction: batch.direction, limit: String(batch.pageSize) })
          if (batch.tolerance !== undefined) params.set('tolerance', String(batch.tolerance))
          let url: string | undefined = `${server.url}/prices/batch?${params.toString()}`
          let cursor: string | undefined = ''
          while (how === 'get' ? url !== undefined : cursor !== undefined) {
            const response: Response = how === 'get'
              ? await fetch(url as string)
              : await fetch(`${server.url}/prices/batch`, {
                method: 'POST',
                body: JSON.stringify({ ...optionsOf(batch), limit: batch.pageSize, cursor }),
                headers: how === 'ndjson' ? { accept: 'application/x-ndjson' } : {},
              })
            expect(response.status).toBe(200)
            const next = response.headers.get('x-next-cursor') ?? undefined
            const link = response.headers.get('link')
            expect(link === null).toBe(how !== 'get' || next === undefined)
            if (how === 'get') url = link === null ? undefined : new URL(/^<(.*)>; rel="next"$/.exec(link)![1]!, url).toString()
            cursor = next
            pages.push(how === 'ndjson' ? keyedOf(await response.text()) : JSON.parse(await response.text()) as BatchAsOfAnswer)
            expect(pages.length).toBeLessThanOrEqual(12)
          }
          expect(pages.length).toBe(Math.ceil(new Set(batch.times).size / batch.pageSize))
          expect(JSON.parse(toExactJson(joined(pages)))).toEqual(JSON.parse(toExactJson(modelOf(stored, batch))))
        } finally {
          await server.close()
          await store.close()
        }
      }),
      { numRuns: 15, seed: SEED },
    )
  }, 120_000)

  it('refuses bad cursors with 400 PRICE_INVALID_QUERY (the message names cursor); limit must be a positive integer', async () => {
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
    const other = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
    const server = await startServer({ store })
    try {
      const batch = { symbols: ['A', 'B'], times: [1, 2, 3, 4, 5] }
      const next = (await page(store, { ...batch, pageSize: 2 })).next as string
      const fromOther = (await page(other, { ...batch, pageSize: 2 })).next as string
      const tampered = Buffer.from(next, 'base64url')
      tampered[tampered.length - 1]! ^= 1
      const pricesPage = await store.page({ symbol: 'A', limit: '1', cursor: '' })
      const cases: readonly [string, Record<string, unknown>][] = [
        ['garbage', { ...batch, cursor: '!!' }],
        ['tampered', { ...batch, cursor: tampered.toString('base64url') }],
        ['another store', { ...batch, cursor: fromOther }],
        ['another batch', { ...batch, times: [1, 2, 3], cursor: next }],
        ['a /prices cursor', { ...batch, cursor: pricesPage.next ?? 'AQIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
      ]
      for (const [name, body] of cases) {
        for (const response of [
          await fetch(`${server.url}/prices/batch`, { method: 'POST', body: JSON.stringify({ ...body, limit: 2 }) }),
          await fetch(`${server.url}/prices/batch?symbols=${(body['symbols'] as string[]).join(',')}&times=${(body['times'] as number[]).join(',')}&limit=2&cursor=${encodeURIComponent(body['cursor'] as string)}`),
        ]) {
          expect(response.status, name).toBe(400)
          const { error } = await response.json() as { error: { code: string; message: string } }
          expect(error.code, name).toBe('PRICE_INVALID_QUERY')
          expect(error.message, name).toMatch(/^cursor /)
        }
      }
      const zero = await fetch(`${server.url}/prices/batch?symbols=A&times=1&limit=0`)
      expect(zero.status).toBe(400)
      expect(((await zero.json()) as { error: { message: string } }).error.message).toMatch(/^limit /)
      // No paging asked: no cursor headers, as before.
      const whole = await fetch(`${server.url}/prices/batch?symbols=A,B&times=1,2,3,4,5`)
      expect([whole.status, whole.headers.get('x-next-cursor'), whole.headers.get('link')]).toEqual([200, null, null])
    } finally {
      await server.close()
      await other.close()
      await store.close()
    }
  })
})

/** NDJSON lines rebuilt into the keyed shape, in their order. */
function keyedOf(text: string): BatchAsOfAnswer {
  const keyed: Record<string, Record<string, unknown>> = {}
  for (const line of text.trimEnd().split('\n')) {
    if (line === '') continue
    const { symbol, time, record, age } = JSON.parse(line) as { symbol: string; time: number; record: unknown; age: number | null }
    if (!Object.hasOwn(keyed, symbol)) Object.defineProperty(keyed, symbol, { value: {}, enumerable: true, writable: true, configurable: true })
    keyed[symbol]![String(time)] = record === null ? null : { record, age }
  }
  return keyed as BatchAsOfAnswer
}
