/**
 * Cursors (issue 24, point 2) on the store: pages resume after the last
 * item, the next cursor is absent on the last page, and a bad cursor is a
 * coded 400 (`PRICE_INVALID_QUERY`, parameter `cursor`) before anything is
 * read. The property tests (test/property/cursor.prop.test.ts) cover
 * random data, writes between pages and HTTP.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { PriceStore, type PricePage } from '../../src/index.js'
import { StoreReader } from '../../src/store/read/store-reader.js'
import { makeRecord, T0, TEST_PROVIDER } from '../../src/testing/records.js'

const MINUTE = 60_000
let dir = ''
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'price-store-cursor-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})
afterEach(() => {
  vi.restoreAllMocks()
})

/** Records of BTC every minute for two hours, and three more sharing one millisecond. */
function records() {
  const list = Array.from({ length: 120 }, (_, i) => makeRecord({ timestamp: T0 + i * MINUTE }))
  for (const id of ['a', 'b', 'c']) list.push(makeRecord({ timestamp: T0 + 30 * MINUTE, id }))
  return list
}

async function openStore(location: string | MemoryLevel<string, string> = new MemoryLevel()): Promise<PriceStore> {
  const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
  await store.putMany(records())
  return store
}

/** Every page of `params`, from the empty cursor on. */
async function allPages(store: PriceStore, params: Record<string, string>): Promise<PricePage[]> {
  const pages: PricePage[] = []
  let cursor = ''
  for (;;) {
    const page = await store.page({ ...params, cursor })
    pages.push(page)
    if (page.next === undefined) return pages
    cursor = page.next
  }
}

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
    return 'answered'
  } catch (err) {
    const { code, details } = err as { code?: string; details?: { parameter?: string } }
    return { code, parameter: details?.parameter }
  }
}

const BAD = { code: 'PRICE_INVALID_QUERY', parameter: 'cursor' }

