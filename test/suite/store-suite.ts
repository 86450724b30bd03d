/**
 * The abstract store suite (STYLE §4): one factory-driven set of cases that
 * runs against every backend, so they cannot drift apart. Cases that need real
 * persistence are gated with `it.skipIf(!persistent)`. Expectations come from
 * a small reference model (filter + sort over the records written), never from
 * the store's own output.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AbstractLevel } from 'abstract-level'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS, PriceStore } from '../../src/index.js'
import type { NewPriceRecord, PriceStoreOptions } from '../../src/index.js'
import { readChunkPart, readCompactId } from '../../src/keys/chunk-codec.js'
import { readHeads } from '../../src/keys/heads-codec.js'
import { PERIOD_MS } from '../../src/keys/key-layout.js'
import { readLogEntry } from '../../src/keys/log-codec.js'
import {
  PROVIDER, T0, byUtf8, difference, expected, expectExact, rec, rejectsCode, throwsCode, type Input,
} from '../unit/helpers.js'

type AnyLevel = AbstractLevel<any, any, any>

export interface StoreSuiteOptions {
  /** Shown in the describe title. */
  readonly name: string
  /** A new, unopened database at `dir` (a fresh temporary directory per test; in-memory backends ignore it). */
  readonly factory: (dir: string) => AnyLevel
  /** Whether data outlives the database object (reopen, lock and on-disk corruption cases run only then). */
  readonly persistent?: boolean
}

/** A record as `rec()` makes it: typed as the store's input, whatever the test put in it. */
type Written = ReturnType<typeof rec>

/** A batch the type checker refuses, passed as a JavaScript caller would (the store checks it at run time). */
function unchecked(records: readonly unknown[]): readonly NewPriceRecord[] {
  return records as readonly NewPriceRecord[]
}

const MAX = Number.MAX_SAFE_INTEGER
const MINUTE = 60_000
const HOUR = 3_600_000
/** An hour boundary: 2023-11-14T22:00:00Z. */
const H = 1_699_999_200_000

// ---------------------------------------------------------------------------
// Reference model: what every query must answer, by filtering and sorting.

function ascending(a: Input, b: Input): number {
  return (a.timestamp as number) - (b.timestamp as number) || byUtf8(a.id as string, b.id as string)
}

class Model {
  readonly #rows = new Map<string, Input>()

  add(records: Iterable<Input>): this {
    // Same (symbol, timestamp, id) replaces; symbols and ids never hold NUL.
    for (const r of records) this.#rows.set(`${r.symbol as string}\u0000${r.timestamp as number}\u0000${r.id as string}`, r)
    return this
  }

  #of(symbol: string, from = 0, to = MAX): Input[] {
    return [...this.#rows.values()]
      .filter((r) => r.symbol === symbol && (r.timestamp as number) >= from && (r.timestamp as number) <= to)
      .sort(ascending)
  }

  latest(symbol: string, o: { limit?: number; offset?: number; from?: number; to?: number } = {}): Input[] {
    const offset = o.offset ?? 0
    return this.#of(symbol, o.from, o.to).reverse().slice(offset, offset + (o.limit ?? 1)).map((r) => expected(r))
  }

  several(symbols?: readonly string[], o: { from?: number; to?: number } = {}): Record<string, unknown> {
    const names = symbols === undefined ? this.symbols() : [...new Set(symbols)]
    const out: Record<string, unknown> = {}
    for (const name of names) {
      const [latest] = this.latest(name, { ...o, limit: 1 })
      if (latest !== undefined) Object.defineProperty(out, name, { value: latest, enumerable: true, writable: true, configurable: true })
    }
    return out
  }

