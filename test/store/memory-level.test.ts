import { MemoryLevel } from 'memory-level'
import { describe, expect, it } from 'vitest'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import { storeSuite } from './suite/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { expectExact } from '../support/assertions.js'
import { expected, rec } from '../support/records.js'

storeSuite({ name: 'memory-level', factory: () => new MemoryLevel() })

describe('PriceStore on memory-level: database options', () => {
  it.each(['buffer', 'view'] as const)('works on a MemoryLevel with storeEncoding %s', async (storeEncoding) => {
    const store = await PriceStore.open(new MemoryLevel({ storeEncoding }), { provider: TEST_PROVIDER })
    try {
      const input = rec({ symbol: 'ETH', id: '\u00e9-\u{1F600}', timestamp: 2 ** 31 + 0xff })
      await store.put(input)
      expectExact(await store.latest('ETH'), [expected(input)])
    } finally {
      await store.close()
    }
  })

  // The constructor promises "the database can have any options"; a utf8 store cannot hold the
  // byte keys, so the store must either work or refuse with its own coded error (not a raw Level error).
  it('a MemoryLevel with storeEncoding utf8 either works or is refused with a PriceStoreError', async () => {
    let store: PriceStore | undefined
    try {
      store = await PriceStore.open(new MemoryLevel({ storeEncoding: 'utf8' }), { provider: TEST_PROVIDER })
      const input = rec({ symbol: 'ETH', id: '\u00e9', timestamp: 2 ** 31 + 0xff })
      await store.put(input)
      expectExact(await store.latest('ETH'), [expected(input)])
    } catch (err) {
      expect(isPriceStoreError(err), String(err)).toBe(true)
    } finally {
      await store?.close()
    }
  })
})
