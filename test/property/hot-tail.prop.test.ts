/**
 * The hot-tail cache must never change an answer: a store with a tiny cache
 * (so tails are constantly incomplete, trimmed and reloaded) answers every
 * query exactly as the same data read from disk with the cache off, after
 * random batches, overwrites, backfills and a reopen.
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

const recordArb = fc.record({
  symbol: fc.constantFrom(...SYMBOLS),
  timestamp: fc.integer({ min: 0, max: 40 }),
  id: fc.constantFrom('a', 'b', 'ab', '\u{1F600}', '\uFF61'),
  value: fc.double({ noNaN: true, noDefaultInfinity: true }),
})
const batchesArb = fc.array(fc.array(recordArb, { maxLength: 6 }), { minLength: 1, maxLength: 8 })

const timeArb = fc.integer({ min: 0, max: 45 }).map(String)
const queryArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc.record({ symbol: fc.constantFrom(...SYMBOLS, 'NONE') }),
  fc.record({ symbol: fc.constantFrom(...SYMBOLS), limit: fc.integer({ min: 1, max: 8 }).map(String), offset: fc.integer({ min: 0, max: 4 }).map(String) }),
  fc.record({ symbol: fc.constantFrom(...SYMBOLS), toTimestamp: timeArb, limit: fc.integer({ min: 1, max: 5 }).map(String) }),
  fc.record({ symbol: fc.constantFrom(...SYMBOLS), fromTimestamp: timeArb, limit: fc.integer({ min: 1, max: 5 }).map(String) }),
  fc.record({ symbol: fc.constantFrom(...SYMBOLS), fromTimestamp: timeArb, toTimestamp: fc.constant('45'), interval: fc.integer({ min: 1, max: 12 }).map(String) }),
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
      fc.asyncProperty(batchesArb, fc.integer({ min: 1, max: 4 }), fc.array(queryArb, { minLength: 1, maxLength: 6 }), async (batches, perSymbol, queries) => {
        const cached = await PriceStore.open(new MemoryLevel(), { provider, limits, cache: { recordsPerSymbol: perSymbol } })
        const disk = await PriceStore.open(new MemoryLevel(), { provider, limits, cache: { recordsPerSymbol: 0 } })
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
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 2, max: 6 }), async (perSymbol, rounds) => {
        const store = await PriceStore.open(new MemoryLevel(), { provider, limits, cache: { recordsPerSymbol: perSymbol } })
        try {
          for (let round = 1; round <= rounds; round++) {
            // Each batch writes one record per symbol at the same timestamp: every answer must agree on it.
            const batch = SYMBOLS.map((symbol) => toRecord({ symbol, timestamp: round, id: 'a', value: round }))
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
        fc.asyncProperty(batchesArb, fc.array(queryArb, { minLength: 1, maxLength: 5 }), async (batches, queries) => {
          const location = await mkdtemp(join(dir, 'run-'))
          const memory = await PriceStore.open(new MemoryLevel(), { provider, limits, cache: { recordsPerSymbol: 0 } })
          let store = await PriceStore.open(location, { provider, limits, cache: { recordsPerSymbol: 2 } })
          try {
            for (const batch of batches) {
              await store.putMany(batch.map(toRecord))
              await memory.putMany(batch.map(toRecord))
            }
            for (const params of queries) await answer(store, params)
            await store.close()
            store = await PriceStore.open(location, { provider, limits, cache: { recordsPerSymbol: 2 } })
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