  range(symbol: string, o: { from: number; to: number; interval: number; offset?: number; limit?: number }): Input[] {
    const buckets = new Map<number, Input>()
    for (const r of this.#of(symbol, o.from, o.to)) buckets.set(Math.floor((r.timestamp as number) / o.interval), r) // ascending: last wins
    const sampled = [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([, r]) => r)
    const offset = o.offset ?? 0
    return sampled.slice(offset, o.limit === undefined ? undefined : offset + o.limit).map((r) => expected(r, { minutes: true }))
  }

  symbols(): string[] {
    return [...new Set([...this.#rows.values()].map((r) => r.symbol as string))].sort(byUtf8)
  }
}

/** A mixed data set: several symbols, a prefix pair, shared milliseconds, hour and minute edges, UTF-8 order traps. */
function seedRecords(): Written[] {
  const out: Written[] = []
  for (let k = 0; k < 14; k++) out.push(rec({ symbol: 'BTC', timestamp: H - 20 * MINUTE + k * 7 * MINUTE + (k % 3) * 999 }))
  // Three records in one millisecond, ids whose UTF-8 and UTF-16 orders differ.
  for (const id of ['m', '\uE000', '\u{10000}']) out.push(rec({ symbol: 'BTC', timestamp: H + 30 * MINUTE, id }))
  out.push(rec({ symbol: 'BTC', timestamp: H + HOUR - 1 }), rec({ symbol: 'BTC', timestamp: H + HOUR }))
  for (let k = 0; k < 5; k++) out.push(rec({ symbol: 'ETH', timestamp: H + k * 20 * MINUTE + 5, value: 2000 + k }))
  for (let k = 0; k < 3; k++) out.push(rec({ symbol: 'BTC-USD', timestamp: H + 2 * HOUR + k })) // newer than every BTC record
  out.push(rec({ symbol: '\uE000x', timestamp: H + 1 }), rec({ symbol: '\u{1F600}', timestamp: H + 2 }), rec({ symbol: 'a', timestamp: H + 3 }))
  return out
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of iterable) out.push(item)
  return out
}

// ---------------------------------------------------------------------------

export function storeSuite({ name, factory, persistent = false }: StoreSuiteOptions): void {
  describe(`PriceStore on ${name}`, () => {
    let dir: string
    let stores: PriceStore[]
    let dbs: AnyLevel[]

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'price-store-suite-'))
      stores = []
      dbs = []
    })

    afterEach(async () => {
      for (const store of stores) await store.close().catch(() => {})
      // abstract-level opens a new database on its own (deferred open), even one no store opened: close them all.
      for (const db of dbs) await db.close().catch(() => {})
      await rm(dir, { recursive: true, force: true })
    })

    const options = (extra: Partial<PriceStoreOptions> = {}): PriceStoreOptions => ({ provider: PROVIDER, ...extra })

    /** A new database from the factory, closed after the test. */
    function newDb(): AnyLevel {
      const db = factory(dir)
      dbs.push(db)
      return db
    }

    async function openStore(extra: Partial<PriceStoreOptions> = {}, db: AnyLevel = newDb()): Promise<PriceStore> {
      const store = await PriceStore.open(db, options(extra))
      stores.push(store)
      return store
    }

    async function seeded(extra: Partial<PriceStoreOptions> = {}): Promise<{ store: PriceStore; model: Model }> {
      const store = await openStore(extra)
      const records = seedRecords()
      // Two batches, so the data does not all arrive in one write.
      await store.putMany(records.slice(0, 10))
      await store.putMany(records.slice(10))
      return { store, model: new Model().add(records) }
    }

    describe('lifecycle', () => {
      it('is closed until opened, open after open(), closed after close(); both are idempotent', async () => {
        const store = new PriceStore(newDb(), options())
        stores.push(store)
        expect(store.status).toBe('closed')
        await store.open()
        expect(store.status).toBe('open')
        await store.open()
        expect(store.status).toBe('open')
        await store.close()
        expect(store.status).toBe('closed')
        await store.close()
        expect(store.status).toBe('closed')
      })

      it('exposes its provider and limits, with defaults filled in', async () => {
        const store = await openStore({ limits: { maxLimit: 10 } })
        expect(store.provider).toEqual(PROVIDER)
        expect(store.limits).toEqual({ ...DEFAULT_LIMITS, maxLimit: 10 })
      })

      const operations: [string, (s: PriceStore) => Promise<unknown>][] = [
        ['put', (s) => s.put(rec())],
        ['putMany', (s) => s.putMany([rec()])],
        ['latest', (s) => s.latest('BTC')],
        ['several', (s) => s.several()],
        ['range', (s) => s.range('BTC', { from: 0, to: 10, interval: 1 })],
        ['query', (s) => s.query(new URLSearchParams('symbol=BTC'))],
        ['symbols', (s) => s.symbols()],
      ]

      it.each(operations)('%s before open() → PRICE_NOT_OPEN', async (_op, run) => {
        const store = new PriceStore(newDb(), options())
        await rejectsCode(run(store), 'PRICE_NOT_OPEN')
      })

      it.each(operations)('%s after close() → PRICE_NOT_OPEN', async (_op, run) => {
        const store = await openStore()
        await store.put(rec())
        await store.close()
        await rejectsCode(run(store), 'PRICE_NOT_OPEN')
      })

      it('rangeStream before open and after close → PRICE_NOT_OPEN when called', async () => {
        const store = new PriceStore(newDb(), options())
        throwsCode(() => store.rangeStream('BTC', { from: 0, to: 1, interval: 1 }), 'PRICE_NOT_OPEN')
        await store.open()
        stores.push(store)
        await store.close()
        throwsCode(() => store.rangeStream('BTC', { from: 0, to: 1, interval: 1 }), 'PRICE_NOT_OPEN')
      })

      it('a write issued after close() started → PRICE_NOT_OPEN', async () => {
        const store = await openStore()
        const closing = store.close()
        await rejectsCode(store.put(rec()), 'PRICE_NOT_OPEN')
        await closing
      })

      it('close() waits for a pending putMany, which lands', async () => {
        const db = newDb()
        const store = await openStore({}, db)
        const batch = Array.from({ length: 50 }, (_, i) => rec({ symbol: 'PEND', timestamp: T0 + i }))
        const writing = store.putMany(batch)
        const closing = store.close()
        const outcome = await writing.then((count) => ({ count }), (err: unknown) => ({ err }))
        await closing
        expect(store.status).toBe('closed')
        expect(outcome).toEqual({ count: 50 })
        const again = await openStore({}, persistent ? newDb() : db)
        expectExact(await again.latest('PEND', { limit: 100 }), new Model().add(batch).latest('PEND', { limit: 100 }))
      })

      it('concurrent putMany calls all land', async () => {
        const store = await openStore()
        const batches = Array.from({ length: 25 }, (_, b) =>
          Array.from({ length: 8 }, (_, i) => rec({ symbol: `C${(b + i) % 5}`, timestamp: T0 + b * 100 + i })))
        const counts = await Promise.all(batches.map((batch) => store.putMany(batch)))
        expect(counts).toEqual(batches.map(() => 8))
        const model = new Model().add(batches.flat())
        expect(await store.symbols()).toEqual(['C0', 'C1', 'C2', 'C3', 'C4'])
        for (const symbol of model.symbols()) {
          expectExact(await store.latest(symbol, { limit: 3000 }), model.latest(symbol, { limit: 3000 }))
        }
      })
    })

    describe('invalid options → PRICE_INVALID_OPTIONS', () => {
      const bad: [string, unknown][] = [
        ['undefined', undefined],
        ['null', null],
        ['no provider', {}],
        ['provider null', { provider: null }],
        ['provider without id', { provider: { name: 'redstone', publicKey: 'k' } }],
        ['provider with an empty name', { provider: { ...PROVIDER, name: '' } }],
        ['provider with a numeric publicKey', { provider: { ...PROVIDER, publicKey: 5 } }],
        ['limits null', { provider: PROVIDER, limits: null }],
        ['maxLimit 0', { provider: PROVIDER, limits: { maxLimit: 0 } }],
        ['maxLimit 1.5', { provider: PROVIDER, limits: { maxLimit: 1.5 } }],
        ['maxSymbols -1', { provider: PROVIDER, limits: { maxSymbols: -1 } }],
        ['maxRangePoints NaN', { provider: PROVIDER, limits: { maxRangePoints: Number.NaN } }],
        ['maxLimit as a string', { provider: PROVIDER, limits: { maxLimit: '10' } }],
        ['maxRangePoints Infinity', { provider: PROVIDER, limits: { maxRangePoints: Number.POSITIVE_INFINITY } }],
        ['sync as a string', { provider: PROVIDER, sync: 'yes' }],
        ['cache null', { provider: PROVIDER, cache: null }],
        ['cache.recordsPerSymbol -1', { provider: PROVIDER, cache: { recordsPerSymbol: -1 } }],
        ['cache.headBytes 2.5', { provider: PROVIDER, cache: { headBytes: 2.5 } }],
        ['cache.chunkBytes as a string', { provider: PROVIDER, cache: { chunkBytes: '64' } }],
        ['openBytes -1', { provider: PROVIDER, openBytes: -1 }],
      ]

      it.each(bad)('%s: the constructor throws', (_n, opts) => {
        throwsCode(() => new PriceStore(newDb(), opts as PriceStoreOptions), 'PRICE_INVALID_OPTIONS')
      })

      it.each(bad)('%s: PriceStore.open rejects', async (_n, opts) => {
        await rejectsCode(PriceStore.open(newDb(), opts as PriceStoreOptions), 'PRICE_INVALID_OPTIONS')
      })

      it('custom limits are enforced', async () => {
        const store = await openStore({ limits: { maxLimit: 5, maxSymbols: 2 } })
        await rejectsCode(store.latest('BTC', { limit: 6 }), 'PRICE_INVALID_QUERY')
        await rejectsCode(store.several(['A', 'B', 'C']), 'PRICE_INVALID_QUERY')
        await rejectsCode(store.query(new URLSearchParams('symbol=BTC&limit=6')), 'PRICE_INVALID_QUERY')
        await expect(store.latest('BTC', { limit: 5 })).resolves.toEqual([])
      })
    })

    describe('writing and reading', () => {
      it('put then latest returns the record exactly: provider and public key joined, contract field order', async () => {
        const store = await openStore()
        const input = rec()
        await expect(store.put(input)).resolves.toBeUndefined()
        const [got] = await store.latest('BTC')
        expectExact(got, expected(input))
        expect(Object.keys(got ?? {})).toEqual([
          'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'providerPublicKey',
        ])
      })

      it('putMany returns the count, accepts any iterable, and 0 for an empty batch', async () => {
        const store = await openStore()
        function* generate() {
          for (let i = 0; i < 5; i++) yield rec({ timestamp: T0 + i })
        }
        await expect(store.putMany(generate())).resolves.toBe(5)
        await expect(store.putMany([])).resolves.toBe(0)
        expect((await store.latest('BTC', { limit: 10 })).length).toBe(5)
      })

      it('keeps extra fields in order, value -0, a tricky source; drops input `minutes`; accepts an equal providerPublicKey', async () => {
        const store = await openStore()
        const source = JSON.parse('{"__proto__": {"x": 1}, "lone": "\\ud800", "n": [1.5, null, {"deep": true}]}') as Record<string, unknown>
        const input = rec({ value: -0, source, minutes: 99, evmSignature: '0xabc', zeta: { z: [1] }, providerPublicKey: PROVIDER.publicKey })
        await store.put(input)
        const [got] = await store.latest('BTC')
        expectExact(got, expected(input))
        expect(Object.is(got?.value, -0)).toBe(true)
        expect(Object.hasOwn(got?.source ?? {}, '__proto__')).toBe(true)
        expect(Object.keys(got ?? {})).toEqual([
          'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp',
          'evmSignature', 'zeta', 'providerPublicKey',
        ])
        const [sampled] = await store.range('BTC', { from: 0, to: MAX, interval: 1 })
        expectExact(sampled, expected(input, { minutes: true }))
        expect(sampled?.minutes).toBe(new Date(T0).getUTCMinutes())
      })

      it('the same (symbol, timestamp, id) replaces; within one batch the last one wins', async () => {
        const store = await openStore()
        await store.put(rec({ value: 1 }))
        const second = rec({ value: 2, note: 'second' })
        await store.put(second)
        expectExact(await store.latest('BTC', { limit: 10 }), [expected(second)])
        const third = rec({ value: 3 })
        const fourth = rec({ value: 4 })
        await store.putMany([third, fourth])
        expectExact(await store.latest('BTC', { limit: 10 }), [expected(fourth)])
      })

      it('different ids at the same timestamp are all kept, ordered by id UTF-8 bytes (not UTF-16)', async () => {
        const store = await openStore()
        const ids = ['a', 'B', '\u{10000}', '\uE000', 'b', '\uFFFF', 'ab']
        const records = ids.map((id) => rec({ id, timestamp: T0 }))
        await store.putMany([rec({ timestamp: T0 - 1 }), ...records, rec({ timestamp: T0 + 1 })])
        const newestFirst = [...ids].sort(byUtf8).reverse()
        expect(newestFirst).toEqual(['\u{10000}', '\uFFFF', '\uE000', 'b', 'ab', 'a', 'B'])
        const got = await store.latest('BTC', { limit: 10, from: T0, to: T0 })
        expect(got.map((r) => r.id)).toEqual(newestFirst)
        expectExact(got, newestFirst.map((id) => expected(records[ids.indexOf(id)] as Input)))
        // The range form represents the millisecond by the greatest id; several picks it too.
        expect((await store.range('BTC', { from: T0, to: T0, interval: 1 })).map((r) => r.id)).toEqual(['\u{10000}'])
        expect((await store.several(['BTC'], { to: T0 })).BTC?.id).toBe('\u{10000}')
      })

      it('BTC and BTC-USD (and BT, BTC.) stay apart in every form', async () => {
        const store = await openStore()
        const all = [
          rec({ symbol: 'BTC', timestamp: T0 }),
          rec({ symbol: 'BTC-USD', timestamp: T0 + 1 }),
          rec({ symbol: 'BTC.', timestamp: T0 + 2 }),
          rec({ symbol: 'BT', timestamp: T0 + 3 }),
          rec({ symbol: 'BTCB', timestamp: T0 - 1 }),
        ]
        await store.putMany(all)
        const model = new Model().add(all)
        for (const symbol of ['BTC', 'BTC-USD', 'BT']) {
          expectExact(await store.latest(symbol, { limit: 10 }), model.latest(symbol, { limit: 10 }))
          expectExact(await store.range(symbol, { from: 0, to: MAX, interval: 1 }), model.range(symbol, { from: 0, to: MAX, interval: 1 }))
          expectExact(await store.query({ symbol, limit: '10' }), model.latest(symbol, { limit: 10 }))
        }
        expectExact(await store.several(['BTC']), model.several(['BTC']))
        expect(await store.symbols()).toEqual(['BT', 'BTC', 'BTC-USD', 'BTC.', 'BTCB'])
      })
    })

    describe('putMany is atomic', () => {
      it.each([0, 2, 4])('a bad record at position %d → PRICE_INVALID_RECORD index %d; nothing of the batch is visible', async (k) => {
        const { store, model } = await seeded()
        const before = { symbols: await store.symbols(), several: await store.several(), btc: await store.latest('BTC', { limit: 100 }) }
        const batch: Written[] = Array.from({ length: 5 }, (_, i) => rec({ symbol: `NEW${i}`, timestamp: H + 10 * HOUR + i }))
        batch.push(rec({ symbol: 'BTC', timestamp: H + 10 * HOUR })) // would become BTC's latest
        batch[k] = rec({ symbol: `NEW${k}`, value: 'not a number' })
        const err = await rejectsCode(store.putMany(batch), 'PRICE_INVALID_RECORD')
        expect(err.details).toEqual({ index: k, field: 'value' })
        expect(err.message).toContain(`record ${k}`)
        expect(await store.symbols()).toEqual(before.symbols)
        expect(await store.symbols()).toEqual(model.symbols())
        expectExact(await store.several(), before.several)
        expectExact(await store.latest('BTC', { limit: 100 }), before.btc)
        for (let i = 0; i < 5; i++) expect(await store.latest(`NEW${i}`)).toEqual([])
        expect(await store.query({ symbols: 'NEW0,NEW1,NEW3' })).toEqual({})
      })

      it('a non-object at position k → index k with no field; a bad record after 999 good ones → nothing written', async () => {
        const store = await openStore()
        const small = [rec({ symbol: 'X1' }), null, rec({ symbol: 'X2' })]
        const err = await rejectsCode(store.putMany(unchecked(small)), 'PRICE_INVALID_RECORD')
        expect(err.details.index).toBe(1)
        expect(err.details.field).toBeUndefined()
        const big: unknown[] = Array.from({ length: 999 }, (_, i) => rec({ symbol: `S${i % 7}`, timestamp: T0 + i }))
        big.push(rec({ symbol: 'S0', timestamp: -1 }))
        const err2 = await rejectsCode(store.putMany(unchecked(big)), 'PRICE_INVALID_RECORD')
        expect(err2.details).toEqual({ index: 999, field: 'timestamp' })
        expect(await store.symbols()).toEqual([])
        expect(await store.several()).toEqual({})
      })

      it('put of a bad record writes nothing and names index 0', async () => {
        const store = await openStore()
        const err = await rejectsCode(store.put(rec({ symbol: 'BTC USD' })), 'PRICE_INVALID_RECORD')
        expect(err.details).toEqual({ index: 0, field: 'symbol' })
        expect(await store.symbols()).toEqual([])
      })
    })

    describe('queries', () => {
      it('latest: newest first; limit (default 1), offset, and the from/to window', async () => {
        const { store, model } = await seeded()
        const cases: { limit?: number; offset?: number; from?: number; to?: number }[] = [
          {},
          { limit: 3 },
          { limit: 3, offset: 2 },
          { limit: 3000 },
          { offset: 100, limit: 5 },
          { to: H + 30 * MINUTE }, // as-of: includes the three records of that millisecond
          { to: H + 30 * MINUTE, limit: 4 },
          { to: H + 30 * MINUTE - 1, limit: 2 },
          { from: H, to: H + HOUR, limit: 3000 },
          { from: H + HOUR }, // from only
          { from: H + HOUR - 1, to: H + HOUR - 1, limit: 10 },
          { to: 0 },
        ]
        for (const symbol of ['BTC', 'ETH', 'BTC-USD', 'NOPE']) {
          for (const o of cases) {
            const got = await store.latest(symbol, o)
            const want = model.latest(symbol, o)
            expect(difference(got, want), `${symbol} ${JSON.stringify(o)}`).toBeUndefined()
          }
        }
      })

      it('several: latest of each; all symbols in UTF-8 byte order; named ones in request order, once', async () => {
        const { store, model } = await seeded()
        const all = await store.several()
        expectExact(all, model.several())
        expect(Object.keys(all)).toEqual(model.symbols())
        expect(Object.keys(all)).toEqual(['BTC', 'BTC-USD', 'ETH', 'a', '\uE000x', '\u{1F600}'])
        const named = await store.several(['ETH', '\u{1F600}', 'BTC', 'ETH', 'NOPE'])
        expectExact(named, model.several(['ETH', '\u{1F600}', 'BTC', 'NOPE']))
        expect(Object.keys(named)).toEqual(['ETH', '\u{1F600}', 'BTC'])
        expect(await store.several([])).toEqual({})
      })

      it('several: the window; a symbol with no record in it is left out', async () => {
        const { store, model } = await seeded()
        for (const o of [{ to: H }, { to: H + 30 * MINUTE }, { from: H + 2 * HOUR }, { from: H + 40 * MINUTE, to: H + 41 * MINUTE }, { to: 0 }]) {
          expect(difference(await store.several(undefined, o), model.several(undefined, o)), JSON.stringify(o)).toBeUndefined()
          expect(difference(await store.several(['ETH', 'BTC'], o), model.several(['ETH', 'BTC'], o)), JSON.stringify(o)).toBeUndefined()
        }
        // ETH has nothing before H + 5.
        expect(Object.keys(await store.several(['ETH', 'BTC'], { to: H }))).toEqual(['BTC'])
      })

      it('several with "__proto__" and "constructor" symbols returns own properties', async () => {
        const store = await openStore()
        const proto = rec({ symbol: '__proto__', value: 1 })
        const ctor = rec({ symbol: 'constructor', value: 2 })
        const has = rec({ symbol: 'hasOwnProperty', value: 3 })
        await store.putMany([proto, ctor, has])
        const named = await store.several(['__proto__', 'constructor', 'toString'])
        expect(Object.getPrototypeOf(named)).toBe(Object.prototype)
        expect(Object.keys(named)).toEqual(['__proto__', 'constructor'])
        expect(Object.hasOwn(named, '__proto__')).toBe(true)
        expect(Object.hasOwn(named, 'toString')).toBe(false)
        expectExact(Object.getOwnPropertyDescriptor(named, '__proto__')?.value, expected(proto))
        expectExact(Object.getOwnPropertyDescriptor(named, 'constructor')?.value, expected(ctor))
        const all = await store.several()
        expect(Object.getPrototypeOf(all)).toBe(Object.prototype)
        expect(Object.keys(all)).toEqual(['__proto__', 'constructor', 'hasOwnProperty'])
        expectExact(all, new Model().add([proto, ctor, has]).several())
        const viaQuery = await store.query({ symbols: '__proto__,constructor' })
        expect(Object.keys(viaQuery)).toEqual(['__proto__', 'constructor'])
        expect(Object.getPrototypeOf(viaQuery)).toBe(Object.prototype)
        expectExact(await store.latest('__proto__'), [expected(proto)])
      })

      it('an unknown symbol is not an error: [] for single-symbol forms, left out of several', async () => {
        const { store } = await seeded()
        expect(await store.latest('NOPE')).toEqual([])
        expect(await store.latest('BT')).toEqual([])
        expect(await store.range('NOPE', { from: 0, to: MAX, interval: 1 })).toEqual([])
        expect(await collect(store.rangeStream('NOPE', { from: 0, to: MAX, interval: 1 }))).toEqual([])
        expect(await store.query({ symbol: 'NOPE' })).toEqual([])
        expect(await store.query({ symbol: 'NOPE', interval: '1', fromTimestamp: '0', toTimestamp: '10' })).toEqual([])
        expect(await store.several(['NOPE'])).toEqual({})
        expect(Object.keys(await store.query({ symbols: 'NOPE,ETH' }))).toEqual(['ETH'])
        expect(await store.symbols()).not.toContain('NOPE')
      })

      it('range: one record per epoch-aligned bucket, its latest, oldest first, with minutes; offset then limit', async () => {
        const { store, model } = await seeded()
        const cases = [
          { from: 0, to: MAX, interval: 1 },
          { from: 0, to: MAX, interval: MINUTE },
          { from: 0, to: MAX, interval: 7 * MINUTE },
          { from: 0, to: MAX, interval: HOUR },
          { from: 0, to: MAX, interval: 1000 * HOUR },
          { from: 0, to: MAX, interval: MAX },
          { from: H, to: H + HOUR - 1, interval: 10 * MINUTE },
          { from: H + 30 * MINUTE, to: H + 30 * MINUTE, interval: 1 }, // both ends inclusive
          { from: H - 20 * MINUTE, to: H + 30 * MINUTE, interval: 13 },
          { from: 0, to: MAX, interval: MINUTE, offset: 3 },
          { from: 0, to: MAX, interval: MINUTE, offset: 3, limit: 4 },
          { from: 0, to: MAX, interval: MINUTE, limit: 1 },
          { from: 0, to: MAX, interval: MINUTE, offset: 1000 },
        ]
        for (const symbol of ['BTC', 'ETH', 'BTC-USD']) {
          for (const o of cases) {
            const got = await store.range(symbol, o)
            expect(difference(got, model.range(symbol, o)), `${symbol} ${JSON.stringify(o)}`).toBeUndefined()
          }
        }
        // With one record a minute... here: the hour bucket is represented by its last record.
        const hourly = await store.range('BTC', { from: H, to: H + HOUR - 1, interval: HOUR })
        expect(hourly.map((r) => r.timestamp)).toEqual([H + HOUR - 1])
        expect(hourly[0]?.minutes).toBe(59)
      })

      it('rangeStream yields what range returns', async () => {
        const { store, model } = await seeded()
        for (const o of [{ from: 0, to: MAX, interval: 1 }, { from: H, to: H + HOUR, interval: 7 * MINUTE }]) {
          const streamed = await collect(store.rangeStream('BTC', o))
          expectExact(streamed, await store.range('BTC', o))
          expectExact(streamed, model.range('BTC', o))
        }
      })

      it('rangeStream checks its arguments when called', async () => {
        const store = await openStore()
        throwsCode(() => store.rangeStream('BTC', { from: 0, to: 1, interval: 0 }), 'PRICE_INVALID_INTERVAL')
        throwsCode(() => store.rangeStream('BTC', { from: 2, to: 1, interval: 1 }), 'PRICE_INVALID_RANGE')
        throwsCode(() => store.rangeStream('BTC USD', { from: 0, to: 1, interval: 1 }), 'PRICE_INVALID_SYMBOL')
      })

      it('query answers every form exactly like the typed methods', async () => {
        const { store, model } = await seeded()
        expectExact(await store.query(new URLSearchParams('symbol=BTC')), model.latest('BTC'))
        expectExact(await store.query(new URLSearchParams('symbol=BTC&limit=4&offset=1')), model.latest('BTC', { limit: 4, offset: 1 }))
        expectExact(
          await store.query(new URLSearchParams(`symbol=BTC&toTimestamp=${H + 30 * MINUTE}&limit=2`)),
          model.latest('BTC', { to: H + 30 * MINUTE, limit: 2 }),
        )
        expectExact(
          await store.query(new URLSearchParams(`symbol=ETH&fromTimestamp=${H + 20 * MINUTE}&toTimestamp=${H + 60 * MINUTE + 5}&limit=10`)),
          model.latest('ETH', { from: H + 20 * MINUTE, to: H + 60 * MINUTE + 5, limit: 10 }),
        )
        expectExact(
          await store.query(new URLSearchParams(`symbol=BTC&interval=${10 * MINUTE}&fromTimestamp=0&toTimestamp=${MAX}&offset=1&limit=3`)),
          model.range('BTC', { from: 0, to: MAX, interval: 10 * MINUTE, offset: 1, limit: 3 }),
        )
        expectExact(await store.query(new URLSearchParams('symbols=ETH,BTC,ETH&limit=5')), model.several(['ETH', 'BTC']))
        expectExact(await store.query(new URLSearchParams(`toTimestamp=${H}`)), model.several(undefined, { to: H }))
        expectExact(await store.query({}), model.several())
        expectExact(await store.query({ symbol: 'BTC', provider: PROVIDER.name }), model.latest('BTC'))
        expectExact(await store.query({ symbol: 'BTC', provider: PROVIDER.id }), model.latest('BTC'))
      })

      it('query refuses bad parameters with coded errors', async () => {
        const { store } = await seeded()
        await rejectsCode(store.query({ symbol: 'BTC', provider: 'chainlink' }), 'PRICE_UNSUPPORTED_PROVIDER')
        await rejectsCode(store.query(new URLSearchParams('symbol=BTC+USD')), 'PRICE_INVALID_SYMBOL')
        await rejectsCode(store.query(new URLSearchParams('symbol=BTC&symbol=ETH')), 'PRICE_INVALID_QUERY')
        await rejectsCode(store.query(new URLSearchParams('interval=5')), 'PRICE_INVALID_INTERVAL')
        await rejectsCode(store.query(new URLSearchParams('symbol=BTC&interval=5')), 'PRICE_INVALID_RANGE')
        await rejectsCode(store.query(new URLSearchParams('symbol=BTC&limit=3001')), 'PRICE_INVALID_QUERY')
      })

      it('symbols() lists every symbol with data, in UTF-8 byte order', async () => {
        const { store, model } = await seeded()
        expect(await store.symbols()).toEqual(model.symbols())
        const more = ['B', 'z', '\uFFFF', '\u{10000}', '\u00e9']
        await store.putMany(more.map((symbol) => rec({ symbol })))
        const expectedSymbols = [...model.symbols(), ...more].sort(byUtf8)
        expect(await store.symbols()).toEqual(expectedSymbols)
        expect(expectedSymbols.indexOf('\uFFFF')).toBeLessThan(expectedSymbols.indexOf('\u{10000}'))
      })

      it('typed methods refuse bad arguments with coded errors', async () => {
        const store = await openStore()
        await rejectsCode(store.latest('BTC', { limit: 0 }), 'PRICE_INVALID_QUERY')
        await rejectsCode(store.latest('', {}), 'PRICE_INVALID_SYMBOL')
        await rejectsCode(store.latest('BTC', { from: 5, to: 4 }), 'PRICE_INVALID_RANGE')
        await rejectsCode(store.several(['A,B']), 'PRICE_INVALID_SYMBOL')
        await rejectsCode(store.range('BTC', { from: 0, to: 1, interval: 0 }), 'PRICE_INVALID_INTERVAL')
        await rejectsCode(store.range('BTC', { from: 0, interval: 1 } as never), 'PRICE_INVALID_RANGE')
        await rejectsCode(store.range('BTC', { from: 0, to: 1, interval: 1.5 }), 'PRICE_INVALID_INTERVAL')
      })
    })

    describe('range cap (maxRangePoints)', () => {
      async function capped(cap: number, count: number): Promise<{ store: PriceStore; model: Model }> {
        const store = await openStore({ limits: { maxRangePoints: cap } })
        const records = Array.from({ length: count }, (_, i) => rec({ symbol: 'CAP', timestamp: H + i * MINUTE + (i % 2) }))
        await store.putMany(records)
        return { store, model: new Model().add(records) }
      }

      it('an answer over the cap → PRICE_RANGE_TOO_LARGE with the exact count and the cap', async () => {
        const { store } = await capped(3, 5)
        const err = await rejectsCode(store.range('CAP', { from: 0, to: MAX, interval: MINUTE }), 'PRICE_RANGE_TOO_LARGE')
        expect(err.details.count).toBe(5)
        expect(err.details.cap).toBe(3)
        expect(err.message).toContain('5')
        expect(err.message).toContain('3')
        expect(err.message).toMatch(/interval/)
        expect(err.message).toMatch(/limit/)
      })

      it('the count is exact for a large answer, and counts after offset and limit', async () => {
        const { store, model } = await capped(3, 60)
        const all = { from: 0, to: MAX, interval: MINUTE }
        expect((await rejectsCode(store.range('CAP', all), 'PRICE_RANGE_TOO_LARGE')).details).toMatchObject({ count: 60, cap: 3 })
        expect((await rejectsCode(store.range('CAP', { ...all, offset: 10 }), 'PRICE_RANGE_TOO_LARGE')).details.count).toBe(50)
        expect((await rejectsCode(store.range('CAP', { ...all, limit: 4 }), 'PRICE_RANGE_TOO_LARGE')).details.count).toBe(4)
        expect((await rejectsCode(store.range('CAP', { ...all, limit: 100 }), 'PRICE_RANGE_TOO_LARGE')).details.count).toBe(60)
        expect((await rejectsCode(store.range('CAP', { ...all, offset: 55, limit: 100 }), 'PRICE_RANGE_TOO_LARGE')).details.count).toBe(5)
        expectExact(await store.range('CAP', { ...all, offset: 57 }), model.range('CAP', { ...all, offset: 57 }))
        expectExact(await store.range('CAP', { ...all, limit: 3 }), model.range('CAP', { ...all, limit: 3 }))
        expectExact(await store.range('CAP', { ...all, offset: 20, limit: 3 }), model.range('CAP', { ...all, offset: 20, limit: 3 }))
        expectExact(await store.range('CAP', { ...all, interval: 20 * MINUTE }), model.range('CAP', { ...all, interval: 20 * MINUTE }))
      })

      it('the query form is capped the same way', async () => {
        const { store } = await capped(3, 5)
        const err = await rejectsCode(store.query({ symbol: 'CAP', interval: '60000', fromTimestamp: '0', toTimestamp: String(MAX) }), 'PRICE_RANGE_TOO_LARGE')
        expect(err.details).toMatchObject({ count: 5, cap: 3 })
      })

      it('rangeStream has no cap', async () => {
        const { store, model } = await capped(3, 60)
        const all = { from: 0, to: MAX, interval: MINUTE }
        const streamed = await collect(store.rangeStream('CAP', all))
        expect(streamed.length).toBe(60)
        expectExact(streamed, model.range('CAP', all))
      })

      it('latest and several are not capped by maxRangePoints', async () => {
        const { store, model } = await capped(3, 10)
        expectExact(await store.latest('CAP', { limit: 10 }), model.latest('CAP', { limit: 10 }))
      })
    })

    // -------------------------------------------------------------------------
    // Persistence: only for backends whose data outlives the database object.

    describe('persistence', () => {
      it.skipIf(!persistent)('data survives close and reopen', async () => {
        const { store, model } = await seeded()
        await store.close()
        const again = await openStore()
        expect(await again.symbols()).toEqual(model.symbols())
        expectExact(await again.several(), model.several())
        for (const symbol of model.symbols()) {
          expectExact(await again.latest(symbol, { limit: 3000 }), model.latest(symbol, { limit: 3000 }))
          expectExact(await again.range(symbol, { from: 0, to: MAX, interval: 1 }), model.range(symbol, { from: 0, to: MAX, interval: 1 }))
        }
        // The reopened store knows its symbols: a write to an existing symbol does not duplicate it.
        await again.put(rec({ symbol: 'ETH', timestamp: H + 9 * HOUR }))
        expect(await again.symbols()).toEqual(model.symbols())
      })

      it.skipIf(!persistent)('a second open of the same location while the first is open → PRICE_LOCKED; the first still works', async () => {
        const first = await openStore()
        await first.put(rec({ timestamp: T0 }))
        const err = await rejectsCode(PriceStore.open(newDb(), options()), 'PRICE_LOCKED')
        expect(err.cause).toBeDefined()
        await first.put(rec({ timestamp: T0 + 1 }))
        expect((await first.latest('BTC', { limit: 10 })).map((r) => r.timestamp)).toEqual([T0 + 1, T0])
        expect(first.status).toBe('open')
        await first.close()
        const after = await openStore()
        expect((await after.latest('BTC', { limit: 10 })).length).toBe(2)
      })

      it.skipIf(!persistent)('a database whose format is "99" → PRICE_UNSUPPORTED_FORMAT, and the location is not left locked', async () => {
        const store = await openStore()
        await store.put(rec())
        await store.close()
        const raw = newDb()
        await raw.open()
        const meta = raw.sublevel<string, string>('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' })
        expect(await meta.get('format')).toBeDefined()
        await meta.put('format', '99')
        await raw.close()
        const err = await rejectsCode(PriceStore.open(newDb(), options()), 'PRICE_UNSUPPORTED_FORMAT')
        expect(err.message).toContain('99')
        const check = newDb()
        await check.open()
        await check.close()
      })

      it.skipIf(!persistent)('a database with records but no format version → PRICE_UNSUPPORTED_FORMAT', async () => {
        const raw = newDb()
        await raw.open()
        const prices = raw.sublevel<Uint8Array, Uint8Array>('p', { keyEncoding: 'view', valueEncoding: 'view' })
        await prices.put(Buffer.from('BTC\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0001id'), Buffer.from([1, 2, 3]))
        await raw.close()
        await rejectsCode(PriceStore.open(newDb(), options()), 'PRICE_UNSUPPORTED_FORMAT')
      })

      it.skipIf(!persistent)('a corrupted value → PRICE_CORRUPT_VALUE naming the key, while other symbols still answer', async () => {
        const { store, model } = await seeded()
        const [newest] = model.latest('BTC')
        const target = newest as Input
        await store.close()
        // Damage every stored copy of that record's value (the log, a chunk part, a heads entry: wherever
        // sealing has put it), found with the codecs: the flags byte becomes 0xff, the length stays.
        const raw = newDb()
        await raw.open()
        const sublevel = (name: string) => raw.sublevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' })
        const symbolBytes = Buffer.from('BTC', 'utf8')
        const isTarget = (symbol: string, timestamp: number, id: string) =>
          symbol === 'BTC' && timestamp === target.timestamp && id === target.id
        let damaged = 0
        const damage = async (level: ReturnType<typeof sublevel>, key: Uint8Array, value: Buffer, at: number[]): Promise<void> => {
          if (at.length === 0) return
          for (const offset of at) value[offset] = 0xff
          await level.put(key, value)
          damaged += at.length
        }
        const log = sublevel('l')
        for (const [key, stored] of await log.iterator().all()) {
          const value = Buffer.from(stored)
          const at: number[] = []
          readLogEntry(value, (symbol, timestamp, idStart, idEnd, valueStart) => {
            if (isTarget(symbol, timestamp, value.toString('utf8', idStart, idEnd))) at.push(valueStart)
          })
          await damage(log, key, value, at)
        }
        const chunks = sublevel('c')
        for (const [stored, bytes] of await chunks.iterator().all()) {
          // period (u32) · symbol · 0x00 · part (u16)
          const key = Buffer.from(stored)
          if (!key.subarray(4, key.length - 3).equals(symbolBytes)) continue
          const value = Buffer.from(bytes)
          const at: number[] = []
          readChunkPart(value, key.readUInt32BE(0) * PERIOD_MS, (timestamp, idStart, idEnd, compact, valueStart) => {
            const id = compact ? readCompactId(value, idStart) : value.toString('utf8', idStart, idEnd)
            if (isTarget('BTC', timestamp, id)) at.push(valueStart)
          })
          await damage(chunks, key, value, at)
        }
        const heads = sublevel('h')
        for (const [stored, bytes] of await heads.iterator().all()) {
          // symbol · 0x00 · period (u32)
          const key = Buffer.from(stored)
          if (!key.subarray(0, key.length - 5).equals(symbolBytes)) continue
          const value = Buffer.from(bytes)
          const at: number[] = []
          readHeads(value, key.readUInt32BE(key.length - 4) * PERIOD_MS, (timestamp, idStart, idEnd, valueStart) => {
            if (isTarget('BTC', timestamp, value.toString('utf8', idStart, idEnd))) at.push(valueStart)
          })
          await damage(heads, key, value, at)
        }
        expect(damaged, 'the record was found in the log or in a chunk').toBeGreaterThan(0)
        await raw.close()

        const again = await openStore()
        const namesKey = (err: { message: string; details: { key?: string } }) => {
          for (const text of [err.message, err.details.key ?? '']) {
            expect(text).toContain('BTC')
            expect(text).toContain(String(target.timestamp))
            expect(text).toContain(target.id as string)
          }
        }
        namesKey(await rejectsCode(again.latest('BTC'), 'PRICE_CORRUPT_VALUE'))
        namesKey(await rejectsCode(again.query({ symbol: 'BTC' }), 'PRICE_CORRUPT_VALUE'))
        namesKey(await rejectsCode(again.range('BTC', { from: 0, to: MAX, interval: 1 }), 'PRICE_CORRUPT_VALUE'))
        namesKey(await rejectsCode(again.several(['ETH', 'BTC']), 'PRICE_CORRUPT_VALUE'))
        namesKey(await rejectsCode(collect(again.rangeStream('BTC', { from: 0, to: MAX, interval: 1 })), 'PRICE_CORRUPT_VALUE'))
        // Other symbols answer.
        expectExact(await again.latest('ETH', { limit: 10 }), model.latest('ETH', { limit: 10 }))
        expectExact(await again.several(['ETH', 'BTC-USD']), model.several(['ETH', 'BTC-USD']))
        expectExact(await again.range('BTC-USD', { from: 0, to: MAX, interval: 1 }), model.range('BTC-USD', { from: 0, to: MAX, interval: 1 }))
        expect(again.status).toBe('open')
      })
    })
  })
}
