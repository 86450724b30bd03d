/**
 * Range sampling through the bucket index (intervals that are multiples of
 * 1 min, 10 min, 1 h or 1 day) must equal a naive sampling of every record,
 * whatever order the records were written in (backfills, rewrites, ties on a
 * timestamp split across batches) and wherever the range starts and ends.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import type { AbstractLevel } from 'abstract-level'
import { ClassicLevel } from 'classic-level'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { DIRECTORY_LEVEL, MAX_DIRECTORY_ENTRIES, decodeDirectory, encodeBucketKey } from '../../src/keys/bucket-key.js'

const provider = { name: 'redstone', id: 'prov-id', publicKey: 'prov-key' }
const MINUTE = 60_000
const HOUR = 3_600_000
const DAY = 86_400_000
const BASE = 1_700_006_400_000 // a UTC midnight

interface Written { symbol: string; timestamp: number; id: string; value: number }

// Timestamps cluster on level edges (±1 ms of minute, 10-minute, hour and day boundaries) and spread over 3 days.
const timestampArb = fc.oneof(
  fc.integer({ min: 0, max: 3 * DAY }),
  fc.tuple(fc.integer({ min: 0, max: 72 }), fc.constantFrom(-1, 0, 1)).map(([h, d]) => h * HOUR + d),
  fc.tuple(fc.integer({ min: 0, max: 400 }), fc.constantFrom(-1, 0, 1)).map(([m, d]) => m * 10 * MINUTE + d),
).map((offset) => BASE + Math.max(0, offset))
const recordArb = fc.record({
  symbol: fc.constantFrom('BTC', 'BTC-USD'),
  timestamp: timestampArb,
  id: fc.constantFrom('a', 'b', 'ab', '\u{1F600}', '\uFF61'),
  value: fc.integer(),
})
const intervalArb = fc.constantFrom(MINUTE, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 6 * HOUR, DAY, 2 * DAY, 90 * MINUTE)
/** Marks a new database as the given store format before the store first opens it. */
async function presetFormat(db: MemoryLevel | string, format: string): Promise<void> {
  const level: AbstractLevel<any, any, any> = typeof db === 'string' ? new ClassicLevel(db) : db
  await level.sublevel<string, string>('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' }).put('format', format)
  if (typeof db === 'string') await level.close()
}

/** Head-cache sizes: off, one head (every block is evicted at once), one block, and the default. */
const HEAD_CACHE_SIZES = [0, 1, 64, 32_768] as const
/** Hot-tail sizes: off, two records (the edge of a range often falls in the tail, the range not), and the default. */
const TAIL_SIZES = [0, 2, 128] as const
const boundArb = fc.oneof(timestampArb, fc.constant(BASE), fc.constant(BASE + 3 * DAY))

/** The naive model: filter, then the greatest (timestamp, id by UTF-8 bytes) per epoch bucket, oldest first. */
function expectedSample(records: readonly Written[], symbol: string, from: number, to: number, interval: number): Written[] {
  const latest = new Map<string, Written>()
  for (const r of records) latest.set(`${r.symbol}\u0000${r.timestamp}\u0000${r.id}`, r) // later writes replace
  const byBucket = new Map<number, Written>()
  for (const r of latest.values()) {
    if (r.symbol !== symbol || r.timestamp < from || r.timestamp > to) continue
    const bucket = Math.floor(r.timestamp / interval)
    const held = byBucket.get(bucket)
    const later = held === undefined || r.timestamp > held.timestamp ||
      (r.timestamp === held.timestamp && Buffer.compare(Buffer.from(r.id), Buffer.from(held.id)) > 0)
    if (later) byBucket.set(bucket, r)
  }
  return [...byBucket.entries()].sort(([a], [b]) => a - b).map(([, r]) => r)
}

const toRecord = (r: Written) => ({
  id: r.id, symbol: r.symbol, provider: provider.id, value: r.value, signature: 'sig', permawebTx: 'tx', version: '1', source: {}, timestamp: r.timestamp,
})
const summary = (r: { timestamp: number; id: string; value: number }) => ({ timestamp: r.timestamp, id: r.id, value: r.value })

