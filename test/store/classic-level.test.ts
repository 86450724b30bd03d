import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PriceStore } from '../../src/index.js'
import { storeSuite } from './suite/index.js'
import { TEST_PROVIDER, T0 } from '../../src/testing/records.js'
import { expectExact, rejectsCode } from '../support/assertions.js'
import { expected, rec } from '../support/records.js'

storeSuite({ name: 'classic-level', factory: (dir) => new ClassicLevel(dir), persistent: true })

describe('PriceStore.open(path) on classic-level', () => {
  let dir: string
  const stores: PriceStore[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'price-store-classic-'))
  })

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close().catch(() => {})
    await rm(dir, { recursive: true, force: true })
  })

  it('creates a missing (nested) directory, and the data survives reopening by path', async () => {
    const location = join(dir, 'nested', 'prices')
    const first = await PriceStore.open(location, { provider: TEST_PROVIDER })
    stores.push(first)
    const input = rec({ timestamp: T0, value: -0, evmSignature: '0x1' })
    await first.put(input)
    await first.close()
    const second = await PriceStore.open(location, { provider: TEST_PROVIDER })
    stores.push(second)
    expectExact(await second.latest('BTC'), [expected(input)])
  })

  it('a second open by path while the first is open → PRICE_LOCKED', async () => {
    const first = await PriceStore.open(dir, { provider: TEST_PROVIDER })
    stores.push(first)
    await rejectsCode(PriceStore.open(dir, { provider: TEST_PROVIDER }), 'PRICE_LOCKED')
    await first.put(rec())
    expect((await first.latest('BTC')).length).toBe(1)
  })

  it('writes with sync: true', async () => {
    const store = await PriceStore.open(dir, { provider: TEST_PROVIDER, sync: true })
    stores.push(store)
    await expect(store.putMany([rec({ timestamp: T0 }), rec({ timestamp: T0 + 1 })])).resolves.toBe(2)
    expect((await store.latest('BTC', { limit: 5 })).map((r) => r.timestamp)).toEqual([T0 + 1, T0])
  })

  it('a store that failed to open with bad options leaves nothing locked', async () => {
    await rejectsCode(PriceStore.open(dir, { provider: { ...TEST_PROVIDER, id: '' } }), 'PRICE_INVALID_OPTIONS')
    // abstract-level opens a database nobody opened on its own (deferred open): if the failed call left one
    // behind, give it the time to take the LOCK file, so the check below does not depend on who wins the race.
    for (let i = 0; i < 100 && !existsSync(join(dir, 'LOCK')); i++) await new Promise((resolve) => setTimeout(resolve, 10))
    const store = await PriceStore.open(dir, { provider: TEST_PROVIDER })
    stores.push(store)
    expect(store.status).toBe('open')
  })
})
