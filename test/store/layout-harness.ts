/**
 * What the storage-layout tests (delta parts, paged chunks) share: the two
 * backends, with a way to reach the raw database under a closed store, the
 * cache settings they read with, writing and sealing, and the check of
 * every query against the reference model. Part numbers and key prefixes
 * are written out here by hand (not imported from src/keys), so the tests
 * check the documented layout, not the code's.
 */
import type { AbstractLevel, AbstractSublevel } from 'abstract-level'
import { ClassicLevel } from 'classic-level'
import { MemoryLevel } from 'memory-level'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect } from 'vitest'
import { DEFAULT_LIMITS, PriceStore } from '../../src/index.js'
import type { PriceStoreOptions, QueryParams } from '../../src/index.js'
import { TEST_PROVIDER, type InputRecord } from '../../src/testing/records.js'
import { outcomeOf, referenceQuery, storedRecords } from '../../src/testing/reference-model.js'
import { expectSameOutcome } from '../property/hours-model.js'

/** The part number of a chunk's key column; base parts (pages) are below it. */
export const KEYS_PART = 0x7fff
/** The part number of a chunk's first delta part. */
export const DELTA_PART = 0x8000

export type AnyLevel = AbstractLevel<any, any, any>
export type Location = string | MemoryLevel<string, string>

export interface Backend {
  readonly name: string
  location(dir: string): Location
  /** The raw database under a closed store. */
  raw(location: Location): AnyLevel
}

export const BACKENDS: readonly Backend[] = [
  { name: 'classic-level', location: (dir) => dir, raw: (location) => new ClassicLevel(location as string) },
  { name: 'memory-level', location: () => new MemoryLevel(), raw: (location) => location as MemoryLevel<string, string> },
]

/**
 * Fresh locations on `backend` for the tests of the enclosing describe block (`prefix` names their temp
 * directories), every directory removed after each test.
 */
export function scratchLocations(backend: Backend, prefix: string): () => Promise<Location> {
  let dirs: string[] = []
  afterEach(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
    dirs = []
  })
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), prefix))
    dirs.push(dir)
    return backend.location(dir)
  }
}

/** Caches off (every read from disk) and the defaults. */
export const MEMORY: readonly Partial<PriceStoreOptions>[] = [{ cache: { recordsPerSymbol: 0, headBytes: 0, chunkBytes: 0 } }, {}]

/** The prefix of every part of the chunk of `symbol` in `period`: `period (u32 BE) · symbol (UTF-8) · 0x00`. */
export function symbolChunkPrefix(period: number, symbol: string): Buffer {
  const head = Buffer.alloc(4)
  head.writeUInt32BE(period)
  return Buffer.concat([head, Buffer.from(symbol, 'utf8'), Buffer.from([0])])
}

/** The key of part `part` of the chunk of `symbol` in `period`: its prefix, then the part (u16 BE). */
export function chunkKeyOf(period: number, symbol: string, part: number): Buffer {
  const tail = Buffer.alloc(2)
  tail.writeUInt16BE(part)
  return Buffer.concat([symbolChunkPrefix(period, symbol), tail])
}

/** The heads key of `symbol` in `period`: `symbol (UTF-8) · 0x00 · period (u32 BE)`. */
export function headsKeyOf(symbol: string, period: number): Buffer {
  const tail = Buffer.alloc(4)
  tail.writeUInt32BE(period)
  return Buffer.concat([Buffer.from(symbol, 'utf8'), Buffer.from([0]), tail])
}

/** A sublevel of raw bytes. */
export type Bytes = AbstractSublevel<AnyLevel, any, Uint8Array, Uint8Array>

/** Runs `edit` on the raw database under a closed store (and its chunks sublevel `c`), opened and closed around it. */
export async function withRaw<T>(backend: Backend, location: Location, edit: (chunks: Bytes, db: AnyLevel) => Promise<T>): Promise<T> {
  const db = backend.raw(location)
  await db.open()
  try {
    return await edit(db.sublevel<Uint8Array, Uint8Array>('c', { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as Bytes, db)
  } finally {
    await db.close()
  }
}

const config = { provider: TEST_PROVIDER, limits: DEFAULT_LIMITS }

/** Opens, writes `records` in one batch, and closes (which seals every open hour). */
export async function writeAndSeal(location: Location, records: readonly InputRecord[]): Promise<void> {
  const store = await PriceStore.open(location, { provider: TEST_PROVIDER })
  try {
    expect(await store.putMany(records)).toBe(records.length)
  } finally {
    await store.close()
  }
}

/** Every query equals the model over `writes`, with the caches off and on; stats() counts right, per symbol too. */
export async function expectModel(location: Location, writes: readonly InputRecord[], queries: readonly QueryParams[], label: string): Promise<void> {
  const stored = storedRecords(writes, TEST_PROVIDER)
  for (const memory of MEMORY) {
    const store = await PriceStore.open(location, { provider: TEST_PROVIDER, ...memory })
    try {
      for (const params of queries) {
        expectSameOutcome(await outcomeOf(() => store.query(params)), referenceQuery(stored, params, config), `${label} ${JSON.stringify(memory)} ${JSON.stringify(params)}`)
      }
      const stats = await store.stats()
      expect(stats.records, label).toBe(stored.length)
      const perSymbol = new Map<string, number>()
      for (const r of stored) perSymbol.set(r.symbol, (perSymbol.get(r.symbol) ?? 0) + 1)
      expect(Object.fromEntries(stats.perSymbol.map((s) => [s.symbol, s.records])), label).toEqual(Object.fromEntries(perSymbol))
    } finally {
      await store.close()
    }
  }
}
