/**
 * The store suite on a sublevel of a memory-level database: a store opened
 * on a sublevel keeps every key under it (its writes go to the root with the
 * sublevel's prefix once, as its reads look for them), and leaves the rest of
 * the database alone.
 */
import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { expectExact } from '../support/assertions.js'
import { expected, rec } from '../support/records.js'
import { storeSuite } from './suite/index.js'

const BYTES = { keyEncoding: 'view', valueEncoding: 'view' } as const

storeSuite({ name: 'a memory-level sublevel', factory: () => new MemoryLevel().sublevel('app', BYTES) })

describe('PriceStore on a sublevel', () => {
  it('keeps its keys under the sublevel, answers after reopening, and leaves the other keys alone', async () => {
    const root = new MemoryLevel()
    await root.put('outside', 'kept')
    const db = root.sublevel('app', BYTES)
    const hour = 3_600_000
    const inputs = [rec({ symbol: 'BTC', timestamp: 10 * hour }), rec({ symbol: 'BTC', timestamp: 12 * hour + 5 }), rec({ symbol: 'ETH', timestamp: 11 * hour })]
    const store = await PriceStore.open(db, { provider: TEST_PROVIDER })
    await store.putMany(inputs)
    await store.close() // seals every hour: chunks, heads entries and the log's deletions are written by root batches
    const keys: string[] = []
    for await (const key of root.keys()) keys.push(key)
    expect(keys.filter((key) => !key.startsWith('!app!'))).toEqual(['outside'])
    expect(keys.filter((key) => key.startsWith('!app!!app!'))).toEqual([])

    const again = await PriceStore.open(db, { provider: TEST_PROVIDER, cache: { recordsPerSymbol: 0, headBytes: 0, chunkBytes: 0 } })
    try {
      expectExact(await again.latest('BTC', { limit: 5 }), [expected(inputs[1]!), expected(inputs[0]!)])
      expectExact(await again.latest('BTC', { to: 11 * hour }), [expected(inputs[0]!)])
      expect(Object.keys(await again.several())).toEqual(['BTC', 'ETH'])
    } finally {
      await again.close()
    }
    expect(await root.get('outside')).toBe('kept')
  })
})
