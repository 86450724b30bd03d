/**
 * The chunk room (src/store/chunks/) against a naive model, through its one
 * interface, SealedHours: records written in sessions of batches (in order,
 * late into sealed hours, backfilled, corrected: the same key again with
 * another value), each session closed (which seals every hour) and the
 * store reopened. Then every hour of every symbol is read as each reader
 * reads it (rows by position, small reads by page table and newest first,
 * refs, keys, the paged key column, key columns in one round trip) with and
 * without caches, and must hold exactly the model's records of that hour:
 * the last write of each (timestamp, id), ascending.
 */
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { PERIOD_MS } from '../../src/keys/key-layout.js'
import { ChunkReader, type CachedChunk, type PeriodHeads, type ViewCaches } from '../../src/store/chunks/chunk-reader.js'
import type { SealedHours } from '../../src/store/chunks/sealed-hours.js'
import { SublevelReads } from '../../src/store/db/root-reads.js'
import { createSublevels, openSublevels, prefixesOf } from '../../src/store/db/sublevels.js'
import { HeadsIndex } from '../../src/store/heads/heads-index.js'
import type { RowList } from '../../src/store/rows/row-list.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { rec } from '../support/records.js'

const SYMBOLS = ['BTC', 'ETH'] as const
const HOURS = 3
const BASE_HOUR = 472_222 // an hour of 2023-11-14
const START = BASE_HOUR * PERIOD_MS

/** One write: a key (symbol, timestamp, id) and the value it gets. */
interface Write {
  readonly symbol: string
  readonly timestamp: number
  readonly id: string
  readonly value: number
}

/** `[timestamp, id, value]` of a record, the model's and the room's alike. */
type Key = readonly [number, string, number]

// Offsets cluster so an hour gets from none to a few hundred records (several pages); ids from a small set, so keys repeat (corrections, ties).
const writeArb: fc.Arbitrary<Write> = fc.record({
  symbol: fc.constantFrom(...SYMBOLS),
  hour: fc.integer({ min: 0, max: HOURS - 1 }),
  second: fc.integer({ min: 0, max: 3599 }),
  id: fc.constantFrom('a', 'b', 'c', 'd'),
  value: fc.integer({ min: 1, max: 1_000_000 }),
}).map(({ symbol, hour, second, id, value }) => ({ symbol, timestamp: START + hour * PERIOD_MS + second * 1000, id: `${id}${second % 7}`, value: value / 100 }))

/** A dense run in one hour: more records than a page holds (64), so the hour is sealed in several pages. */
const denseArb: fc.Arbitrary<Write[]> = fc.record({
  symbol: fc.constantFrom(...SYMBOLS),
  hour: fc.integer({ min: 0, max: HOURS - 1 }),
  first: fc.integer({ min: 0, max: 1000 }),
  count: fc.integer({ min: 65, max: 400 }),
  step: fc.integer({ min: 1, max: 6 }),
  value: fc.integer({ min: 1, max: 1000 }),
}).map(({ symbol, hour, first, count, step, value }) =>
  Array.from({ length: count }, (_, i) => ({ symbol, timestamp: START + hour * PERIOD_MS + Math.min(3599, first + i * step) * 1000 + i, id: 'd', value: value + i / 100 })))

/** Sessions of batches: a session's batches are written, then the store is closed (sealing every hour) and reopened. */
const batchArb = fc.oneof(fc.array(writeArb, { minLength: 1, maxLength: 300 }), denseArb)
const sessionsArb = fc.array(fc.array(batchArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 })

/** The model: the last write of each key, per (symbol, hour), ascending by timestamp then id. */
function model(sessions: readonly (readonly (readonly Write[])[])[]): Map<string, Key[]> {
  const last = new Map<string, Write>()
  for (const batch of sessions.flat()) for (const write of batch) last.set(`${write.symbol}\u0000${write.timestamp}\u0000${write.id}`, write)
  const hours = new Map<string, Key[]>()
  for (const write of last.values()) {
    const hour = `${write.symbol}@${Math.floor(write.timestamp / PERIOD_MS)}`
    if (!hours.has(hour)) hours.set(hour, [])
    hours.get(hour)?.push([write.timestamp, write.id, write.value])
  }
  for (const keys of hours.values()) keys.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
  return hours
}

/** Caches that keep everything installed (the room's cached paths), or none. */
function caches(keep: boolean): ViewCaches {
  const heads = new Map<string, PeriodHeads>()
  const chunks = new Map<string, CachedChunk>()
  return {
    provider: TEST_PROVIDER,
    cachedHeads: (key) => (keep ? heads.get(key) : undefined),
    cachedChunk: (key) => (keep ? chunks.get(key) : undefined),
    installHeads: (key, value) => void (keep && heads.set(key, value)),
    installChunk: (key, value) => void (keep && chunks.set(key, value)),
  }
}

/** The room over the closed store's database, read from one snapshot. */
async function openRoom(db: MemoryLevel, keep: boolean): Promise<{ room: SealedHours; close(): Promise<void> }> {
  await db.open()
  const levels = createSublevels(db)
  await openSublevels(levels)
  const heads = new HeadsIndex(levels.heads, prefixesOf(levels).heads, TEST_PROVIDER)
  const snapshot = db.snapshot()
  const room = new ChunkReader(caches(keep), { level: levels.chunks, reads: new SublevelReads(levels.chunks), heads }, { snapshot }, 0, false)
  return { room, close: async () => snapshot.close() }
}

