/**
 * The in-memory caches must never change an answer: a store with a tiny
 * hot tail (so tails are constantly incomplete, trimmed and reloaded) and
 * small or default head and chunk caches answers every query exactly as the
 * same data read from disk with every cache off, after random batches,
 * overwrites, backfills into sealed hours and a reopen. Timestamps span
 * five hours, and `openBytes` varies, so the caches hold sealed chunks and
 * heads while later batches and seals change them.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { describe, expect, test } from 'vitest'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import type { QueryParams } from '../../src/index.js'

const provider = { name: 'redstone', id: 'prov-id', publicKey: 'prov-key' }
const limits = { maxLimit: 20, maxRangePoints: 15 }
const SYMBOLS = ['BTC', 'BTC-USD', 'ETH'] as const

/** Slots 7.5 minutes apart from an hour start: 8 a period, so slot 40 is five hours on; a few land a millisecond off. */
const BASE = 1_700_002_800_000
const SLOT = 450_000
const HOUR = 3_600_000
const at = (slot: number, nudge = 0): number => BASE + slot * SLOT + nudge

const recordArb = fc.record({
  symbol: fc.constantFrom(...SYMBOLS),
  timestamp: fc.tuple(fc.integer({ min: 0, max: 40 }), fc.constantFrom(0, 0, 0, -1, 1)).map(([slot, nudge]) => at(slot, nudge)),
  id: fc.constantFrom('a', 'b', 'ab', '\u{1F600}', '\uFF61'),
  value: fc.double({ noNaN: true, noDefaultInfinity: true }),
})
const batchesArb = fc.array(fc.array(recordArb, { maxLength: 6 }), { minLength: 1, maxLength: 8 })

const timeArb = fc.tuple(fc.integer({ min: 0, max: 45 }), fc.constantFrom(0, 0, -1, 1, 1234)).map(([slot, nudge]) => String(at(slot, nudge)))
/** Heads intervals (10 min, 1 h), a slot, and scans (1 ms, 7 min). */
const intervalArb = fc.constantFrom(1, SLOT, 600_000, HOUR, 7 * 60_000).map(String)

/** Memory the cached store may use: seals after every batch, early, or at the hour's end; small or default head and chunk caches. */
const memoryArb = fc.record({
  openBytes: fc.constantFrom(0, 1_500, undefined),
  headBytes: fc.constantFrom(3_000, undefined),
  chunkBytes: fc.constantFrom(4_000, undefined),
})
function cachedOptions(perSymbol: number, memory: { openBytes: number | undefined; headBytes: number | undefined; chunkBytes: number | undefined }) {
  const cache = {
    recordsPerSymbol: perSymbol,
    ...(memory.headBytes === undefined ? {} : { headBytes: memory.headBytes }),
    ...(memory.chunkBytes === undefined ? {} : { chunkBytes: memory.chunkBytes }),
  }
  return { provider, limits, cache, ...(memory.openBytes === undefined ? {} : { openBytes: memory.openBytes }) }
}
/** The disk alone: no tail, no heads or chunks kept, every hour sealed as late as the default allows. */
const diskOptions = { provider, limits, cache: { recordsPerSymbol: 0, headBytes: 0, chunkBytes: 0 } }
const queryArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc.record({ symbol: fc.constantFrom(...SYMBOLS, 'NONE') }),
  fc.record({ symbol: fc.constantFrom(...SYMBOLS), limit: fc.integer({ min: 1, max: 8 }).map(String), offset: fc.integer({ min: 0, max: 4 }).map(String) }),
  fc.record({ symbol: fc.constantFrom(...SYMBOLS), toTimestamp: timeArb, limit: fc.integer({ min: 1, max: 5 }).map(String) }),
  fc.record({ symbol: fc.constantFrom(...SYMBOLS), fromTimestamp: timeArb, limit: fc.integer({ min: 1, max: 5 }).map(String) }),
  fc.record({ symbol: fc.constantFrom(...SYMBOLS), fromTimestamp: timeArb, toTimestamp: fc.constant(String(at(45))), interval: intervalArb }),
  fc.record({ symbols: fc.constantFrom('BTC', 'BTC,ETH', 'ETH,NONE,BTC-USD') }),
  fc.record({ toTimestamp: timeArb }),
  fc.record({ fromTimestamp: timeArb }),
  fc.constant({}),
)