describe.each([
  ['memory-level', async () => ({ db: new MemoryLevel(), done: async () => {} })],
  ['classic-level', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'price-store-bucket-'))
    return { db: dir, done: () => rm(dir, { recursive: true, force: true }) }
  }],
] as const)('bucket index on %s', (_name, makeDb) => {
  let cleanups: (() => Promise<void>)[] = []
  beforeAll(() => void (cleanups = []))
  afterAll(async () => void (await Promise.all(cleanups.map((done) => done()))))

  test('range answers equal a naive sampling of all records', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(recordArb, { maxLength: 12 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.tuple(fc.constantFrom('BTC', 'BTC-USD'), boundArb, boundArb, intervalArb), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(...HEAD_CACHE_SIZES),
        fc.constantFrom(...TAIL_SIZES),
        fc.constantFrom(1, 2),
        async (batches, queries, bucketHeads, recordsPerSymbol, format) => {
          const { db, done } = await makeDb()
          cleanups.push(done)
          // Format 1 has no minute directories: edges are sought. Format 2 finds them with synchronous gets.
          if (format === 1) await presetFormat(db, '1')
          // Answers come from the index (the head cache, or the disk), the edge of the last bucket from the
          // disk or the hot tail, or the whole answer from the tail.
          const store = await PriceStore.open(db, { provider, cache: { recordsPerSymbol, bucketHeads } })
          try {
            const written: Written[] = []
            // Queries after every batch: cached heads must follow each later write.
            for (const batch of batches) {
              await store.putMany(batch.map(toRecord))
              written.push(...batch)
              for (const [symbol, a, b, interval] of queries) {
                const [from, to] = a <= b ? [a, b] : [b, a]
                const expected = expectedSample(written, symbol, from, to, interval).map(summary)
                expect((await store.range(symbol, { from, to, interval })).map(summary)).toEqual(expected)
                const streamed = []
                for await (const r of store.rangeStream(symbol, { from, to, interval })) streamed.push(summary(r))
                expect(streamed).toEqual(expected)
              }
            }
          } finally {
            await store.close()
          }
        },
      ),
      { numRuns: _name === 'memory-level' ? 200 : 40 },
    )
  })

  test('a range whose last bucket ends in the hot tail, read while a batch commits, shows all of it or none', async () => {
    const { db, done } = await makeDb()
    cleanups.push(done)
    // Two records of tail: the range starts before it (so the tail cannot answer alone), its last
    // bucket's edge falls inside it. The batch changes both an old hour's head and that edge.
    const store = await PriceStore.open(db, { provider, cache: { recordsPerSymbol: 2 } })
    const at = (minutes: number, id = 'a'): Written => ({ symbol: 'BTC', timestamp: BASE + DAY + minutes * MINUTE, id, value: minutes })
    try {
      const before = [at(-180), at(5), at(65)]
      const batch = [at(-179), at(68)]
      await store.putMany(before.map(toRecord))
      const q = { from: BASE + DAY - 4 * HOUR, to: BASE + DAY + 70 * MINUTE, interval: HOUR }
      const without = expectedSample(before, 'BTC', q.from, q.to, q.interval).map(summary)
      const withBatch = expectedSample([...before, ...batch], 'BTC', q.from, q.to, q.interval).map(summary)
      expect((await store.range('BTC', q)).map(summary)).toEqual(without)
      const answers: Promise<unknown[]>[] = []
      let written = false
      const write = store.putMany(batch.map(toRecord)).then(() => void (written = true))
      // Queries at every microtask and every turn of the event loop until the write resolves.
      for (let turn = 0; !written && turn < 10_000; turn++) {
        for (let tick = 0; tick < 20; tick++) {
          answers.push(store.range('BTC', q).then((got) => got.map(summary)))
          await Promise.resolve()
        }
        await new Promise(setImmediate)
      }
      await write
      for (const got of await Promise.all(answers)) expect([without, withBatch]).toContainEqual(got)
      expect((await store.range('BTC', q)).map(summary)).toEqual(withBatch)
    } finally {
      await store.close()
    }
  })

  test('edges inside crowded minutes, written in any order, equal a naive sampling', async () => {
    const crowdedArb = fc.record({
      symbol: fc.constant('BTC'),
      timestamp: fc.integer({ min: 0, max: 3 * MINUTE }).map((offset) => BASE + DAY + offset),
      id: fc.constantFrom('a', 'b', 'ab', '\u{1F600}', '\uFF61'),
      value: fc.integer(),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(crowdedArb, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(fc.integer({ min: -1, max: 3 * MINUTE + 1 }), fc.constantFrom(10 * MINUTE, HOUR, DAY)), { minLength: 1, maxLength: 8 }),
        async (batches, ends) => {
          const { db, done } = await makeDb()
          cleanups.push(done)
          const store = await PriceStore.open(db, { provider, cache: { recordsPerSymbol: 0 } })
          try {
            for (const batch of batches) await store.putMany(batch.map(toRecord))
            for (const [end, interval] of ends) {
              const from = BASE
              const to = BASE + DAY + end
              expect((await store.range('BTC', { from, to, interval })).map(summary)).toEqual(expectedSample(batches.flat(), 'BTC', from, to, interval).map(summary))
            }
          } finally {
            await store.close()
          }
        },
      ),
      { numRuns: _name === 'memory-level' ? 150 : 30 },
    )
  })

  test('a minute with more records than a directory holds: ranges whose edge falls in it still sample right', async () => {
    const { db, done } = await makeDb()
    cleanups.push(done)
    const store = await PriceStore.open(db, { provider, cache: { recordsPerSymbol: 0 } })
    const minute = BASE + DAY + 7 * MINUTE
    // 200 records fill a directory; 100 more overflow it, so its edges are sought again.
    const first = Array.from({ length: 200 }, (_, i): Written => ({ symbol: 'BTC', timestamp: minute + i * 250, id: `r${i}`, value: i }))
    const more = Array.from({ length: 100 }, (_, i): Written => ({ symbol: 'BTC', timestamp: minute + 125 + i * 500, id: `s${i}`, value: 1000 + i }))
    const early = [{ symbol: 'BTC', timestamp: BASE + DAY - 1, id: 'e', value: -1 }]
    try {
      for (const [written, batch] of [[[...early, ...first], [...early, ...first]], [[...early, ...first, ...more], more]] as const) {
        await store.putMany(batch.map(toRecord))
        for (const to of [minute - 1, minute, minute + 124, minute + 125, minute + 30_000, minute + 49_876, minute + 59_999]) {
          for (const interval of [10 * MINUTE, HOUR]) {
            const from = BASE + DAY - HOUR
            const expected = expectedSample(written, 'BTC', from, to, interval).map(summary)
            expect((await store.range('BTC', { from, to, interval })).map(summary), `to ${to - minute}, interval ${interval}`).toEqual(expected)
          }
        }
        if (db instanceof MemoryLevel) {
          // The directory as stored: every record of the minute, then the overflow mark.
          const stored = await db.sublevel<Uint8Array, Uint8Array>('b', { keyEncoding: 'view', valueEncoding: 'view' })
            .get(encodeBucketKey('BTC', DIRECTORY_LEVEL, Math.floor(minute / MINUTE)))
          const directory = decodeDirectory(stored ?? new Uint8Array(0))
          expect(written.length > MAX_DIRECTORY_ENTRIES ? directory : (directory as unknown[]).length).toEqual(written.length > MAX_DIRECTORY_ENTRIES ? 'overflow' : first.length)
        }
      }
    } finally {
      await store.close()
    }
  })

  // memory-level only: the damage is written while the store holds the database, which LevelDB's lock forbids.
  test.skipIf(_name !== 'memory-level')('a batch writing into a minute whose directory does not decode marks it overflowed, and edges there are sought', async () => {
    const { db, done } = await makeDb()
    cleanups.push(done)
    if (!(db instanceof MemoryLevel)) throw new Error('memory-level only')
    const store = await PriceStore.open(db, { provider, cache: { recordsPerSymbol: 0 } })
    const minute = BASE + DAY + 3 * MINUTE
    const key = encodeBucketKey('BTC', DIRECTORY_LEVEL, Math.floor(minute / MINUTE))
    const buckets = db.sublevel<Uint8Array, Uint8Array>('b', { keyEncoding: 'view', valueEncoding: 'view' })
    const early: Written = { symbol: 'BTC', timestamp: minute - HOUR, id: 'e', value: 0 }
    const inMinute = [10_000, 30_000].map((offset, i): Written => ({ symbol: 'BTC', timestamp: minute + offset, id: `m${i}`, value: i + 1 }))
    try {
      await store.putMany([early, inMinute[0] as Written].map(toRecord))
      await buckets.put(key, new Uint8Array([9, 9, 9]))
      await store.putMany([inMinute[1] as Written].map(toRecord))
      expect(decodeDirectory((await buckets.get(key)) ?? new Uint8Array(0))).toBe('overflow')
      const written = [early, ...inMinute]
      for (const to of [minute + 20_000, minute + 40_000]) {
        const q = { from: minute - 2 * HOUR, to, interval: HOUR }
        expect((await store.range('BTC', q)).map(summary)).toEqual(expectedSample(written, 'BTC', q.from, q.to, q.interval).map(summary))
      }
    } finally {
      await store.close()
    }
  })

  test('a range read while a batch is written sees all of the batch or none of it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(recordArb, { maxLength: 12 }),
        fc.array(recordArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.tuple(fc.constantFrom('BTC', 'BTC-USD'), boundArb, boundArb, fc.constantFrom(10 * MINUTE, HOUR, DAY)), { minLength: 1, maxLength: 4 }),
        fc.constantFrom(...HEAD_CACHE_SIZES.filter((size) => size > 0)),
        fc.constantFrom(...TAIL_SIZES),
        async (before, concurrent, queries, bucketHeads, recordsPerSymbol) => {
          const { db, done } = await makeDb()
          cleanups.push(done)
          const store = await PriceStore.open(db, { provider, cache: { recordsPerSymbol, bucketHeads } })
          try {
            await store.putMany(before.map(toRecord))
            const bounds = queries.map(([symbol, a, b, interval]) => ({ symbol, from: Math.min(a, b), to: Math.max(a, b), interval }))
            // Warm the cache, then race the same queries against the write, each started a step further in.
            for (const q of bounds) await store.range(q.symbol, q)
            const answers: Promise<{ q: typeof bounds[number]; got: unknown[] }>[] = []
            const write = store.putMany(concurrent.map(toRecord))
            // Each query twice, a microtask and then a macrotask apart, so some start while the batch commits.
            for (const q of bounds) {
              answers.push(store.range(q.symbol, q).then((got) => ({ q, got: got.map(summary) })))
              await Promise.resolve()
              answers.push(store.range(q.symbol, q).then((got) => ({ q, got: got.map(summary) })))
              await new Promise(setImmediate)
            }
            await write
            for (const { q, got } of await Promise.all(answers)) {
              const without = expectedSample(before, q.symbol, q.from, q.to, q.interval).map(summary)
              const withBatch = expectedSample([...before, ...concurrent], q.symbol, q.from, q.to, q.interval).map(summary)
              expect([without, withBatch]).toContainEqual(got)
            }
            // And once the write has resolved, its heads are in every answer.
            for (const q of bounds) {
              expect((await store.range(q.symbol, q)).map(summary)).toEqual(expectedSample([...before, ...concurrent], q.symbol, q.from, q.to, q.interval).map(summary))
            }
          } finally {
            await store.close()
          }
        },
      ),
      { numRuns: _name === 'memory-level' ? 150 : 40 },
    )
  })
})
