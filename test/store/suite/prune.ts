/**
 * prune() and the retention option on the suite's backend: records before
 * `before` go (of one symbol or all) and never one at or after it, sealed and
 * open hours alike, with the result the reference model reports; every query
 * form then answers as the model over what is left, after a reopen too, with
 * warm caches too; what the database holds afterwards (log, chunks, heads,
 * symbols); dry runs, progress, abort and bad options; retention at open and
 * as data arrives.
 */
import { describe, expect, it } from 'vitest'
import { PriceStore, isPriceStoreError } from '../../../src/index.js'
import type { PriceAnswer, PriceRecord, PriceStoreOptions, QueryParams } from '../../../src/index.js'
import { KEYS_PART, readChunkKey, readHeadsPeriod, readLogKey } from '../../../src/keys/key-layout.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../../src/testing/records.js'
import { compareUtf8, outcomeOf, referencePrune, referenceQuery, storedRecords } from '../../../src/testing/reference-model.js'
import { type AnyLevel, type FeatureTests, useStores } from './context.js'
import { HOUR, MAX, MINUTE } from './model.js'

const DAY = 24 * HOUR
const LIMITS = { maxLimit: 100_000, maxSymbols: 100, maxRangePoints: 100_000 }
const SYMBOLS = ['BTC', 'BTC-USD', 'ETH']

/** One record a `step` ms for `count` steps from `start`, for each symbol. */
function series(symbols: readonly string[], start: number, step: number, count: number): InputRecord[] {
  return symbols.flatMap((symbol) => Array.from({ length: count }, (_, i) => makeRecord({ symbol, timestamp: start + i * step })))
}

/** Every query form that shows what a store holds, against the model over `left`. */
async function expectHolds(store: PriceStore, left: readonly PriceRecord[], symbols: readonly string[] = SYMBOLS, label = ''): Promise<void> {
  const check = async (params: QueryParams, run: () => Promise<PriceAnswer>): Promise<void> => {
    expect(await outcomeOf(run), `${label} ${JSON.stringify(params)}`).toEqual(referenceQuery(left, params, { provider: TEST_PROVIDER, limits: LIMITS }))
  }
  for (const symbol of symbols) {
    await check({ symbol, limit: '100000' }, () => store.latest(symbol, { limit: 100_000 }))
    await check({ symbol }, () => store.latest(symbol))
    for (const interval of [1, 10 * MINUTE, HOUR]) {
      const params = { symbol, fromTimestamp: '0', toTimestamp: String(MAX), interval: String(interval) }
      await check(params, () => store.range(symbol, { from: 0, to: MAX, interval }))
    }
    await check({ symbol, toTimestamp: String(T0 + 2 * HOUR) }, () => store.latest(symbol, { to: T0 + 2 * HOUR }))
  }
  await check({}, () => store.several())
  expect(await store.symbols(), `${label} symbols()`).toEqual([...new Set(left.map((r) => r.symbol))].sort(compareUtf8))
}

/** What the database holds: log entries by hour, chunk keys, heads keys, symbols. */
async function layoutOf(db: AnyLevel) {
  const bytes = (name: string) => db.sublevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' })
  return {
    log: (await bytes('l').keys().all()).map((key) => readLogKey(key).period),
    chunks: (await bytes('c').keys().all()).map(readChunkKey),
    heads: (await bytes('h').keys().all()).map(readHeadsPeriod),
    symbols: (await bytes('s').keys().all()).map((key) => Buffer.from(key).toString('utf8')),
  }
}

