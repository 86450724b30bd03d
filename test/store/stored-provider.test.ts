/**
 * `PriceStore.storedProvider` (issue 23): the provider a database records, read without creating or changing
 * anything, on both backends; and `PriceStore.open('')` refused with a code.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PriceStore, REDSTONE_PROVIDER, isPriceStoreError } from '../../src/index.js'

const OWN = { name: 'own', id: 'own-id', publicKey: 'own-key' }
let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'price-store-stored-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const codeOf = async (promise: Promise<unknown>): Promise<unknown> => promise.then(() => 'resolved', (err: unknown) => (isPriceStoreError(err) ? err.code : err))

describe('PriceStore.storedProvider on a directory (classic-level)', () => {
  it('is undefined where no database is, and creates nothing', async () => {
    const location = join(dir, 'none')
    expect(await PriceStore.storedProvider(location)).toBeUndefined()
    expect(await stat(location).catch(() => undefined)).toBeUndefined()
    expect(await PriceStore.storedProvider(dir)).toBeUndefined()
    expect(await readdir(dir)).toEqual([])
  })

  it('is the provider the store was created for (without aliases), and leaves the directory unlocked', async () => {
    const location = join(dir, 'db')
    await (await PriceStore.open(location, { provider: { ...OWN, aliases: ['other-name'] } })).close()
    expect(await PriceStore.storedProvider(location)).toEqual(OWN)
    const store = await PriceStore.open(location, { provider: (await PriceStore.storedProvider(location)) ?? REDSTONE_PROVIDER })
    expect(store.provider).toEqual(OWN)
    // While a store holds it: PRICE_LOCKED, as for open.
    expect(await codeOf(PriceStore.storedProvider(location))).toBe('PRICE_LOCKED')
    await store.close()
  })
})

describe('PriceStore.storedProvider on a database object (memory-level)', () => {
  it('is undefined for a database no store opened, and the recorded provider after; the database is left as it was', async () => {
    const db = new MemoryLevel()
    expect(await PriceStore.storedProvider(db)).toBeUndefined()
    expect(db.status).toBe('closed')
    const store = new PriceStore(db, { provider: OWN })
    await store.open()
    // Open: read in place and left open.
    expect(await PriceStore.storedProvider(db)).toEqual(OWN)
    expect(db.status).toBe('open')
    await store.close()
    expect(await PriceStore.storedProvider(db)).toEqual(OWN)
    expect(db.status).toBe('closed')
  })
})

describe('an empty location', () => {
  it.each([
    ['PriceStore.open', () => PriceStore.open('', { provider: REDSTONE_PROVIDER })],
    ['PriceStore.storedProvider', () => PriceStore.storedProvider('')],
  ])('%s(\'\') → PRICE_INVALID_OPTIONS naming the location', async (_name, call) => {
    const err = await call().then(() => undefined, (caught: unknown) => caught)
    expect(isPriceStoreError(err, 'PRICE_INVALID_OPTIONS'), String(err)).toBe(true)
    expect((err as Error).message).toContain('location')
    expect((err as { details: { parameter?: string } }).details.parameter).toBe('location')
  })
})

it('REDSTONE_PROVIDER is RedStone\'s published main provider', () => {
  expect(REDSTONE_PROVIDER).toMatchObject({ name: 'redstone', id: 'I-5rWUehEv-MjdK9gFw09RxfSLQX9DIHxG614Wf8qo0' })
  expect(REDSTONE_PROVIDER.publicKey).toHaveLength(683)
  expect(Object.isFrozen(REDSTONE_PROVIDER)).toBe(true)
})
