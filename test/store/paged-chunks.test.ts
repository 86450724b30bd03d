/**
 * Paged chunks: a sealed (hour, symbol) chunk is
 * written as pages of about 16 KB of values (base parts 0..k-1, at most 64
 * records each, page p holding records p·span..(p+1)·span-1 with
 * span = ceil(N/k)) plus a key column at part 0x7fff (version byte 5, part
 * count k) holding every record's timestamp, id and 9-byte value header.
 *
 * Checked here against expectations computed independently of the writer:
 * the layout read raw from the database; every query form against the
 * reference model of `price-store/testing` (a fast-check property with a
 * fixed seed, late records and rewrites joining as delta parts over pages);
 * damage to a page or the key column (an error naming the page, never a
 * wrong answer; an as-of answered from another page still answers).
 * On classic-level and memory-level. Sealing is deterministic: `close()`
 * seals every open hour.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS, PriceStore, isPriceStoreError } from '../../src/index.js'
import type { QueryParams } from '../../src/index.js'
import { readChunkPart, readCompactId } from '../../src/keys/chunk-codec.js'
import { readHeads } from '../../src/keys/heads-codec.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../src/testing/records.js'
import { outcomeOf, referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { expectSameOutcome } from '../property/hours-model.js'
import {
  BACKENDS, scratchLocations, DELTA_PART, KEYS_PART, MEMORY, chunkKeyOf, headsKeyOf, symbolChunkPrefix, expectModel, withRaw, writeAndSeal, type Backend, type Location,
} from './layout-harness.js'

const HOUR = 3_600_000
const MINUTE = 60_000
const H = T0
const MAX = Number.MAX_SAFE_INTEGER
const config = { provider: TEST_PROVIDER, limits: DEFAULT_LIMITS }
/** Independent of chunk-codec.ts: the numbers the issue states. */
const PAGE_BYTES = 16 * 1024
const MAX_PAGE_RECORDS = 64
const SEED = 20_2605

const periodOf = (timestamp: number): number => Math.floor(timestamp / HOUR)
const show = (params: QueryParams): string => JSON.stringify(params)

/** One record of a chunk part as read raw: its key and its stored value bytes. */
interface RawRecord {
  readonly timestamp: number
  readonly id: string
  readonly value: Buffer
}

function rawRecords(bytes: Buffer, period: number): RawRecord[] {
  const out: RawRecord[] = []
  readChunkPart(bytes, period * HOUR, (timestamp, idStart, idEnd, compact, valueStart, valueEnd) => {
    const id = compact ? readCompactId(bytes, idStart) : bytes.subarray(idStart, idEnd).toString('utf8')
    out.push({ timestamp, id, value: Buffer.from(bytes.subarray(valueStart, valueEnd)) })
  })
  return out
}

/** Part number → bytes, of one (hour, symbol), read from the raw database of a closed store. */
async function chunkOnDisk(backend: Backend, location: Location, symbol: string, period: number): Promise<Map<number, Buffer>> {
  return withRaw(backend, location, async (chunks) => {
    const prefix = symbolChunkPrefix(period, symbol)
    const parts = new Map<number, Buffer>()
    for (const [key, value] of await chunks.iterator({ gte: prefix, lt: Buffer.concat([prefix, Buffer.from([0xff, 0xff, 0xff])]) }).all()) {
      const k = Buffer.from(key)
      if (k.length === prefix.length + 2) parts.set(k.readUInt16BE(prefix.length), Buffer.from(value))
    }
    return parts
  })
}

/** FNV-1a over UTF-16 code units, from its definition. */
function fnv1a(id: string): number {
  let hash = 2166136261n
  for (let i = 0; i < id.length; i++) hash = ((hash ^ BigInt(id.charCodeAt(i))) * 16777619n) % 2n ** 32n
  return Number(hash)
}