const toRecord = (r: { symbol: string; timestamp: number; id: string; value: number }) => ({
  id: r.id, symbol: r.symbol, provider: provider.id, value: r.value, signature: 'sig', permawebTx: 'tx', version: '0.4',
  source: { ex: r.value }, timestamp: r.timestamp,
})

async function answer(store: PriceStore, params: QueryParams): Promise<unknown> {
  try {
    return await store.query(params)
  } catch (err) {
    if (isPriceStoreError(err)) return { error: (err as { code: string }).code }
    throw err
  }
}

describe('hot tail', () => {
  test('answers exactly as the disk does, after every batch', async () => {
    await fc.assert(
      fc.asyncProperty(batchesArb, fc.integer({ min: 1, max: 4 }), memoryArb, fc.array(queryArb, { minLength: 1, maxLength: 6 }), async (batches, perSymbol, memory, queries) => {
        const cached = await PriceStore.open(new MemoryLevel(), cachedOptions(perSymbol, memory))
        const disk = await PriceStore.open(new MemoryLevel(), diskOptions)
        try {
          for (const batch of batches) {
            // Reading first loads tails, so later writes must merge into them.
            for (const params of queries) expect(await answer(cached, params)).toEqual(await answer(disk, params))
            await Promise.all([cached.putMany(batch.map(toRecord)), disk.putMany(batch.map(toRecord))])
          }
          for (const params of queries) expect(await answer(cached, params)).toEqual(await answer(disk, params))
        } finally {
          await cached.close()
          await disk.close()
        }
      }),
      { numRuns: 150 },
    )
  })

  test('concurrent writes and reads never see a batch in part', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 2, max: 6 }), memoryArb, async (perSymbol, rounds, memory) => {
        const store = await PriceStore.open(new MemoryLevel(), cachedOptions(perSymbol, memory))
        try {
          for (let round = 1; round <= rounds; round++) {
            // Each batch writes one record per symbol at the same timestamp, an hour after the last: every answer must agree on it.
            const batch = SYMBOLS.map((symbol) => toRecord({ symbol, timestamp: BASE + round * HOUR, id: 'a', value: round }))
            const reads = [store.several(), store.query({}), store.several([...SYMBOLS])]
            await Promise.all([store.putMany(batch), ...reads])
            for (const read of await Promise.all(reads)) {
              const stamps = new Set(Object.values(read).map((r) => r.timestamp))
              expect(stamps.size).toBeLessThanOrEqual(1)
            }
          }
        } finally {
          await store.close()
        }
      }),
      { numRuns: 40 },
    )
  })

  test('after a reopen on disk, the cache agrees with what was written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'price-store-tail-'))
    try {
      await fc.assert(
        fc.asyncProperty(batchesArb, memoryArb, fc.array(queryArb, { minLength: 1, maxLength: 5 }), async (batches, settings, queries) => {
          const location = await mkdtemp(join(dir, 'run-'))
          const memory = await PriceStore.open(new MemoryLevel(), diskOptions)
          let store = await PriceStore.open(location, cachedOptions(2, settings))
          try {
            for (const batch of batches) {
              await store.putMany(batch.map(toRecord))
              await memory.putMany(batch.map(toRecord))
            }
            for (const params of queries) await answer(store, params)
            await store.close()
            store = await PriceStore.open(location, cachedOptions(2, settings))
            for (const params of queries) expect(await answer(store, params)).toEqual(await answer(memory, params))
          } finally {
            await store.close()
            await memory.close()
          }
        }),
        { numRuns: 15 },
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