function keysOf(list: RowList, refs = false): Key[] {
  return Array.from({ length: list.length }, (_, i) => {
    const row = list.rowAt(i)
    const value = refs ? (row.ref?.().value as number) : row.record().value
    return [row.timestamp, row.id, value] as const
  })
}

/** The newest `limit` records at or before `to` in the hour, newest first: by `takeNewest` where the list has it, else by position. */
function newest(list: RowList, from: number, to: number, limit: number): Key[] {
  const rows = list.takeNewest?.(from, to, limit, []) ?? keysOf(list).filter(([t]) => t <= to).slice(-limit).reverse().map(([t, id]) => list.rowAt(keysOf(list).findIndex(([u, v]) => u === t && v === id)))
  return rows.map((row) => [row.timestamp, row.id, row.record().value] as const)
}

/** What the runs reached, so the test shows it read hours of every kind (the seed is fixed: these are not luck). */
const reached = { deltaHours: 0, pageTables: 0, manyPages: 0, deltaKeys: 0 }

async function checkRoom(room: SealedHours, hours: Map<string, Key[]>, probes: readonly number[]): Promise<void> {
  for (const symbol of SYMBOLS) {
    for (let period = BASE_HOUR; period < BASE_HOUR + HOURS; period++) {
      const want = hours.get(`${symbol}@${period}`) ?? []
      const heads = room.heads(symbol, period)
      if (want.length === 0) {
        expect(heads, `${symbol}@${period} has no chunk`).toBeNull()
        continue
      }
      if (heads === null) throw new Error(`${symbol}@${period}: no heads for ${want.length} records`)
      expect(heads.records, `${symbol}@${period} record count`).toBe(want.length)
      if (heads.deltas > 0) reached.deltaHours++
      if (heads.deltaKeys !== undefined) reached.deltaKeys++
      if (heads.pageStarts.timestamps.length > 0) reached.pageTables++
      if (heads.pageStarts.timestamps.length > 1) reached.manyPages++
      for (const small of [false, true]) {
        const list = room.chunk(symbol, period, heads, small)
        expect(keysOf(list), `${symbol}@${period} rows (small ${small})`).toEqual(want)
        for (const probe of probes) {
          const to = period * PERIOD_MS + probe
          const expected = want.filter(([t]) => t <= to).slice(-3).reverse()
          expect(newest(room.chunk(symbol, period, heads, small), period * PERIOD_MS, to, 3), `${symbol}@${period} newest 3 to +${probe} (small ${small})`).toEqual(expected)
        }
      }
      expect(keysOf(room.refs(symbol, period, heads), true), `${symbol}@${period} refs`).toEqual(want)
      const keys = room.keys(symbol, period, heads)
      expect(Array.from({ length: keys.length }, (_, i) => [keys.timestampAt(i), keys.idAt(i)]), `${symbol}@${period} keys`).toEqual(want.map(([t, id]) => [t, id]))
      const paged = room.pagedChunk(symbol, period, heads.deltas)
      if (paged !== undefined) expect(keysOf(paged), `${symbol}@${period} paged`).toEqual(want)
      const { columns, deltas } = await room.keyColumns(symbol, period, period)
      const column = columns[0]
      if (column !== undefined && deltas[0] === false) {
        expect(keysOf(room.keyColumnList(symbol, period, column, true)), `${symbol}@${period} key column with pages`).toEqual(want)
        expect(keysOf(room.keyColumnList(symbol, period, column, false), true), `${symbol}@${period} key column alone`).toEqual(want)
      }
    }
  }
}

describe('the chunk room, through SealedHours', () => {
  it('holds each hour exactly as the model does, after in-order, late, backfilled and corrected writes, sealed and reopened (property)', async () => {
    await fc.assert(
      fc.asyncProperty(sessionsArb, fc.array(fc.integer({ min: 0, max: PERIOD_MS - 1 }), { minLength: 1, maxLength: 4 }), async (sessions, probes) => {
        const db = new MemoryLevel({ keyEncoding: 'view', valueEncoding: 'view' })
        for (const batches of sessions) {
          const store = await PriceStore.open(db as never, { provider: TEST_PROVIDER })
          try {
            for (const batch of batches) await store.putMany(batch.map((write) => rec({ ...write })))
          } finally {
            await store.close()
          }
        }
        const hours = model(sessions)
        for (const keep of [false, true]) {
          const { room, close } = await openRoom(db, keep)
          try {
            await checkRoom(room, hours, probes)
            // Read again: with caches on, from what the first pass installed.
            await checkRoom(room, hours, probes)
          } finally {
            await close()
          }
        }
        await db.close()
      }),
      { seed: 4343, numRuns: 25 },
    )
    expect(reached.deltaHours).toBeGreaterThan(0)
    expect(reached.deltaKeys).toBeGreaterThan(0)
    expect(reached.pageTables).toBeGreaterThan(0)
    expect(reached.manyPages).toBeGreaterThan(0)
  })
})