/** Runs `edit` on the raw chunks sublevel (and the root) of a closed store. */
const baseParts = (parts: Map<number, Buffer>): number[] => [...parts.keys()].filter((part) => part < KEYS_PART).sort((a, b) => a - b)
const deltaParts = (parts: Map<number, Buffer>): number[] => [...parts.keys()].filter((part) => part >= DELTA_PART).sort((a, b) => a - b)

/** The page count the issue prescribes, computed here from the records' stored value bytes. */
function expectedPages(count: number, valueBytes: number): number {
  const fits = Math.min(MAX_PAGE_RECORDS, Math.max(1, Math.floor((PAGE_BYTES * count) / Math.max(1, valueBytes))))
  return Math.ceil(count / fits)
}

/**
 * Checks a paged chunk of `count` records: pages 0..k-1 of ceil(count/k)
 * records but the last; a key column (version 5, part count k) holding the
 * pages' records in order, each value the 9-byte header of its record's
 * value. Returns the records in order (from the pages).
 */
function expectPagedLayout(parts: Map<number, Buffer>, period: number, count: number): RawRecord[] {
  const pages = baseParts(parts)
  const k = pages.length
  expect(pages).toEqual(Array.from({ length: k }, (_, i) => i))
  const span = Math.ceil(count / k)
  const records: RawRecord[] = []
  for (const page of pages) {
    const bytes = parts.get(page) as Buffer
    expect(bytes[0], `page ${page} version`).toBe(3)
    expect(bytes.readUInt16BE(1), `page ${page} part count`).toBe(k)
    const rows = rawRecords(bytes, period)
    expect(rows.length, `page ${page}`).toBe(page < k - 1 ? span : count - span * (k - 1))
    expect(rows.length).toBeLessThanOrEqual(MAX_PAGE_RECORDS)
    records.push(...rows)
  }
  expect(k).toBe(expectedPages(count, records.reduce((sum, r) => sum + r.value.length, 0)))
  const column = parts.get(KEYS_PART) as Buffer
  expect(column, 'key column').toBeDefined()
  expect(column[0]).toBe(5)
  expect(column.readUInt16BE(1)).toBe(k)
  const keys = rawRecords(column, period)
  expect(keys.length).toBe(count)
  keys.forEach((key, i) => {
    const record = records[i] as RawRecord
    expect([key.timestamp, key.id], `record ${i}`).toEqual([record.timestamp, record.id])
    expect(key.value.length).toBe(9)
    expect(key.value.equals(record.value.subarray(0, 9)), `record ${i} header`).toBe(true)
  })
  return records
}

/** `entries` exchanges' prices: a record of a few KB, so an hour of them fills several pages. */
function bigSource(seed: number, entries = 100): Record<string, number> {
  return Object.fromEntries(Array.from({ length: entries }, (_, i) => [`exchange-${String(i).padStart(3, '0')}`, 30_000 + seed * 0.001 + i / 7]))
}

const big = (overrides: Partial<InputRecord>): InputRecord => makeRecord({ ...overrides, source: bigSource(overrides.timestamp ?? 0) })

/** A record that makes every earlier hour due (past its end + 10 min), in another symbol. */
const dueMarker = (hour: number): InputRecord => makeRecord({ symbol: 'ETH', timestamp: hour + HOUR + 11 * MINUTE, value: 2_000 })