describe('store.page', () => {
  it('pages latest-N newest first through records sharing a millisecond, each page as long as limit, no cursor on the last', async () => {
    const store = await openStore()
    try {
      const whole = await store.query({ symbol: 'BTC', limit: '3000' })
      for (const limit of [1, 2, 3, 7, 123, 200]) {
        const pages = await allPages(store, { symbol: 'BTC', limit: String(limit) })
        expect(pages.flatMap((page) => page.answer as object[])).toEqual(whole)
        expect(pages.slice(0, -1).every((page) => (page.answer as object[]).length === limit)).toBe(true)
        expect(pages.length).toBe(Math.max(1, Math.ceil(123 / limit)))
      }
      // The first page is the unpaged answer.
      expect((await store.page({ symbol: 'BTC', limit: '5' })).answer).toEqual(await store.query({ symbol: 'BTC', limit: '5' }))
    } finally {
      await store.close()
    }
  })

  it('pages history, range, candles and both fills; limit and fields may change between pages', async () => {
    const store = await openStore()
    try {
      const window = { symbol: 'BTC', fromTimestamp: String(T0 - 3 * 600_000), toTimestamp: String(T0 + 150 * MINUTE) }
      for (const extra of [{}, { interval: '600000' }, { interval: '600000', fill: 'prev' }, { interval: '600000', fill: 'none' }, { interval: '420000', origin: '-60000', aggregate: 'candles' }, { interval: '600000', aggregate: 'candles', fill: 'none' }]) {
        const params = { ...window, ...extra }
        const whole = await store.query({ ...params, limit: '3000' })
        for (const limit of ['1', '4', '9']) {
          expect((await allPages(store, { ...params, limit })).flatMap((page) => page.answer as object[]), JSON.stringify(extra)).toEqual(whole)
        }
        const first = await store.page({ ...params, limit: '2', cursor: '' })
        const second = await store.page({ ...params, limit: '5', fields: 'id', cursor: first.next! })
        expect(second.answer).toEqual(await store.query({ ...params, offset: '2', limit: '5', fields: 'id' }))
      }
    } finally {
      await store.close()
    }
  })

  it('without limit a range is one page; a page past the cap is refused as the unpaged answer is', async () => {
    const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits: { maxRangePoints: 5 } })
    try {
      await store.putMany(records())
      const params = { symbol: 'BTC', fromTimestamp: String(T0), toTimestamp: String(T0 + 119 * MINUTE), interval: String(10 * MINUTE) }
      expect(await codeOf(store.page(params))).toEqual({ code: 'PRICE_RANGE_TOO_LARGE', parameter: 'interval' })
      const page = await store.page({ ...params, limit: '5' })
      expect(page.answer).toEqual(await store.query({ ...params, limit: '5' }))
      expect(page.next).toBeTypeOf('string')
      const unpaged = await codeOf(store.query({ ...params, limit: '6' }))
      expect(await codeOf(store.page({ ...params, limit: '6' }))).toEqual(unpaged)
    } finally {
      await store.close()
    }
  })

  it('refuses bad cursors with PRICE_INVALID_QUERY (cursor) and reads nothing', async () => {
    const store = await openStore()
    const other = await openStore()
    try {
      const params = { symbol: 'BTC', limit: '10' }
      const { next } = await store.page(params)
      const cursor = next!
      const fromOther = (await other.page(params)).next!
      const flipped = (index: number) => {
        const bytes = Buffer.from(cursor, 'base64url')
        bytes[index] = bytes[index]! ^ 1
        return bytes.toString('base64url')
      }
      const answer = vi.spyOn(StoreReader.prototype, 'answer')
      const bad: Record<string, string>[] = [
        { ...params, cursor: 'garbage' },
        { ...params, cursor: 'not base64!' },
        { ...params, cursor: cursor.slice(0, -3) },
        { ...params, cursor: `${cursor}AAAA` },
        ...Array.from({ length: Buffer.from(cursor, 'base64url').length }, (_, i) => ({ ...params, cursor: flipped(i) })),
        { ...params, cursor: fromOther },
        { symbol: 'ETH', limit: '10', cursor },
        { symbol: 'BTC', limit: '10', toTimestamp: String(T0 + 50 * MINUTE), cursor },
        { symbol: 'BTC', fromTimestamp: String(T0), toTimestamp: String(T0 + 9 * MINUTE), interval: '60000', limit: '10', cursor },
        { ...params, offset: '0', cursor: '' },
        { symbols: 'BTC', cursor: '' },
        { symbol: 'BTC', toTimestamp: String(T0), direction: 'after', cursor: '' },
        { symbol: 'BTC', fromTimestamp: String(T0), toTimestamp: String(T0 + MINUTE), aggregate: 'twap', cursor: '' },
      ]
      for (const params of bad) expect(await codeOf(store.page(params)), JSON.stringify(params)).toEqual(BAD)
      expect(await codeOf(store.page(new URLSearchParams([['symbol', 'BTC'], ['cursor', ''], ['cursor', '']])))).toEqual(BAD)
      expect(answer).not.toHaveBeenCalled()
      // The same cursor, untouched, still works; so does a cursor with another limit.
      expect(await codeOf(store.page({ ...params, limit: '3', cursor }))).toBe('answered')
    } finally {
      await store.close()
      await other.close()
    }
  })

  it('keeps its secret across restarts (classic-level); a store written before cursors gets one when first paged', async () => {
    const location = join(dir, 'restart')
    let store = await openStore(location)
    const { next } = await store.page({ symbol: 'BTC', limit: '10' })
    await store.close()
    store = await PriceStore.open(location, { provider: TEST_PROVIDER })
    try {
      const page = await store.page({ symbol: 'BTC', limit: '10', cursor: next! })
      expect(page.answer).toEqual(await store.query({ symbol: 'BTC', limit: '10', offset: '10' }))
    } finally {
      await store.close()
    }
  })

  it('pages cross-rate ranges and candles by bucket; refuses a cursor at one time, on a TWAP, of another pair or maxAge', async () => {
    const store = await openStore()
    try {
      await store.putMany(Array.from({ length: 60 }, (_, i) => makeRecord({ symbol: 'ETH', timestamp: T0 + 30_000 + i * 2 * MINUTE, value: 10 + i })))
      const window = { fromTimestamp: String(T0 + 7 * MINUTE), toTimestamp: String(T0 + 100 * MINUTE) }
      for (const params of [
        { quote: 'ETH', base: 'BTC', ...window, interval: '600000' },
        { quote: 'BTC', base: 'ETH', ...window, interval: '420000', origin: '-60000', maxAge: '60000' },
        { quote: 'ETH', base: 'BTC', ...window, interval: '900000', aggregate: 'candles' },
      ]) {
        const whole = await store.query(params) as { bucket: number }[]
        expect(whole.length).toBeGreaterThan(6)
        const pages = await allPages(store, { ...params, limit: '4' })
        expect(pages.flatMap((page) => page.answer as unknown[])).toEqual(whole)
        expect(pages.map((page) => (page.answer as unknown[]).length)).toEqual(pages.map((_, i) => Math.min(4, whole.length - 4 * i)))
        expect(pages[1]!.answer).toEqual(await store.query({ ...params, offset: '4', limit: '4' }))
        const next = pages[0]!.next!
        for (const other of [{ ...params, quote: 'AR' }, { ...params, base: 'AR' }, { ...params, maxAge: '1' }, { ...params, interval: '60000' }, { symbol: 'ETH', ...window, interval: params.interval }]) {
          expect(await codeOf(store.page({ ...other, cursor: next })), JSON.stringify(other)).toEqual(BAD)
        }
      }
      for (const params of [{ quote: 'ETH', base: 'BTC' }, { quote: 'ETH', base: 'BTC', ...window, aggregate: 'twap' }, { quote: 'ETH', base: 'BTC', ...window, interval: '600000', offset: '1' }]) {
        expect(await codeOf(store.page({ ...params, cursor: '' })), JSON.stringify(params)).toEqual(BAD)
        expect(await codeOf(store.query({ ...params, cursor: '' })), JSON.stringify(params)).toEqual(BAD)
      }
      // A bad cross query is refused for what it is first, the cursor after.
      expect(await codeOf(store.page({ quote: 'ETH', base: 'ETH', cursor: '' }))).toEqual({ code: 'PRICE_INVALID_QUERY', parameter: 'base' })
      expect(await codeOf(store.query({ quote: 'ETH', base: 'BTC', ...window, interval: '600000', cursor: '' }))).toBe('answered')
    } finally {
      await store.close()
    }
  })

  it('stores given the same cursorSecret accept each other\'s cursors (replicas); another secret, or the stored one, refuses them', async () => {
    const secret = randomBytes(32)
    const open = (cursorSecret?: string | Uint8Array) => PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, ...(cursorSecret === undefined ? {} : { cursorSecret }) })
    const stores = [await open(secret), await open(Buffer.from(secret)), await open(randomBytes(32)), await open(), await open(secret.toString('base64'))]
    const [a, b, other, own, text] = stores as [PriceStore, PriceStore, PriceStore, PriceStore, PriceStore]
    try {
      for (const store of stores) await store.putMany(records())
      for (const params of [{ symbol: 'BTC', limit: '7' }, { symbol: 'BTC', fromTimestamp: String(T0), toTimestamp: String(T0 + 60 * MINUTE), interval: '300000', limit: '3' }]) {
        const first = await a.page({ ...params, cursor: '' })
        // The same cursor, from either node: the same next page, and the same next cursor.
        const onA = await a.page({ ...params, cursor: first.next! })
        const onB = await b.page({ ...params, cursor: first.next! })
        expect(onB).toEqual(onA)
        expect(onB.answer).toEqual(await b.query({ ...params, offset: params.limit }))
        for (const refusing of [other, own, text]) expect(await codeOf(refusing.page({ ...params, cursor: first.next! }))).toEqual(BAD)
        // The text secret's own cursors are its own.
        const fromText = await text.page(params)
        expect(await codeOf(text.page({ ...params, cursor: fromText.next! }))).toBe('answered')
        expect(await codeOf(a.page({ ...params, cursor: fromText.next! }))).toEqual(BAD)
      }
    } finally {
      for (const store of stores) await store.close()
    }
  })

  it('refuses a cursorSecret that is too short, repetitive or of another type with PRICE_INVALID_OPTIONS, never quoting it', async () => {
    for (const cursorSecret of ['x'.repeat(31), Buffer.alloc(16, 7), 'ab'.repeat(40), Buffer.alloc(64), 42, null, ['a']]) {
      const err = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, cursorSecret: cursorSecret as string }).then(
        async (store) => { await store.close(); return undefined },
        (e: unknown) => e as { code: string; message: string; details: { field?: string } },
      )
      expect(err?.code, String(cursorSecret)).toBe('PRICE_INVALID_OPTIONS')
      expect(err?.details.field).toBe('cursorSecret')
      if (typeof cursorSecret === 'string') expect(err?.message).not.toContain(cursorSecret.slice(0, 8))
    }
    // 32 random bytes, as a Buffer or as text of 32 bytes and more, are accepted.
    for (const cursorSecret of [randomBytes(32), randomBytes(24).toString('base64')]) {
      const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, cursorSecret })
      await store.close()
    }
  })

  it('store.query, plan, run and ask refuse a non-empty cursor (only store.page resumes); an empty one is the first page everywhere', async () => {
    const store = await openStore()
    try {
      const { next } = await store.page({ symbol: 'BTC', limit: '4' })
      const resumed = { symbol: 'BTC', limit: '4', cursor: next! }
      const refusal = async (promise: Promise<unknown>) => {
        const err = await promise.then(() => undefined, (e: unknown) => e as { code: string; message: string; details: { parameter?: string } })
        expect(err?.code).toBe('PRICE_INVALID_QUERY')
        expect(err?.details.parameter).toBe('cursor')
        expect(err?.message).toMatch(/store\.page\(\)/)
        expect(err?.message).toMatch(/GET \/prices/)
      }
      await refusal(store.query(resumed))
      await refusal(Promise.resolve().then(() => store.plan(resumed)))
      await refusal(store.ask(resumed))
      // A cursor from another store, or altered, is refused the same way: the layout alone is checked before it.
      const altered = Buffer.from(next!, 'base64url')
      altered[altered.length - 1]! ^= 1
      await refusal(store.query({ symbol: 'BTC', cursor: altered.toString('base64url') }))
      // Every other rule comes first: the error the same parameters give without the cursor.
      expect(await codeOf(store.query({ symbol: 'BTC', offset: '4', cursor: next! }))).toEqual(BAD)
      expect(await codeOf(store.query({ symbol: 'BTC', limit: '0', cursor: next! }))).toEqual({ code: 'PRICE_INVALID_QUERY', parameter: 'limit' })
      expect(await codeOf(store.query({ symbol: 'BTC', cursor: 'garbage' }))).toEqual(BAD)
      // The empty cursor: the first page, as without it, through every entry point.
      const first = { symbol: 'BTC', limit: '4', cursor: '' }
      const plain = await store.query({ symbol: 'BTC', limit: '4' })
      expect(await store.query(first)).toEqual(plain)
      expect(await store.run(store.plan(first))).toEqual(plain)
      expect((await store.ask(first)).answer).toEqual(plain)
      expect((await store.page(first)).answer).toEqual(plain)
    } finally {
      await store.close()
    }
  })
})
