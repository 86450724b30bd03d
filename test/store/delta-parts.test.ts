/**
 * Delta parts (storage format 4, issue 20): records that reach an hour after
 * it was sealed (late records, rewrites, ties) join its chunk as delta parts
 * `c: hour · symbol · 0x00 · (0x8000 + k)` while the chunk has fewer than 16
 * and they are at most a quarter of its records; else the chunk is rewritten
 * whole. Checked on disk (keys and bytes read raw, in the layout of
 * src/keys/key-layout.ts) and against the reference model of
 * `price-store/testing` for every query form, with the caches off and on,
 * on classic-level and memory-level. Sealing is made deterministic by
 * `close()`, which seals every open hour.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_LIMITS, PriceStore, isPriceStoreError } from '../../src/index.js'
import type { QueryParams } from '../../src/index.js'
import { COLUMN_FIELDS, parseChunkPart, readChunkPart, readCompactId } from '../../src/keys/chunk-codec.js'
import { MAX_DELTA_KEYS, readHeads } from '../../src/keys/heads-codec.js'
import { compareTimeAndId } from '../../src/rules/compare-ids.js'
import { T0, TEST_PROVIDER, makeRecord, type InputRecord } from '../../src/testing/records.js'
import { outcomeOf, referencePrune, referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { expectSameOutcome } from '../property/hours-model.js'
import {
  BACKENDS, DELTA_PART, KEYS_PART, MEMORY, chunkKeyOf, headsKeyOf, symbolChunkPrefix, expectModel, withRaw, writeAndSeal,
  type AnyLevel, type Backend, type Bytes, type Location,
} from './layout-harness.js'
import { exportLines, modelExport } from './suite/export.js'


const HOUR = 3_600_000
const MINUTE = 60_000
const TEN_MINUTES = 600_000
/** Hour boundaries: H is T0 (2023-11-14T22:00Z). */
const H = T0
const MAX = Number.MAX_SAFE_INTEGER
const config = { provider: TEST_PROVIDER, limits: DEFAULT_LIMITS }

const periodOf = (timestamp: number): number => Math.floor(timestamp / HOUR)

interface ChunkOnDisk {
  /** Part number → bytes. */
  readonly parts: Map<number, Buffer>
  /** Part number → records in it. */
  readonly counts: Map<number, number>
  /** The heads entry's summary, when there is one. */
  readonly summary: { records: number; deltas: number } | undefined
  /** The heads entry's delta keys (format 7), read raw: the delta parts they cover, and each record's key and value; `undefined` when it has none. */
  readonly deltaKeys: { covers: number; records: { timestamp: number; id: string; value: number }[] } | undefined
}

/** The records of a key column as stored: timestamp, id (a compact UUID or UTF-8) and the value from its header. */
function keyColumnRecords(bytes: Buffer, periodStart: number): { timestamp: number; id: string; value: number }[] {
  const { count, timestamps, fields, values } = parseChunkPart(bytes, periodStart)
  return Array.from({ length: count }, (_, i) => {
    const at = i * COLUMN_FIELDS
    const id = fields[at + 2] === 1 ? readCompactId(bytes, fields[at] as number) : bytes.toString('utf8', fields[at] as number, fields[at + 1] as number)
    return { timestamp: timestamps[i] as number, id, value: (values as Float64Array)[i] as number }
  })
}

/** The parts and heads entry of one (hour, symbol), read from the raw database of a closed store. */
async function chunkOnDisk(backend: Backend, location: Location, symbol: string, period: number): Promise<ChunkOnDisk> {
  return withRaw(backend, location, async (chunks, db) => {
    const prefix = symbolChunkPrefix(period, symbol)
    const parts = new Map<number, Buffer>()
    const counts = new Map<number, number>()
    for (const [key, value] of await chunks.iterator({ gte: prefix, lt: Buffer.concat([prefix, Buffer.from([0xff, 0xff, 0xff])]) }).all()) {
      const k = Buffer.from(key)
      if (k.length !== prefix.length + 2) continue
      const part = k.readUInt16BE(prefix.length)
      const v = Buffer.from(value)
      parts.set(part, v)
      let n = 0
      readChunkPart(v, period * HOUR, () => n++)
      counts.set(part, n)
    }
    const heads = await headsOf(db).get(headsKeyOf(symbol, period))
    const read = heads === undefined ? undefined : readHeads(Buffer.from(heads), period * HOUR, () => {})
    const summary = read === undefined ? undefined : { records: read.records, deltas: read.deltas }
    const keys = read?.deltaKeys
    const deltaKeys = keys === undefined ? undefined : { covers: keys.readUInt16BE(1), records: keyColumnRecords(keys, period * HOUR) }
    return { parts, counts, summary, deltaKeys }
  })
}