/** Query forms over `symbol` around the hour starting at `hour`. */
function queriesAround(symbol: string, hour: number, extraTimes: readonly number[] = []): QueryParams[] {
  const from = String(hour - HOUR)
  const to = String(hour + 2 * HOUR)
  const times = [hour, hour + 7 * MINUTE + 3, hour + 30 * MINUTE, hour + HOUR - 1, ...extraTimes.flatMap((t) => [t - 1, t, t + 1])]
  const out: QueryParams[] = [
    { symbol }, { symbol, limit: '3000' }, { symbol, limit: '20', offset: '7' },
    { symbol, limit: '3000', fromTimestamp: String(hour), toTimestamp: String(hour + HOUR - 1) },
  ]
  for (const t of times) {
    out.push({ symbol, toTimestamp: String(t) }, { symbol, toTimestamp: String(t), direction: 'after' }, { symbol, toTimestamp: String(t), direction: 'nearest', tolerance: '5000' })
    out.push({ symbol, limit: '5', toTimestamp: String(t) })
  }
  for (const interval of [1, 7 * MINUTE, 10 * MINUTE, HOUR]) {
    out.push({ symbol, interval: String(interval), fromTimestamp: from, toTimestamp: to })
    out.push({ symbol, interval: String(interval), fromTimestamp: String(hour + 5 * MINUTE + 1), toTimestamp: String(hour + 47 * MINUTE) })
  }
  for (const interval of [MINUTE, 10 * MINUTE, HOUR]) {
    out.push({ symbol, interval: String(interval), fromTimestamp: from, toTimestamp: to, aggregate: 'candles' })
    out.push({ symbol, interval: String(interval), fromTimestamp: String(hour + 3 * MINUTE), toTimestamp: to, fill: 'prev' })
  }
  out.push({ symbol, aggregate: 'twap', fromTimestamp: String(hour + 2 * MINUTE), toTimestamp: String(hour + 55 * MINUTE) })
  out.push({ symbols: `${symbol},ETH,BTC`, toTimestamp: String(hour + 30 * MINUTE) })
  return out
}

/** The query fails with PRICE_CORRUPT_VALUE naming `entry` (in its message and details.key). */
async function expectCorrupt(store: PriceStore, params: QueryParams, entry: string): Promise<void> {
  const error = await store.query(params).then(() => undefined, (err: unknown) => err)
  expect(isPriceStoreError(error, 'PRICE_CORRUPT_VALUE'), `${show(params)}: ${String(error)}`).toBe(true)
  expect((error as Error).message, show(params)).toContain(entry)
  expect(String((error as { details?: { key?: unknown } }).details?.key), show(params)).toContain(entry)
}

const chunkName = (symbol: string, hour: number, part: string): string => `chunk ${symbol}@${hour}+${HOUR}ms ${part}`

