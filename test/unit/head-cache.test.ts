/**
 * The head cache against a naive model: an LRU list of whole blocks. After
 * any sequence of installs, committed updates and lookups, a lookup finds
 * exactly the model's heads, the cache never holds more than its capacity,
 * and a block read before a commit is never installed after it.
 */
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { BUCKETS_PER_BLOCK, HeadCache, blockOf } from '../../src/store/head-cache.js'
import { StoredRow } from '../../src/store/stored-row.js'
import { encodeKey } from '../../src/keys/key-codec.js'
import { PROVIDER } from './helpers.js'

const SYMBOLS = ['A', 'B'] as const
const LEVEL = 2

function rowAt(symbol: string, bucket: number, tag: number): StoredRow {
  // Distinct rows per (bucket, tag); the bytes are never decoded here.
  return new StoredRow(encodeKey(symbol, bucket * 1000 + tag, `id${tag}`), new Uint8Array([tag]), symbol, Buffer.byteLength(symbol) + 1, PROVIDER)
}

type Op =
  | { kind: 'install'; symbol: string; block: number; heads: number[]; stale: boolean }
  | { kind: 'apply'; symbol: string; bucket: number }
  | { kind: 'lookup'; symbol: string; first: number; span: number }

const bucketArb = fc.integer({ min: 0, max: 4 * BUCKETS_PER_BLOCK - 1 })
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('install' as const),
    symbol: fc.constantFrom(...SYMBOLS),
    block: fc.integer({ min: 0, max: 3 }),
    heads: fc.uniqueArray(fc.integer({ min: 0, max: BUCKETS_PER_BLOCK - 1 }), { maxLength: 6 }),
    stale: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('apply' as const), symbol: fc.constantFrom(...SYMBOLS), bucket: bucketArb }),
  fc.record({ kind: fc.constant('lookup' as const), symbol: fc.constantFrom(...SYMBOLS), first: bucketArb, span: fc.integer({ min: 1, max: 2 * BUCKETS_PER_BLOCK }) }),
)

describe('HeadCache', () => {
  test('agrees with an LRU model of whole blocks and stays within its capacity', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20 }), fc.array(opArb, { maxLength: 60 }), (capacity, ops) => {
        const cache = new HeadCache(capacity)
        // The disk: the current head row of every (symbol, bucket).
        const disk = new Map<string, StoredRow>()
        // The model: cached blocks in LRU order, each a map of bucket to row.
        const model = new Map<string, Map<number, StoredRow>>()
        const weight = (block: Map<number, StoredRow>): number => Math.max(1, block.size)
        const evict = (): void => {
          let held = [...model.values()].reduce((sum, block) => sum + weight(block), 0)
          for (const [key, block] of model) {
            if (held <= capacity) break
            model.delete(key)
            held -= weight(block)
          }
        }
        let tag = 0
        for (const op of ops) {
          if (op.kind === 'install') {
            const heads = op.heads.map((offset) => op.block * BUCKETS_PER_BLOCK + offset)
            for (const bucket of heads) if (!disk.has(`${op.symbol}:${bucket}`)) disk.set(`${op.symbol}:${bucket}`, rowAt(op.symbol, bucket, ++tag))
            const epoch = cache.epoch
            const read = heads.map((bucket) => [bucket, disk.get(`${op.symbol}:${bucket}`) as StoredRow] as const)
            // A stale read: a batch commits between the read and the install.
            if (op.stale) cache.apply([])
            cache.install(op.symbol, LEVEL, op.block, epoch, read)
            if (!op.stale && capacity > 0) {
              const key = `${op.symbol}:${op.block}`
              model.delete(key)
              model.set(key, new Map(read))
              evict()
            }
          } else if (op.kind === 'apply') {
            const row = rowAt(op.symbol, op.bucket, ++tag)
            disk.set(`${op.symbol}:${op.bucket}`, row)
            cache.apply([{ symbol: op.symbol, level: LEVEL, bucket: op.bucket, row }])
            model.get(`${op.symbol}:${blockOf(op.bucket)}`)?.set(op.bucket, row)
            evict()
          } else {
            const end = op.first + op.span
            const found = cache.lookup(op.symbol, LEVEL, op.first, end)
            const expectedMissing: number[] = []
            const expectedCached: number[] = []
            for (let block = blockOf(op.first); block <= blockOf(end - 1); block++) {
              const key = `${op.symbol}:${block}`
              const held = model.get(key)
              if (held === undefined) {
                expectedMissing.push(block)
                continue
              }
              model.delete(key)
              model.set(key, held)
              expectedCached.push(block)
              const expected = [...held].filter(([bucket]) => bucket >= op.first && bucket < end).sort(([a], [b]) => a - b).map(([, row]) => row)
              expect(found.cached.get(block)).toEqual(expected)
              // A cached head is the disk's head: the cache never lags a committed update.
              for (const row of expected) expect([...disk.values()]).toContain(row)
            }
            expect(found.missing).toEqual(expectedMissing)
            expect([...found.cached.keys()]).toEqual(expectedCached)
          }
          expect(cache.size).toBeLessThanOrEqual(Math.max(capacity, 0))
          expect(cache.size).toBe([...model.values()].reduce((sum, block) => sum + weight(block), 0))
        }
      }),
      { numRuns: 500 },
    )
  })

  test('a lookup makes its blocks the most recently used: the least recently used block leaves first', () => {
    const cache = new HeadCache(2)
    const heads = (block: number) => [[block * BUCKETS_PER_BLOCK, rowAt('A', block * BUCKETS_PER_BLOCK, block)]] as const
    cache.install('A', LEVEL, 0, cache.epoch, heads(0))
    cache.install('A', LEVEL, 1, cache.epoch, heads(1))
    expect(cache.lookup('A', LEVEL, 0, 1).missing).toEqual([])
    cache.install('A', LEVEL, 2, cache.epoch, heads(2))
    expect(cache.lookup('A', LEVEL, 0, 3 * BUCKETS_PER_BLOCK).missing).toEqual([1])
    expect(cache.size).toBe(2)
  })

  test('clear() forgets every block and refuses reads begun before it', () => {
    const cache = new HeadCache(100)
    cache.install('A', LEVEL, 0, cache.epoch, [[3, rowAt('A', 3, 1)]])
    const epoch = cache.epoch
    cache.clear()
    expect(cache.size).toBe(0)
    expect(cache.lookup('A', LEVEL, 0, 10).missing).toEqual([0])
    cache.install('A', LEVEL, 0, epoch, [[3, rowAt('A', 3, 1)]])
    expect(cache.lookup('A', LEVEL, 0, 10).missing).toEqual([0])
  })
})