/** The heads sublevel `h` of a raw database. */
const headsOf = (db: AnyLevel): Bytes => db.sublevel<Uint8Array, Uint8Array>('h', { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as Bytes

/** Rewrites one chunk part in the raw database of a closed store with `edit`'s bytes. */
async function editPart(backend: Backend, location: Location, symbol: string, period: number, part: number, edit: (bytes: Buffer) => Buffer): Promise<void> {
  const key = chunkKeyOf(period, symbol, part)
  await withRaw(backend, location, async (chunks) => chunks.put(key, edit(Buffer.from((await chunks.get(key)) as Uint8Array))))
}

/** Deletes one chunk part in the raw database of a closed store. */
async function deletePart(backend: Backend, location: Location, symbol: string, period: number, part: number): Promise<void> {
  await withRaw(backend, location, (chunks) => chunks.del(chunkKeyOf(period, symbol, part)))
}

const baseParts = (chunk: ChunkOnDisk): number[] => [...chunk.parts.keys()].filter((part) => part < KEYS_PART).sort((a, b) => a - b)

/**
 * A paged chunk (format 5) of `records` base records: pages 0..k-1 of
 * ceil(records / k) records each but the last, and a key column (version 5)
 * holding every record, whose part count is k.
 */
function expectPaged(chunk: ChunkOnDisk, records: number): void {
  const pages = baseParts(chunk)
  expect(pages).toEqual(Array.from({ length: pages.length }, (_, i) => i))
  const span = Math.ceil(records / pages.length)
  pages.forEach((page) => expect(chunk.counts.get(page)).toBe(page < pages.length - 1 ? span : records - span * (pages.length - 1)))
  const keys = chunk.parts.get(KEYS_PART) as Buffer
  expect(keys[0]).toBe(5)
  expect(keys.readUInt16BE(1)).toBe(pages.length)
  expect(chunk.counts.get(KEYS_PART)).toBe(records)
}

/** Whether the base parts and key column of `chunk` are those of `before`, byte for byte. */
function sameBase(chunk: ChunkOnDisk, before: ChunkOnDisk): boolean {
  const parts = [...baseParts(before), KEYS_PART]
  return baseParts(chunk).length === baseParts(before).length && parts.every((part) => chunk.parts.get(part)?.equals(before.parts.get(part) as Buffer) === true)
}
const deltaParts = (chunk: ChunkOnDisk): number[] => [...chunk.parts.keys()].filter((part) => part >= DELTA_PART).sort((a, b) => a - b)

/** Every query form over `symbol` around the hour starting at `hour` (and the store as a whole). */
function queriesAround(symbol: string, hour: number, extraTimes: readonly number[] = []): QueryParams[] {
  const from = String(hour - HOUR)
  const to = String(hour + 2 * HOUR)
  const times = [hour, hour + 1, hour + 7 * MINUTE + 3, hour + 30 * MINUTE, hour + HOUR - 1, ...extraTimes.flatMap((t) => [t - 1, t, t + 1])]
  const out: QueryParams[] = [
    {}, { symbol }, { symbol, limit: '3000' }, { symbol, limit: '20', offset: '7' },
    { symbol, limit: '3000', fromTimestamp: String(hour), toTimestamp: String(hour + HOUR - 1) },
  ]
  for (const t of times) {
    out.push({ symbol, toTimestamp: String(t) }, { symbol, toTimestamp: String(t), direction: 'after' }, { symbol, toTimestamp: String(t), direction: 'nearest', tolerance: '5000' })
    out.push({ toTimestamp: String(t) }, { symbol, limit: '5', toTimestamp: String(t) })
  }
  for (const interval of [1, MINUTE, TEN_MINUTES, HOUR, 7 * MINUTE, 90_000]) {
    out.push({ symbol, interval: String(interval), fromTimestamp: from, toTimestamp: to })
    out.push({ symbol, interval: String(interval), fromTimestamp: String(hour + 5 * MINUTE + 1), toTimestamp: String(hour + 47 * MINUTE) })
  }
  for (const interval of [MINUTE, TEN_MINUTES, HOUR]) {
    out.push({ symbol, interval: String(interval), fromTimestamp: from, toTimestamp: to, aggregate: 'candles' })
    out.push({ symbol, interval: String(interval), fromTimestamp: String(hour + 3 * MINUTE), toTimestamp: to, fill: 'prev' })
    out.push({ symbol, interval: String(interval), fromTimestamp: String(hour + 3 * MINUTE), toTimestamp: to, aggregate: 'candles', fill: 'prev' })
  }
  out.push({ symbol, interval: '1', fromTimestamp: '0', toTimestamp: String(MAX), limit: '3000' })
  out.push({ symbol, aggregate: 'twap', fromTimestamp: String(hour + 2 * MINUTE), toTimestamp: String(hour + 55 * MINUTE) })
  out.push({ symbols: `${symbol},ETH`, toTimestamp: String(hour + 30 * MINUTE) })
  return out
}

const show = (params: QueryParams): string => JSON.stringify(params)

/**
 * The delta keys a heads entry should hold after late batches `batches` (in
 * write order): every record written late, the last write of a (timestamp,
 * id) winning, ordered by (timestamp, id).
 */
function expectedDeltaKeys(batches: readonly (readonly InputRecord[])[]): { timestamp: number; id: string; value: number }[] {
  const byKey = new Map<string, InputRecord>()
  for (const batch of batches) for (const record of batch) byKey.set(`${record.timestamp}|${record.id}`, record)
  return [...byKey.values()].sort((a, b) => compareTimeAndId(a, b)).map((r) => ({ timestamp: r.timestamp, id: r.id, value: r.value }))
}

/** `n` records of `symbol` spread over the hour starting at `hour`, 9 s apart (400 fill it). */
function hourOf(symbol: string, hour: number, n: number): InputRecord[] {
  return Array.from({ length: n }, (_, i) => makeRecord({ symbol, timestamp: hour + i * 9_000 }))
}

/** A record that makes every earlier hour due (past its end + 10 min), in another symbol. */
const dueMarker = (hour: number): InputRecord => makeRecord({ symbol: 'ETH', timestamp: hour + HOUR + 11 * MINUTE, value: 2_000 })

describe.each(BACKENDS)('delta parts on $name', (backend) => {
  let dir: string | undefined
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
    dir = undefined
  })

  async function fresh(): Promise<Location> {
    dir = await mkdtemp(join(tmpdir(), 'price-store-delta-'))
    return backend.location(dir)
  }

  /** A store with BTC's hour H sealed with 400 records (and ETH's next hour), the writes so far. */
  async function sealedHour(): Promise<{ location: Location; writes: InputRecord[]; base: ChunkOnDisk }> {
    const location = await fresh()
    const writes = [...hourOf('BTC', H, 400), dueMarker(H)]
    await writeAndSeal(location, writes)
    const base = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expectPaged(base, 400)
    // Pages hold about 16 KB of values: the hour has several, so deltas merge over more than one page.
    expect(baseParts(base).length).toBeGreaterThan(1)
    expect(base.summary).toEqual({ records: 400, deltas: 0 })
    return { location, writes, base }
  }

  it('a late record joins the sealed hour as delta part 0 (1 record); part 0 is unchanged byte for byte; heads say N+1 records, 1 delta; answers equal the model', async () => {
    const { location, writes, base } = await sealedHour()
    const late = makeRecord({ symbol: 'BTC', timestamp: H + 1_234_567, value: 1.25 })
    writes.push(late)
    await writeAndSeal(location, [late])
    const chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(deltaParts(chunk)).toEqual([DELTA_PART])
    expect(chunk.counts.get(DELTA_PART)).toBe(1)
    expect(sameBase(chunk, base)).toBe(true)
    expect(chunk.summary).toEqual({ records: 401, deltas: 1 })
    await expectModel(location, writes, queriesAround('BTC', H, [late.timestamp]), 'late record')
    // Reopened again (nothing new to seal): unchanged.
    await writeAndSeal(location, [])
    expect(await chunkOnDisk(backend, location, 'BTC', periodOf(H))).toEqual(chunk)
  })

  it('a rewrite (same timestamp and id, new value) of a 10-minute head and of another record via deltas: count unchanged, the new values everywhere', async () => {
    const { location, writes, base } = await sealedHour()
    // 594 000 ms: the last record of the first ten-minute bucket, its head.
    const head = writes.find((r) => r.timestamp === H + 594_000) as InputRecord
    const rewrittenHead = { ...head, value: 12_345.5, signature: 'rewritten-head', source: { kraken: 1 } }
    writes.push(rewrittenHead)
    await writeAndSeal(location, [rewrittenHead])
    let chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(chunk.summary).toEqual({ records: 400, deltas: 1 })
    expect(sameBase(chunk, base)).toBe(true)
    await expectModel(location, writes, queriesAround('BTC', H, [head.timestamp]), 'rewritten head')

    const other = writes.find((r) => r.timestamp === H + 100 * 9_000) as InputRecord
    const rewrittenOther = { ...other, value: -0.5, signature: 'rewritten-other' }
    // The head once more, in a later delta: the later part wins.
    const headAgain = { ...head, value: 7, signature: 'rewritten-head-again' }
    writes.push(rewrittenOther, headAgain)
    await writeAndSeal(location, [rewrittenOther, headAgain])
    chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(chunk.summary).toEqual({ records: 400, deltas: 2 })
    expect(deltaParts(chunk)).toEqual([DELTA_PART, DELTA_PART + 1])
    expect(chunk.counts.get(DELTA_PART + 1)).toBe(2)
    await expectModel(location, writes, queriesAround('BTC', H, [head.timestamp, other.timestamp]), 'rewrites')
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
    try {
      const [atHead] = await store.range('BTC', { from: H, to: H + TEN_MINUTES - 1, interval: TEN_MINUTES })
      expect(atHead?.value).toBe(7)
      expect(atHead?.signature).toBe('rewritten-head-again')
    } finally {
      await store.close()
    }
  })

  it('ties on a timestamp across the base and delta parts are ordered by id (UTF-8 bytes)', async () => {
    const { location, writes } = await sealedHour()
    const t = H + 200 * 9_000
    // The base record's id is lowercase hex; '0…' sorts before it, U+E000 and U+10000 after (in UTF-8 U+E000 < U+10000, in UTF-16 the reverse).
    const first = [makeRecord({ symbol: 'BTC', timestamp: t, id: '\u{10000}', value: 1 }), makeRecord({ symbol: 'BTC', timestamp: t, id: '0000', value: 2 })]
    writes.push(...first)
    await writeAndSeal(location, first)
    const second = [makeRecord({ symbol: 'BTC', timestamp: t, id: '\uE000', value: 3 }), makeRecord({ symbol: 'BTC', timestamp: t, id: 'ffff-z', value: 4 })]
    writes.push(...second)
    await writeAndSeal(location, second)
    const chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(chunk.summary).toEqual({ records: 404, deltas: 2 })
    await expectModel(location, writes, queriesAround('BTC', H, [t]), 'ties')
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
    try {
      const ids = (await store.latest('BTC', { from: t, to: t, limit: 10 })).map((r) => r.id).reverse()
      expect(ids).toEqual(['0000', makeRecord({ symbol: 'BTC', timestamp: t }).id, 'ffff-z', '\uE000', '\u{10000}'])
    } finally {
      await store.close()
    }
  })

  it('after 16 delta parts the next late write rewrites the chunk whole: no delta keys, heads deltas 0, answers equal the model', async () => {
    const { location, writes } = await sealedHour()
    const times: number[] = []
    for (let k = 0; k < 16; k++) {
      const late = makeRecord({ symbol: 'BTC', timestamp: H + 4_500 + k * 9_000 * 25, value: 100 + k })
      times.push(late.timestamp)
      writes.push(late)
      await writeAndSeal(location, [late])
      const chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
      expect(chunk.summary).toEqual({ records: 401 + k, deltas: k + 1 })
      expect(deltaParts(chunk)).toEqual(Array.from({ length: k + 1 }, (_, i) => DELTA_PART + i))
    }
    await expectModel(location, writes, queriesAround('BTC', H, times.slice(0, 4)), '16 deltas')
    const last = makeRecord({ symbol: 'BTC', timestamp: H + HOUR - 1, value: 9 })
    writes.push(last)
    await writeAndSeal(location, [last])
    const chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(deltaParts(chunk)).toEqual([])
    expectPaged(chunk, 417)
    expect(chunk.summary).toEqual({ records: 417, deltas: 0 })
    await expectModel(location, writes, queriesAround('BTC', H, [last.timestamp, ...times.slice(0, 4)]), 'rewritten after 16 deltas')
  })

  it('a late batch of a quarter of the records joins as a delta; one more than a quarter rewrites at once (and drops the deltas there were)', async () => {
    const { location, writes } = await sealedHour()
    // Exactly a quarter (100 of 400): a delta.
    const quarter = Array.from({ length: 100 }, (_, i) => makeRecord({ symbol: 'BTC', timestamp: H + 4_000 + i * 9_000, value: i }))
    writes.push(...quarter)
    await writeAndSeal(location, quarter)
    let chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(chunk.summary).toEqual({ records: 500, deltas: 1 })
    expect(chunk.counts.get(DELTA_PART)).toBe(100)
    // 126 of 500 (> 125): the chunk rewritten whole with them and the delta merged in.
    const more = Array.from({ length: 126 }, (_, i) => makeRecord({ symbol: 'BTC', timestamp: H + 6_000 + i * 9_000, value: -i }))
    writes.push(...more)
    await writeAndSeal(location, more)
    chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(deltaParts(chunk)).toEqual([])
    expect(chunk.summary).toEqual({ records: 626, deltas: 0 })
    expectPaged(chunk, 626)
    await expectModel(location, writes, queriesAround('BTC', H, [H + 4_000, H + 6_000]), 'after a large late batch')

    // On a fresh sealed hour: 101 of 400 rewrites at once, no delta ever.
    const hour2 = H + 5 * HOUR
    const next = [...hourOf('BTC', hour2, 400), dueMarker(hour2)]
    writes.push(...next)
    await writeAndSeal(location, next)
    const big = Array.from({ length: 101 }, (_, i) => makeRecord({ symbol: 'BTC', timestamp: hour2 + 5_000 + i * 9_000 }))
    writes.push(...big)
    await writeAndSeal(location, big)
    chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(hour2))
    expect(deltaParts(chunk)).toEqual([])
    expect(chunk.summary).toEqual({ records: 501, deltas: 0 })
    await expectModel(location, writes, queriesAround('BTC', hour2, [hour2 + 5_000]), 'a batch over a quarter')
  })

  it('prune removing an hour with delta parts and cutting another: no delta keys left there, answers and stats equal the model, the result equals the model', async () => {
    const location = await fresh()
    const writes = [...hourOf('BTC', H, 400), ...hourOf('BTC', H + HOUR, 400), ...hourOf('BTC', H + 2 * HOUR, 50), dueMarker(H + 2 * HOUR)]
    await writeAndSeal(location, writes)
    const lateH = [makeRecord({ symbol: 'BTC', timestamp: H + 1_001, value: 1 }), { ...(writes[3] as InputRecord), value: 3, signature: 'rw' }]
    const lateH1 = [makeRecord({ symbol: 'BTC', timestamp: H + HOUR + 45 * MINUTE + 1, value: 5 }), makeRecord({ symbol: 'BTC', timestamp: H + HOUR + 10 * MINUTE + 7, value: 6 })]
    writes.push(lateH[0] as InputRecord)
    await writeAndSeal(location, [lateH[0] as InputRecord])
    writes.push(lateH[1] as InputRecord, ...lateH1)
    await writeAndSeal(location, [lateH[1] as InputRecord, ...lateH1])
    expect((await chunkOnDisk(backend, location, 'BTC', periodOf(H))).summary).toEqual({ records: 401, deltas: 2 })
    expect((await chunkOnDisk(backend, location, 'BTC', periodOf(H + HOUR))).summary).toEqual({ records: 402, deltas: 1 })

    const before = H + HOUR + 30 * MINUTE + 3
    const stored = storedRecords(writes, TEST_PROVIDER)
    const model = referencePrune(stored, before)
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
    try {
      expect(await store.prune({ before })).toEqual(model.result)
      const stats = await store.stats()
      expect(stats.records).toBe(model.left.length)
      expect(stats.perSymbol.find((s) => s.symbol === 'BTC')?.records).toBe(model.left.filter((r) => r.symbol === 'BTC').length)
    } finally {
      await store.close()
    }
    const gone = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(gone.parts.size).toBe(0)
    expect(gone.summary).toBeUndefined()
    const cut = await chunkOnDisk(backend, location, 'BTC', periodOf(H + HOUR))
    expect(deltaParts(cut)).toEqual([])
    const keptInCut = model.left.filter((r) => r.symbol === 'BTC' && periodOf(r.timestamp) === periodOf(H + HOUR)).length
    expect(cut.summary).toEqual({ records: keptInCut, deltas: 0 })
    expectPaged(cut, keptInCut)
    const leftWrites = writes.filter((r) => r.timestamp >= before)
    await expectModel(location, leftWrites, [...queriesAround('BTC', H), ...queriesAround('BTC', H + HOUR, [before, H + HOUR + 45 * MINUTE + 1])], 'after prune')
  })

  it('export() and backup() of a store with delta parts give every record once, the last write winning', async () => {
    const { location, writes } = await sealedHour()
    const t = H + 50 * 9_000
    const late = [
      makeRecord({ symbol: 'BTC', timestamp: t, id: '0000' }),
      { ...(writes.find((r) => r.timestamp === t) as InputRecord), value: 77, signature: 'rw' },
      makeRecord({ symbol: 'BTC', timestamp: H + 17, value: 3 }),
    ]
    writes.push(...late)
    await writeAndSeal(location, late)
    expect((await chunkOnDisk(backend, location, 'BTC', periodOf(H))).summary).toEqual({ records: 402, deltas: 1 })
    const backupRoot = await mkdtemp(join(tmpdir(), 'price-store-delta-backup-'))
    try {
      const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
      try {
        expect(await exportLines(store.export())).toEqual(modelExport(writes))
        expect(await exportLines(store.export({ symbols: ['BTC'], from: H + 1, to: t }))).toEqual(
          modelExport(writes, (r) => r.symbol === 'BTC' && r.timestamp >= H + 1 && r.timestamp <= t))
        const result = await store.backup(join(backupRoot, 'copy'))
        expect(result.stats.records).toBe(modelExport(writes).length)
      } finally {
        await store.close()
      }
      const copy = await PriceStore.open(join(backupRoot, 'copy'), { provider: TEST_PROVIDER })
      try {
        expect(await exportLines(copy.export())).toEqual(modelExport(writes))
      } finally {
        await copy.close()
      }
      await expectModel(join(backupRoot, 'copy'), writes, queriesAround('BTC', H, [t]), 'the backup')
    } finally {
      await rm(backupRoot, { recursive: true, force: true })
    }
  })

  it('a deleted delta part → PRICE_CORRUPT_VALUE naming "delta part 0" on queries that return its record or read the hour by position; reads that need only its keys (from the heads entry) and other symbols answer', async () => {
    const { location, writes } = await sealedHour()
    const late = makeRecord({ symbol: 'BTC', timestamp: H + 1_234_567 })
    writes.push(late)
    await writeAndSeal(location, [late])
    await deletePart(backend, location, 'BTC', periodOf(H), DELTA_PART)
    const stored = storedRecords(writes, TEST_PROVIDER)
    for (const memory of MEMORY) {
      const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...memory })
      try {
        const reading: QueryParams[] = [
          { symbol: 'BTC', limit: '3000' },
          { symbol: 'BTC', toTimestamp: String(late.timestamp) },
          { symbol: 'BTC', toTimestamp: String(H + 30 * MINUTE), direction: 'after' },
          { symbol: 'BTC', interval: '1', fromTimestamp: String(H), toTimestamp: String(H + HOUR - 1) },
        ]
        for (const params of reading) {
          const error = await store.query(params).then(() => undefined, (err: unknown) => err)
          expect(isPriceStoreError(error, 'PRICE_CORRUPT_VALUE'), `${show(params)}: ${String(error)}`).toBe(true)
          expect((error as Error).message, show(params)).toContain('delta part 0')
          expect((error as Error).message, show(params)).toContain('BTC')
        }
        for (const params of [
          { symbol: 'ETH' }, { symbol: 'ETH', interval: '1', fromTimestamp: '0', toTimestamp: String(MAX) }, { symbol: 'BTC', toTimestamp: String(H - 1) },
          // The delta record is not the answer: the as-of reads one page and the heads entry's delta keys.
          { symbol: 'BTC', toTimestamp: String(late.timestamp - 1) }, { symbol: 'BTC', toTimestamp: String(H + 30 * MINUTE) },
          // Candles read refs alone: the key column and the delta keys.
          { symbol: 'BTC', interval: String(MINUTE), fromTimestamp: String(H), toTimestamp: String(H + HOUR - 1), aggregate: 'candles' },
        ] as QueryParams[]) {
          expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(stored, params, config), show(params))
        }
      } finally {
        await store.close()
      }
    }
  })

  it('the heads entry keeps its delta records\' keys (format 7): every record of its delta parts, merged (a later write of a key winning), by (timestamp, id), covering each delta part', async () => {
    const { location, writes } = await sealedHour()
    const head = writes.find((r) => r.timestamp === H + 594_000) as InputRecord
    const batches: InputRecord[][] = [
      [makeRecord({ symbol: 'BTC', timestamp: H + 1_234_567, value: 1.25 }), { ...head, value: 12_345.5, signature: 'rewritten-head' }],
      [{ ...head, value: -0, signature: 'rewritten-again' }, makeRecord({ symbol: 'BTC', timestamp: H + 4_500, id: 'not-a-uuid', value: 3 })],
      [makeRecord({ symbol: 'BTC', timestamp: H + 1_234_567, id: '0-tie', value: 4 })],
    ]
    for (const [k, batch] of batches.entries()) {
      writes.push(...batch)
      await writeAndSeal(location, batch)
      const chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
      expect(chunk.summary?.deltas).toBe(k + 1)
      expect(chunk.deltaKeys, `after late batch ${k}`).toEqual({ covers: k + 1, records: expectedDeltaKeys(batches.slice(0, k + 1)) })
    }
    await expectModel(location, writes, queriesAround('BTC', H, [head.timestamp, H + 1_234_567, H + 4_500]), 'delta keys')
  })

  it(`more than ${MAX_DELTA_KEYS} delta records: the heads entry keeps no delta keys, answers equal the model`, async () => {
    const location = await fresh()
    // 2,400 base records (1.5 s apart), then a late batch of 520 (a quarter or less: it joins as a delta part).
    const base = Array.from({ length: 2_400 }, (_, i) => makeRecord({ symbol: 'BTC', timestamp: H + i * 1_500 }))
    const writes = [...base, dueMarker(H)]
    await writeAndSeal(location, writes)
    const late = Array.from({ length: MAX_DELTA_KEYS + 8 }, (_, i) => makeRecord({ symbol: 'BTC', timestamp: H + 700 + i * 6_000, value: i }))
    writes.push(...late)
    await writeAndSeal(location, late)
    const chunk = await chunkOnDisk(backend, location, 'BTC', periodOf(H))
    expect(chunk.summary).toEqual({ records: 2_400 + late.length, deltas: 1 })
    expect(chunk.deltaKeys).toBeUndefined()
    await expectModel(location, writes, queriesAround('BTC', H, [H + 700, H + 700 + 6_000 * 300]), 'too many delta records for delta keys')
  })

  it('a delta part whose record disagrees with the heads entry\'s delta keys (its value changed on disk) → PRICE_CORRUPT_VALUE naming the part when that record is returned, never a wrong answer', async () => {
    const { location, writes } = await sealedHour()
    const late = makeRecord({ symbol: 'BTC', timestamp: H + 1_234_567, value: 1.25 })
    writes.push(late)
    await writeAndSeal(location, [late])
    // The record's stored value starts with its 9-byte header: flags, then the value as a little-endian float64.
    await editPart(backend, location, 'BTC', periodOf(H), DELTA_PART, (bytes) => {
      const { fields } = parseChunkPart(bytes, periodOf(H) * HOUR)
      bytes.writeDoubleLE(99, (fields[3] as number) + 1)
      return bytes
    })
    const stored = storedRecords(writes, TEST_PROVIDER)
    for (const memory of MEMORY) {
      const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...memory })
      try {
        const error = await store.query({ symbol: 'BTC', toTimestamp: String(late.timestamp) }).then(() => undefined, (err: unknown) => err)
        expect(isPriceStoreError(error, 'PRICE_CORRUPT_VALUE'), String(error)).toBe(true)
        expect((error as Error).message).toContain('delta part 0')
        expect((error as Error).message).toContain('delta keys')
        // An as-of answered by a base record reads no delta part.
        const params = { symbol: 'BTC', toTimestamp: String(late.timestamp - 1) }
        expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(stored, params, config), show(params))
      } finally {
        await store.close()
      }
    }
  })

  it('a heads entry whose delta keys do not parse → PRICE_CORRUPT_VALUE naming the heads entry on queries that read the hour; other hours answer', async () => {
    const { location, writes } = await sealedHour()
    const late = [makeRecord({ symbol: 'BTC', timestamp: H + 1_234_567 }), makeRecord({ symbol: 'BTC', timestamp: H + 2_000_001 })]
    writes.push(...late)
    await writeAndSeal(location, late)
    await withRaw(backend, location, async (_, db) => {
      const heads = headsOf(db)
      const bytes = Buffer.from((await heads.get(headsKeyOf('BTC', periodOf(H)))) as Uint8Array)
      const keys = readHeads(bytes, periodOf(H) * HOUR, () => {}).deltaKeys as Buffer
      // After the key column's header (version, part count, record count: 4 bytes here), every byte 0xff: a varint that never ends.
      bytes.fill(0xff, keys.byteOffset - bytes.byteOffset + 4, keys.byteOffset - bytes.byteOffset + keys.length)
      await heads.put(headsKeyOf('BTC', periodOf(H)), bytes)
    })
    const stored = storedRecords(writes, TEST_PROVIDER)
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
    try {
      for (const params of [
        { symbol: 'BTC', toTimestamp: String(H + 30 * MINUTE) },
        { symbol: 'BTC', interval: String(MINUTE), fromTimestamp: String(H), toTimestamp: String(H + HOUR - 1), aggregate: 'candles' },
      ] as QueryParams[]) {
        const error = await store.query(params).then(() => undefined, (err: unknown) => err)
        expect(isPriceStoreError(error, 'PRICE_CORRUPT_VALUE'), `${show(params)}: ${String(error)}`).toBe(true)
        expect((error as Error).message, show(params)).toContain('heads BTC@')
      }
      for (const params of [{ symbol: 'ETH' }, { symbol: 'BTC', toTimestamp: String(H - 1) }] as QueryParams[]) {
        expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(stored, params, config), show(params))
      }
    } finally {
      await store.close()
    }
  })
})