describe.each(BACKENDS)('paged chunks on $name', (backend) => {
  const fresh = scratchLocations(backend, 'price-store-paged-')

  /** 50 big records of BTC in hour H (9 s apart, 45 s in), some values with special bits. */
  const SPECIAL = [-0, 1.7976931348623157e308, 5e-324, 123.45678901234567, -2.5e-300, 0]
  function bigHour(hour: number, n = 50): InputRecord[] {
    return Array.from({ length: n }, (_, i) => big({ symbol: 'BTC', timestamp: hour + 45_000 + i * 9_000, ...(i < SPECIAL.length ? { value: SPECIAL[i] } : {}) }))
  }

  /** Writes and seals `writes`, checks BTC's hour H has at least `minPages` pages, and swaps the bytes of its pages 0 and 1; returns the page count. */
  async function sealAndSwapPages(location: Location, writes: InputRecord[], minPages: number): Promise<number> {
    await writeAndSeal(location, writes)
    const parts = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    const k = baseParts(parts).length
    expect(k).toBeGreaterThanOrEqual(minPages)
    await withRaw(backend, location, async (chunks) => {
      await chunks.put(chunkKeyOf(periodOf(H), 'BTC', 0), parts.get(1) as Buffer)
      await chunks.put(chunkKeyOf(periodOf(H), 'BTC', 1), parts.get(0) as Buffer)
    })
    return k
  }

  it('layout: an hour of large records is k > 1 contiguous pages of ceil(N/k) records and a version-5 key column of 9-byte headers (bits kept)', async () => {
    const location = await fresh()
    const records = bigHour(H)
    await writeAndSeal(location, [...records, dueMarker(H)])
    const parts = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(deltaParts(parts)).toEqual([])
    const stored = expectPagedLayout(parts, periodOf(H), records.length)
    expect(baseParts(parts).length).toBeGreaterThan(1)
    // Value bytes are a few KB a record: the sizes this test means to exercise.
    expect(stored[0]!.value.length).toBeGreaterThan(2_000)
    const column = rawRecords(parts.get(KEYS_PART) as Buffer, periodOf(H))
    records.forEach((record, i) => {
      // Written in (timestamp) order with distinct timestamps: the i-th record is the i-th of the chunk.
      const header = column[i]!.value
      expect(column[i]!.id).toBe(record.id)
      expect(Object.is(header.readDoubleLE(1), record.value), `record ${i}: ${header.readDoubleLE(1)} vs ${record.value}`).toBe(true)
      const bits = Buffer.alloc(8)
      bits.writeDoubleLE(record.value)
      expect(header.subarray(1, 9).equals(bits)).toBe(true)
      expect(header[0]).toBe(stored[i]!.value[0])
    })
  })

  it('layout: small records give pages of at most 64 records', async () => {
    const location = await fresh()
    const records = Array.from({ length: 1000 }, (_, i) => makeRecord({ symbol: 'BTC', timestamp: H + i * 3_000, id: `r${i}`, signature: 'c2ln', source: {} }))
    await writeAndSeal(location, [...records, dueMarker(H)])
    const parts = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expectPagedLayout(parts, periodOf(H), 1000)
    // Records this small fit more than 64 into 16 KB: the record cap decides, ceil(1000/64) = 16 pages (15 of 63, one of 55).
    expect(baseParts(parts).length).toBe(Math.ceil(1000 / 64))
  })

  it('answers: random large records over a few hours and symbols, then late records and rewrites over the pages, equal the model in every form', async () => {
    const hours = [H, H + HOUR, H + 3 * HOUR]
    const idArb = fc.oneof(fc.uuid().map((u) => u.toLowerCase()), fc.stringMatching(/^[a-z0-9-]{1,12}$/), fc.constantFrom('0000', 'ffff-z', '\uE000', '\u{10000}', 'A0000000-0000-4000-8000-000000000000'))
    const valueArb = fc.oneof(
      fc.constant(-0),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer({ min: 0, max: 10 ** 9 }).map((n) => n / 1_000_003),
      fc.constantFrom(0.1 + 0.2, 123.45678901234567, 5e-324),
    )
    const offsetArb = fc.oneof(fc.constantFrom(0, 1, 9_000, 600_000, 599_999, 1_800_000, HOUR - 1), fc.integer({ min: 0, max: HOUR - 1 }))
    const recordArb = fc.record({
      symbol: fc.constantFrom('BTC', 'ETH'), hour: fc.constantFrom(...hours), offset: offsetArb, id: idArb, value: valueArb, size: fc.integer({ min: 20, max: 120 }),
    }).map(({ symbol, hour, offset, id, value, size }) =>
      makeRecord({ symbol, timestamp: hour + offset, id, value, source: bigSource(offset, size) }))
    const lateArb = fc.record({ hour: fc.constantFrom(...hours.slice(0, 2)), pick: fc.nat(), value: valueArb, fresh: recordArb })
    let deltasOverPages = 0
    await fc.assert(
      fc.asyncProperty(fc.array(recordArb, { minLength: 5, maxLength: 60 }), fc.array(lateArb, { minLength: 1, maxLength: 6 }), async (randoms, lates) => {
        const location = await fresh()
        // A fixed base per hour of BTC so every hour is paged over several pages whatever was drawn.
        const writes: InputRecord[] = [...hours.flatMap((hour) => bigHour(hour, 30)), ...randoms, dueMarker(hours[2] as number)]
        await writeAndSeal(location, writes)
        const sealed = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
        expect(baseParts(sealed).length).toBeGreaterThan(1)
        expect(sealed.get(KEYS_PART)?.[0]).toBe(5)
        // Late: rewrites of sealed records (same timestamp and id, new value and body) and new records, into sealed hours.
        const late: InputRecord[] = []
        for (const { hour, pick, value, fresh: extra } of lates) {
          const inHour = writes.filter((r) => periodOf(r.timestamp) === periodOf(hour) && r.symbol === 'BTC')
          const target = inHour[pick % inHour.length] as InputRecord
          late.push({ ...target, value, signature: `rw${pick}`, source: bigSource(pick, 30) })
          late.push({ ...extra, timestamp: hour + (extra.timestamp % HOUR) })
        }
        writes.push(...late)
        await writeAndSeal(location, late)
        for (const hour of hours.slice(0, 2)) {
          const after = await chunkOnDisk(backend, location, 'BTC', periodOf(hour))
          expect(after.get(KEYS_PART)?.[0]).toBe(5)
          if (deltaParts(after).length > 0) deltasOverPages++
        }
        const extraTimes = [...randoms, ...late].map((r) => r.timestamp).slice(0, 6)
        const queries = [
          ...hours.flatMap((hour) => queriesAround('BTC', hour, extraTimes.filter((t) => periodOf(t) === periodOf(hour)))),
          ...queriesAround('ETH', H + HOUR),
          { symbol: 'BTC', interval: '1', fromTimestamp: '0', toTimestamp: String(MAX), limit: '3000' },
          {}, { toTimestamp: String(H + 90 * MINUTE) },
        ] as QueryParams[]
        await expectModel(location, writes, queries, 'random')
      }),
      { numRuns: 5, seed: SEED, endOnFailure: true },
    )
    // The seed gives late writes that joined paged hours as delta parts (not only whole rewrites).
    expect(deltasOverPages).toBeGreaterThan(0)
  }, 60_000)

  it('damage: a deleted page fails the queries that return its records, naming it; an as-of answered from another page of the hour answers', async () => {
    const location = await fresh()
    const records = bigHour(H)
    const writes = [...records, dueMarker(H)]
    await writeAndSeal(location, writes)
    const parts = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    const k = baseParts(parts).length
    expect(k).toBeGreaterThan(3)
    const span = Math.ceil(records.length / k)
    const p = 2
    await withRaw(backend, location, (chunks) => chunks.del(chunkKeyOf(periodOf(H), 'BTC', p)))
    const stored = storedRecords(writes, TEST_PROVIDER)
    const inPage = (records[p * span + 1] as InputRecord).timestamp
    const inPage0 = (records[1] as InputRecord).timestamp
    const inLastPage = (records[records.length - 2] as InputRecord).timestamp
    for (const memory of MEMORY) {
      const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...memory })
      try {
        for (const params of [
          { symbol: 'BTC', toTimestamp: String(inPage) },
          { symbol: 'BTC', toTimestamp: String(inPage), direction: 'after' },
          { symbol: 'BTC', limit: '3000' },
          { symbol: 'BTC', interval: '1', fromTimestamp: String(H), toTimestamp: String(H + HOUR - 1) },
        ] as QueryParams[]) await expectCorrupt(store, params, chunkName('BTC', H, `part ${p}`))
        for (const params of [
          { symbol: 'BTC', toTimestamp: String(inPage0) },
          { symbol: 'BTC', toTimestamp: String(inLastPage) },
          { symbol: 'BTC' },
          { symbol: 'BTC', limit: '3', toTimestamp: String(inPage0 + 1) },
          { symbol: 'ETH' },
        ] as QueryParams[]) expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(stored, params, config), show(params))
      } finally {
        await store.close()
      }
    }
  })

  it('damage: pages 0 and 1 swapped → PRICE_CORRUPT_VALUE, never a wrong answer; other pages answer', async () => {
    const location = await fresh()
    const records = bigHour(H)
    const writes = [...records, dueMarker(H)]
    const k = await sealAndSwapPages(location, writes, 4)
    const stored = storedRecords(writes, TEST_PROVIDER)
    const span = Math.ceil(records.length / k)
    for (const memory of MEMORY) {
      const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...memory })
      try {
        for (const [params, page] of [
          [{ symbol: 'BTC', toTimestamp: String(records[1]!.timestamp) }, 0],
          [{ symbol: 'BTC', toTimestamp: String(records[span + 1]!.timestamp) }, 1],
          [{ symbol: 'BTC', limit: '3000' }, undefined],
          [{ symbol: 'BTC', interval: '1', fromTimestamp: String(H), toTimestamp: String(H + HOUR - 1) }, undefined],
          [{ symbol: 'BTC', interval: String(MINUTE), fromTimestamp: String(H), toTimestamp: String(H + HOUR - 1), aggregate: 'candles' }, 'ok'],
        ] as [QueryParams, number | undefined | 'ok'][]) {
          if (page === 'ok') {
            // Candles may take what they need from the key column alone (then the swap does not reach them): the model's answer or the error.
            const outcome = await outcomeOf(() => store.query(params))
            if ('answer' in outcome) expectSameOutcome(outcome, referenceQuery(stored, params, config), show(params))
            else await expectCorrupt(store, params, chunkName('BTC', H, 'part '))
            continue
          }
          await expectCorrupt(store, params, page === undefined ? chunkName('BTC', H, 'part ') : chunkName('BTC', H, `part ${page}`))
        }
        const later = { symbol: 'BTC', toTimestamp: String(records[3 * span + 1]!.timestamp) }
        expectSameOutcome(await outcomeOf(() => store.query(later)), referenceQuery(stored, later, config), show(later))
      } finally {
        await store.close()
      }
    }
  })

  // A page is checked against the key column by timestamp, id and value: pages swapped whose records share their
  // timestamps (this test found the reader once checked the timestamp alone and answered other records).
  it('damage: pages 0 and 1 swapped where every record shares one timestamp (ids differ) → PRICE_CORRUPT_VALUE, never a wrong answer', async () => {
    const location = await fresh()
    const t = H + 30 * MINUTE
    const records = Array.from({ length: 40 }, (_, i) => big({ symbol: 'BTC', timestamp: t, id: `tie-${String(i).padStart(3, '0')}`, value: 100 + i }))
    const writes = [...records, dueMarker(H)]
    await sealAndSwapPages(location, writes, 3)
    const stored = storedRecords(writes, TEST_PROVIDER)
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...MEMORY[0] })
    try {
      for (const params of [
        { symbol: 'BTC', limit: '3000' },
        { symbol: 'BTC', interval: '1', fromTimestamp: String(H), toTimestamp: String(H + HOUR - 1) },
      ] as QueryParams[]) {
        // The model's answer is impossible here (the pages hold other records): the query must fail, naming a page.
        expect(referenceQuery(stored, params, config)).toBeDefined()
        expect('answer' in (await outcomeOf(() => store.query(params))), show(params)).toBe(false)
        await expectCorrupt(store, params, chunkName('BTC', H, 'part '))
      }
    } finally {
      await store.close()
    }
  })

  it('page table (format 6 and on): the heads entry lists each page\'s first timestamp and id tag (FNV-1a over UTF-16 units, computed here)', async () => {
    const location = await fresh()
    const writes = [...bigHour(H), ...Array.from({ length: 30 }, (_, i) => big({ symbol: 'BTC', timestamp: H + HOUR + 7 * MINUTE, id: `tie-${i}` })), dueMarker(H + HOUR)]
    await writeAndSeal(location, writes)
    for (const period of [periodOf(H), periodOf(H + HOUR)]) {
      const parts = await chunkOnDisk(backend, location, 'BTC', period)
      const firsts = baseParts(parts).map((page) => rawRecords(parts.get(page) as Buffer, period)[0] as RawRecord)
      expect(firsts.length).toBeGreaterThanOrEqual(3)
      const entry = await withRaw(backend, location, (_, db) => db.sublevel<Uint8Array, Uint8Array>('h', { keyEncoding: 'view', valueEncoding: 'view' }).get(headsKeyOf('BTC', period)))
      const bytes = Buffer.from(entry as Uint8Array)
      expect(bytes[0], 'heads entry version').toBe(7)
      const { pageStarts } = readHeads(bytes, period * HOUR, () => {})
      expect([...pageStarts.timestamps]).toEqual(firsts.map((r) => r.timestamp))
      expect([...pageStarts.idTags]).toEqual(firsts.map((r) => fnv1a(r.id)))
    }
  })

  it('a read of a few records goes by the page table: with the key column cut in half, as-of, latest-N and a range\'s edge answer as the model; a full read of the hour names the key column', async () => {
    const location = await fresh()
    const records = bigHour(H)
    const writes = [...records, dueMarker(H)]
    await writeAndSeal(location, writes)
    const column = (await chunkOnDisk(backend, location, 'BTC', periodOf(H))).get(KEYS_PART) as Buffer
    await withRaw(backend, location, (chunks) => chunks.put(chunkKeyOf(periodOf(H), 'BTC', KEYS_PART), column.subarray(0, column.length >> 1)))
    const stored = storedRecords(writes, TEST_PROVIDER)
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...MEMORY[0] })
    try {
      const times = [H - 1, H, ...records.flatMap((r) => [r.timestamp - 1, r.timestamp, r.timestamp + 1]), H + HOUR - 1]
      const small: QueryParams[] = [
        { symbol: 'BTC' }, { symbol: 'BTC', limit: '3000' }, { symbol: 'BTC', limit: '20', offset: '7' },
        ...times.flatMap((t): QueryParams[] => [
          { symbol: 'BTC', toTimestamp: String(t) }, { symbol: 'BTC', limit: '5', toTimestamp: String(t) },
          { symbol: 'BTC', toTimestamp: String(t), direction: 'after' }, { symbol: 'BTC', toTimestamp: String(t), direction: 'nearest', tolerance: '5000' },
        ]),
        { symbol: 'BTC', interval: String(10 * MINUTE), fromTimestamp: String(H), toTimestamp: String(H + 33 * MINUTE) },
        { symbol: 'BTC', interval: String(HOUR), fromTimestamp: String(H - HOUR), toTimestamp: String(H + 47 * MINUTE + 1) },
      ]
      for (const params of small) expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(stored, params, config), show(params))
      for (const params of [
        { symbol: 'BTC', interval: '1', fromTimestamp: String(H), toTimestamp: String(H + HOUR - 1) },
        { symbol: 'BTC', interval: String(MINUTE), fromTimestamp: String(H), toTimestamp: String(H + HOUR - 1), aggregate: 'candles' },
      ] as QueryParams[]) await expectCorrupt(store, params, chunkName('BTC', H, 'key column'))
    } finally {
      await store.close()
    }
  })

  it('an hour with delta parts keeps its page table: with its key column cut in half, newest-first reads of a few records (as-of, latest-N, a range\'s edge) answer as the model; a read by position names the key column', async () => {
    const location = await fresh()
    const records = bigHour(H)
    const writes = [...records, dueMarker(H)]
    await writeAndSeal(location, writes)
    // Two late batches: a new record, and a rewrite of a stored one (same timestamp and id, a new value).
    const late = [big({ symbol: 'BTC', timestamp: H + 20 * MINUTE + 1, value: 77.5 }), { ...records[9]!, value: 99.25, signature: 'rewritten' }]
    for (const record of late) {
      writes.push(record)
      await writeAndSeal(location, [record])
    }
    expect(deltaParts(await chunkOnDisk(backend, location, 'BTC', periodOf(H)))).toEqual([DELTA_PART, DELTA_PART + 1])
    const column = (await chunkOnDisk(backend, location, 'BTC', periodOf(H))).get(KEYS_PART) as Buffer
    await withRaw(backend, location, (chunks) => chunks.put(chunkKeyOf(periodOf(H), 'BTC', KEYS_PART), column.subarray(0, column.length >> 1)))
    const stored = storedRecords(writes, TEST_PROVIDER)
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...MEMORY[0] })
    try {
      const times = [H - 1, H, ...[...records, ...late].flatMap((r) => [r.timestamp - 1, r.timestamp, r.timestamp + 1]), H + HOUR - 1]
      const newestFirst: QueryParams[] = [
        { symbol: 'BTC' }, { symbol: 'BTC', limit: '3000' }, { symbol: 'BTC', limit: '20', offset: '7' },
        ...times.flatMap((t): QueryParams[] => [
          { symbol: 'BTC', toTimestamp: String(t) }, { symbol: 'BTC', limit: '5', toTimestamp: String(t) },
          // A range on ten-minute lines ending at `t`: the bucket holding `t` takes its latest record up to `t` (newest first).
          { symbol: 'BTC', interval: String(10 * MINUTE), fromTimestamp: String(H - HOUR), toTimestamp: String(t) },
          { symbol: 'BTC', interval: String(HOUR), fromTimestamp: String(H - HOUR), toTimestamp: String(t) },
        ]),
      ]
      for (const params of newestFirst) expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(stored, params, config), show(params))
      await expectCorrupt(store, { symbol: 'BTC', toTimestamp: String(H + 7 * MINUTE), direction: 'after' }, chunkName('BTC', H, 'key column'))
    } finally {
      await store.close()
    }
  })

  it('candles and TWAP read values from the key column: with a page deleted they answer as the model; a range at 1 ms names the page', async () => {
    const location = await fresh()
    const records = bigHour(H)
    const late = big({ symbol: 'BTC', timestamp: H + 20 * MINUTE + 1, value: 77.5 })
    const writes = [...records, dueMarker(H)]
    await writeAndSeal(location, writes)
    // A late record joins as a delta part, so the key column is read with a delta merged over it.
    writes.push(late)
    await writeAndSeal(location, [late])
    expect(deltaParts(await chunkOnDisk(backend, location, 'BTC', periodOf(H)))).toEqual([DELTA_PART])
    await withRaw(backend, location, (chunks) => chunks.del(chunkKeyOf(periodOf(H), 'BTC', 1)))
    const stored = storedRecords(writes, TEST_PROVIDER)
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...MEMORY[0] })
    try {
      const whole = { symbol: 'BTC', fromTimestamp: String(H - HOUR), toTimestamp: String(H + 2 * HOUR) }
      for (const params of [
        ...[MINUTE, 7 * MINUTE, 10 * MINUTE, HOUR].map((interval): QueryParams => ({ ...whole, interval: String(interval), aggregate: 'candles' })),
        { ...whole, interval: String(10 * MINUTE), aggregate: 'candles', fill: 'prev' },
        { symbol: 'BTC', aggregate: 'twap', fromTimestamp: String(H + 2 * MINUTE), toTimestamp: String(H + 55 * MINUTE) },
      ] as QueryParams[]) expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(stored, params, config), show(params))
      await expectCorrupt(store, { ...whole, interval: '1' }, chunkName('BTC', H, 'part 1'))
    } finally {
      await store.close()
    }
  })

  it('damage: the key column deleted → the chunk is read whole, every answer equals the model', async () => {
    const location = await fresh()
    const records = bigHour(H)
    const writes = [...records, ...bigHour(H + HOUR, 20), dueMarker(H + HOUR)]
    await writeAndSeal(location, writes)
    await withRaw(backend, location, (chunks) => chunks.del(chunkKeyOf(periodOf(H), 'BTC', KEYS_PART)))
    expect((await chunkOnDisk(backend, location, 'BTC', periodOf(H))).has(KEYS_PART)).toBe(false)
    await expectModel(location, writes, [...queriesAround('BTC', H, [records[7]!.timestamp]), ...queriesAround('BTC', H + HOUR)], 'no key column')
    // A late record then joins it (as a delta over the whole-read chunk): still the model.
    const late = big({ symbol: 'BTC', timestamp: H + 17, value: -0 })
    writes.push(late)
    await writeAndSeal(location, [late])
    await expectModel(location, writes, queriesAround('BTC', H, [H + 17]), 'no key column, a late record')
  })
})