export const pruneTests: FeatureTests = (suite) => {
  describe('prune', () => {
    const { openStore, newDb, reopenDb } = useStores(suite)

    /**
     * Writes, closes (sealing every hour) and reopens: every record is in a
     * chunk. `db` is the database the store is open on now.
     */
    async function sealedStore(records: readonly InputRecord[], extra: Partial<PriceStoreOptions> = {}): Promise<{ store: PriceStore; db: AnyLevel; reopen: () => Promise<PriceStore> }> {
      const options = { limits: LIMITS, ...extra }
      const firstDb = newDb()
      const first = await openStore(options, firstDb)
      await first.putMany(records)
      await first.close()
      const db = reopenDb(firstDb)
      const store = await openStore(options, db)
      return {
        store,
        db,
        reopen: async () => {
          await store.close()
          return openStore(options, reopenDb(db))
        },
      }
    }

    it('cuts an hour in two: records before `before` go, the rest stays, in every query form, after a reopen too', async () => {
      const records = series(SYMBOLS, T0, 7 * MINUTE + 13, 60)
      const { store, db, reopen } = await sealedStore(records)
      const before = T0 + 2 * HOUR + 23 * MINUTE + 5
      const model = referencePrune(storedRecords(records, TEST_PROVIDER), before)
      expect(await store.prune({ before })).toEqual(model.result)
      await expectHolds(store, model.left)
      const layout = await layoutOf(db)
      expect(Math.min(...layout.chunks.map((key) => key.period))).toBe(Math.floor(before / HOUR))
      // Pruning again removes nothing more.
      expect(await store.prune({ before })).toEqual({ records: 0, hours: 0, symbols: [] })
      await expectHolds(await reopen(), model.left, SYMBOLS, 'reopened')
    })

    it('at an hour boundary whole hours go, and no chunk is rewritten', async () => {
      const records = series(SYMBOLS, T0, 11 * MINUTE, 40)
      const { store, db } = await sealedStore(records)
      const before = T0 + 3 * HOUR
      const { chunks: chunksBefore } = await layoutOf(db)
      const model = referencePrune(storedRecords(records, TEST_PROVIDER), before)
      expect(await store.prune({ before })).toEqual(model.result)
      expect(model.result.hours).toBe(3)
      await expectHolds(store, model.left)
      const { chunks, heads } = await layoutOf(db)
      expect(chunks).toEqual(chunksBefore.filter((key) => key.period >= before / HOUR))
      expect(heads.every((period) => period >= before / HOUR)).toBe(true)
    })

    it('before 0 removes nothing; before past every record removes everything, symbols included', async () => {
      const records = series(SYMBOLS, T0, 13 * MINUTE, 20)
      const { store, db } = await sealedStore(records)
      expect(await store.prune({ before: 0 })).toEqual({ records: 0, hours: 0, symbols: [] })
      await expectHolds(store, storedRecords(records, TEST_PROVIDER))
      const model = referencePrune(storedRecords(records, TEST_PROVIDER), MAX)
      expect(await store.prune({ before: MAX })).toEqual(model.result)
      expect(model.result.symbols).toEqual(SYMBOLS)
      await expectHolds(store, [])
      expect(await layoutOf(db)).toEqual({ log: [], chunks: [], heads: [], symbols: [] })
      // The store takes new records of a pruned symbol as new.
      await store.put(makeRecord({ symbol: 'ETH', timestamp: T0 }))
      await expectHolds(store, storedRecords([makeRecord({ symbol: 'ETH', timestamp: T0 })], TEST_PROVIDER))
    })

    it('removes records still in the open area too, and a symbol left with none leaves symbols()', async () => {
      const store = await openStore({ limits: LIMITS })
      const records = series(SYMBOLS, T0, 6 * MINUTE + 1, 40)
      await store.putMany(records)
      const stored = storedRecords(records, TEST_PROVIDER)
      const model = referencePrune(stored, T0 + 3 * HOUR + 7 * MINUTE)
      expect(await store.prune({ before: T0 + 3 * HOUR + 7 * MINUTE })).toEqual(model.result)
      await expectHolds(store, model.left)
      const all = referencePrune(model.left, MAX, 'ETH')
      expect(await store.prune({ before: MAX, symbol: 'ETH' })).toEqual(all.result)
      expect(all.result.symbols).toEqual(['ETH'])
      await expectHolds(store, all.left)
    })

    it('removes records still in the open area (the hours it reaches are sealed first), in the current hour too', async () => {
      const db = newDb()
      const store = await openStore({ limits: LIMITS }, db)
      const records = series(SYMBOLS, T0, 3 * MINUTE, 15)
      await store.putMany(records)
      // Nothing is due yet: every record is in the log and the open area.
      expect((await layoutOf(db)).chunks).toEqual([])
      const before = T0 + 20 * MINUTE + 1
      const model = referencePrune(storedRecords(records, TEST_PROVIDER), before)
      expect(await store.prune({ before })).toEqual(model.result)
      await expectHolds(store, model.left)
      const layout = await layoutOf(db)
      expect(layout.log).toEqual([])
      // Later writes to the hour merge with what the prune left.
      const more = series(['ETH'], T0 + 50 * MINUTE + 7, MINUTE, 3)
      await store.putMany(more)
      await expectHolds(store, [...model.left, ...storedRecords(more, TEST_PROVIDER)])
    })

    it('removes a late record waiting in the log over a sealed hour, and keeps a late record at or after `before`', async () => {
      const records = series(['BTC'], T0, 10 * MINUTE + 1, 18)
      const sealed = await sealedStore(records)
      await sealed.store.close()
      // Reopened, the store has seen no recent record, so the late ones are not due and stay in the log.
      const db = reopenDb(sealed.db)
      const store = await openStore({ limits: LIMITS }, db)
      const late = [makeRecord({ symbol: 'BTC', timestamp: T0 + 5 * MINUTE, id: 'late-1' }), makeRecord({ symbol: 'BTC', timestamp: T0 + 50 * MINUTE, id: 'late-2' })]
      await store.putMany(late)
      expect((await layoutOf(db)).log).toEqual([T0 / HOUR])
      const before = T0 + 30 * MINUTE
      const model = referencePrune(storedRecords([...records, ...late], TEST_PROVIDER), before)
      expect(await store.prune({ before })).toEqual(model.result)
      await expectHolds(store, model.left, ['BTC'])
    })

    it.each([8, 128])('keeps the caches right: warm hot tails (%i a symbol), heads and chunks give the pruned answers at once', async (recordsPerSymbol) => {
      const records = series(SYMBOLS, T0, 5 * MINUTE, 60)
      const { store } = await sealedStore(records, { cache: { recordsPerSymbol } })
      const stored = storedRecords(records, TEST_PROVIDER)
      // Warm every cache: tails (latest), heads (10-minute ranges), chunks (as-of reads).
      await expectHolds(store, stored)
      const model = referencePrune(stored, T0 + 150 * MINUTE + 2)
      await store.prune({ before: T0 + 150 * MINUTE + 2 })
      await expectHolds(store, model.left, SYMBOLS, 'after a cut')
      // Everything of one symbol, its tail included: latest gives [] and several leaves it out.
      const all = referencePrune(model.left, MAX, 'ETH')
      await store.prune({ before: MAX, symbol: 'ETH' })
      expect(await store.latest('ETH')).toEqual([])
      await expectHolds(store, all.left, SYMBOLS, 'after ETH went')
    })

    it('rewrites an hour of many pages into fewer, deleting the pages left over and keeping its key column', async () => {
      const records = series(['BTC'], T0, 700, 5000)
      const { store, db } = await sealedStore(records)
      const parts = async (): Promise<number[]> => (await layoutOf(db)).chunks.filter((key) => key.period === T0 / HOUR).map((key) => key.part)
      const pagesBefore = (await parts()).length - 1
      expect(await parts()).toEqual([...Array.from({ length: pagesBefore }, (_, i) => i), KEYS_PART])
      const before = T0 + 2000 * 700 + 1
      const model = referencePrune(storedRecords(records, TEST_PROVIDER), before)
      expect(await store.prune({ before })).toEqual(model.result)
      const pagesAfter = (await parts()).length - 1
      expect(pagesAfter).toBeLessThan(pagesBefore)
      expect(await parts()).toEqual([...Array.from({ length: pagesAfter }, (_, i) => i), KEYS_PART])
      await expectHolds(store, model.left, ['BTC'])
    })

    it('of one symbol touches no other; an unknown symbol removes nothing', async () => {
      const records = series(SYMBOLS, T0, 9 * MINUTE, 30)
      const { store, db } = await sealedStore(records)
      expect(await store.prune({ before: T0 + DAY, symbol: 'NOPE' })).toEqual({ records: 0, hours: 0, symbols: [] })
      const model = referencePrune(storedRecords(records, TEST_PROVIDER), T0 + DAY, 'BTC')
      expect(await store.prune({ before: T0 + DAY, symbol: 'BTC' })).toEqual(model.result)
      expect(model.result.symbols).toEqual(['BTC'])
      await expectHolds(store, model.left)
      const cut = referencePrune(model.left, T0 + 90 * MINUTE + 1, 'BTC-USD')
      expect(await store.prune({ before: T0 + 90 * MINUTE + 1, symbol: 'BTC-USD' })).toEqual(cut.result)
      await expectHolds(store, cut.left)
      expect((await layoutOf(db)).symbols).toEqual(['BTC-USD', 'ETH'])
    })

    it('a dry run reports what a prune removes and removes nothing', async () => {
      const store = await openStore({ limits: LIMITS })
      const records = series(SYMBOLS, T0, 6 * MINUTE + 1, 40)
      // Some sealed, some open: both are counted.
      await store.putMany(records)
      const before = T0 + 3 * HOUR + 7 * MINUTE
      const stored = storedRecords(records, TEST_PROVIDER)
      for (const symbol of [undefined, 'ETH', 'NOPE']) {
        const model = referencePrune(stored, before, symbol)
        expect(await store.prune({ before, dryRun: true, ...(symbol === undefined ? {} : { symbol }) })).toEqual(model.result)
      }
      expect((await store.prune({ before: MAX, dryRun: true })).symbols).toEqual(SYMBOLS)
      await expectHolds(store, stored)
    })

    it('reports progress and stops between steps on abort', async () => {
      const records = series(SYMBOLS, T0, 10 * MINUTE, 6 * 24 * 3)
      const { store } = await sealedStore(records)
      const seen: number[] = []
      const result = await store.prune({ before: T0 + 2 * DAY, onProgress: (progress) => seen.push(progress.records) })
      expect(seen.at(-1)).toBe(result.records)
      expect(seen).toEqual([...seen].sort((a, b) => a - b))
      const controller = new AbortController()
      controller.abort(new Error('stop'))
      const aborted = await store.prune({ before: MAX, signal: controller.signal }).catch((err: unknown) => err)
      expect(isPriceStoreError(aborted, 'PRICE_ABORTED')).toBe(true)
      await expectHolds(store, referencePrune(storedRecords(records, TEST_PROVIDER), T0 + 2 * DAY).left)
    })

    it('refuses bad options with a coded error naming the parameter and changes nothing; PRICE_NOT_OPEN after close', async () => {
      const records = series(SYMBOLS, T0, 10 * MINUTE, 10)
      const { store } = await sealedStore(records)
      const cases: [unknown, string, string][] = [
        [undefined, 'PRICE_INVALID_QUERY', 'options'],
        [{}, 'PRICE_INVALID_RANGE', 'before'],
        [{ before: -1 }, 'PRICE_INVALID_RANGE', 'before'],
        [{ before: 1.5 }, 'PRICE_INVALID_RANGE', 'before'],
        [{ before: '5' }, 'PRICE_INVALID_RANGE', 'before'],
        [{ before: 2 ** 53 }, 'PRICE_INVALID_RANGE', 'before'],
        [{ before: T0 + DAY, symbol: 'A,B' }, 'PRICE_INVALID_SYMBOL', 'symbol'],
        [{ before: T0 + DAY, symbol: '' }, 'PRICE_INVALID_SYMBOL', 'symbol'],
        [{ before: T0 + DAY, dryRun: 'yes' }, 'PRICE_INVALID_QUERY', 'dryRun'],
        [{ before: T0 + DAY, onProgress: 1 }, 'PRICE_INVALID_QUERY', 'onProgress'],
        [{ before: T0 + DAY, signal: {} }, 'PRICE_INVALID_QUERY', 'signal'],
      ]
      for (const [options, code, parameter] of cases) {
        const err = await store.prune(options as never).catch((e: unknown) => e)
        expect(isPriceStoreError(err, code as never), `${JSON.stringify(options)}: ${String(err)}`).toBe(true)
        expect((err as { details: { parameter?: string } }).details.parameter).toBe(parameter)
      }
      await expectHolds(store, storedRecords(records, TEST_PROVIDER))
      await store.close()
      expect(isPriceStoreError(await store.prune({ before: 1 }).catch((e: unknown) => e), 'PRICE_NOT_OPEN')).toBe(true)
    })
  })

  describe('the retention option', () => {
    const { openStore, newDb, reopenDb, options } = useStores(suite)

    it('is checked when the store is opened', async () => {
      const db = newDb()
      for (const retention of [null, 5, {}, { days: 0 }, { days: 1.5 }, { days: '7' }]) {
        const err = await PriceStore.open(db, options({ retention } as never)).catch((e: unknown) => e)
        expect(isPriceStoreError(err, 'PRICE_INVALID_OPTIONS'), JSON.stringify(retention)).toBe(true)
      }
    })

    it('keeps the days before the newest record of a historical store, whole hours at a time, at open and as data arrives', async () => {
      const records = series(['BTC', 'ETH'], T0, 20 * MINUTE, 3 * 24 * 3)
      const db = newDb()
      const plain = await openStore({ limits: LIMITS }, db)
      await plain.putMany(records)
      await plain.close()
      const store = await openStore({ limits: LIMITS, retention: { days: 1 } }, reopenDb(db))
      // Prunes run one at a time: this one waits for the background one started at open.
      await store.prune({ before: 0 })
      const newestHour = Math.floor(Math.max(...records.map((r) => r.timestamp)) / HOUR)
      let left = referencePrune(storedRecords(records, TEST_PROVIDER), (newestHour - 24) * HOUR).left
      await expectHolds(store, left, ['BTC', 'ETH'], 'at open')
      // Data moves on by a few hours: the oldest hours follow.
      const more = series(['BTC'], (newestHour + 4) * HOUR + 5, 20 * MINUTE, 3)
      await store.putMany(more)
      await store.prune({ before: 0 })
      left = referencePrune([...left, ...storedRecords(more, TEST_PROVIDER)], (newestHour + 4 - 24) * HOUR).left
      await expectHolds(store, left, ['BTC', 'ETH'], 'after new data')
    })

    it('counts back from the current hour when a record is stamped in the future', async () => {
      const store = await openStore({ limits: LIMITS, retention: { days: 2 } })
      const nowHour = Math.floor(Date.now() / HOUR)
      const records = [
        ...series(['BTC'], (nowHour - 72) * HOUR, HOUR, 72),
        makeRecord({ symbol: 'BTC', timestamp: (nowHour + 24 * 365) * HOUR }),
      ]
      await store.putMany(records)
      await store.prune({ before: 0 })
      const hourNow = Math.floor(Date.now() / HOUR)
      const left = await store.latest('BTC', { limit: 1000 })
      const oldest = Math.min(...left.map((r) => r.timestamp))
      // At least 48 hours before the current hour are kept (the hour may have turned while the test ran).
      expect(oldest).toBeGreaterThanOrEqual((nowHour - 48) * HOUR)
      expect(oldest).toBeLessThanOrEqual((hourNow - 48) * HOUR)
      expect(left.length).toBe(records.filter((r) => r.timestamp >= oldest).length)
    })
  })
}
