/**
 * Locking (SPEC §5, issue 5): a directory is held by one open store at a
 * time. A second process, or a second store in this process, gets the coded
 * error PRICE_LOCKED (with Level's LEVEL_LOCKED in its cause chain), not
 * corruption: the holder keeps reading and writing, its data is intact, the
 * refused store is left closed, and once the holder closes (or dies) the
 * directory opens again.
 *
 * Opening is refused the same way, changing nothing, when the store was
 * created for another provider (PRICE_PROVIDER_MISMATCH, SPEC §3) or holds an
 * older format (PRICE_UNSUPPORTED_FORMAT).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import type { PriceStoreError } from '../../src/index.js'
import { bundleChild, startChild } from './child-process.js'
import type { ChildBundle, RunningChild } from './child-process.js'
import { LOCK_PROVIDER, LOCK_T0, lockRecord } from './lock-plan.js'

let bundle: ChildBundle
let dir: string
const stores: PriceStore[] = []
const children: RunningChild[] = []

beforeAll(async () => {
  bundle = await bundleChild('./lock-probe.ts')
})

afterAll(async () => {
  await bundle?.cleanup()
})

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'price-store-lock-'))
})

afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill()
    await child.ended
  }
  for (const store of stores.splice(0)) await store.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

const options = { provider: LOCK_PROVIDER }

async function open(): Promise<PriceStore> {
  const store = await PriceStore.open(dir, options)
  stores.push(store)
  return store
}

function probe(mode: 'try' | 'hold'): RunningChild {
  const child = startChild(bundle, [mode, dir])
  children.push(child)
  return child
}

/** What `latest('BTC', { limit })` must return after writing these timestamps. */
function expectedBtc(timestamps: readonly number[]): unknown[] {
  return [...timestamps].sort((a, b) => b - a).map((t) => ({ ...lockRecord(t), providerPublicKey: LOCK_PROVIDER.publicKey }))
}

async function rejectsLocked(promise: Promise<unknown>): Promise<PriceStoreError> {
  const err = await promise.then(
    () => {
      throw new Error('expected PRICE_LOCKED, but it opened')
    },
    (caught: unknown) => caught,
  )
  expect(isPriceStoreError(err, 'PRICE_LOCKED'), `got ${String(err)}`).toBe(true)
  const codes: unknown[] = []
  for (let current: unknown = (err as Error).cause; typeof current === 'object' && current !== null; current = (current as Error).cause) {
    codes.push((current as { code?: unknown }).code)
  }
  expect(codes).toContain('LEVEL_LOCKED')
  expect((err as Error).message).toMatch(/in use by another process/)
  return err as PriceStoreError
}

const written = (count: number, start = 0): number[] => Array.from({ length: count }, (_, i) => LOCK_T0 + (start + i) * 1000)

describe('locking across processes', () => {
  it('a second process gets PRICE_LOCKED while this one holds the directory; this one keeps working; the data is intact', async () => {
    const holder = await open()
    const first = written(50)
    await holder.putMany(first.map(lockRecord))

    // Two processes at once, both refused.
    const probes = [probe('try'), probe('try')]
    for (const child of probes) {
      const [, code, causes] = await child.waitForLine(/^ERROR (\S+) (\S+)$/)
      expect(code).toBe('PRICE_LOCKED')
      expect(causes?.split(',')).toContain('LEVEL_LOCKED')
      expect(await child.ended, child.stderr()).toBe(0)
    }

    // The holder still reads and writes, and nothing it wrote changed.
    expect(holder.status).toBe('open')
    expect(await holder.latest('BTC', { limit: 3000 })).toEqual(expectedBtc(first))
    const more = written(10, 50)
    await holder.putMany(more.map(lockRecord))
    expect(await holder.latest('BTC', { limit: 3000 })).toEqual(expectedBtc([...first, ...more]))

    // Once it closes, another process opens the directory and sees everything.
    await holder.close()
    const after = probe('try')
    expect((await after.waitForLine(/^OPENED (\d+)$/))[1]).toBe('60')
    await after.waitForLine(/^CLOSED$/)
    expect(await after.ended, after.stderr()).toBe(0)
  })

  it('while another process holds the directory, opening it here gets PRICE_LOCKED and changes nothing', async () => {
    const seed = await open()
    await seed.putMany(written(5).map(lockRecord))
    await seed.close()

    const holder = probe('hold')
    expect((await holder.waitForLine(/^OPENED (\d+)$/))[1]).toBe('5')

    await rejectsLocked(PriceStore.open(dir, options))
    // The constructor path too: the refused store is left closed and refuses queries.
    const refused = new PriceStore(new ClassicLevel(dir), options)
    await rejectsLocked(refused.open())
    expect(refused.status).toBe('closed')
    expect(isPriceStoreError(await refused.latest('BTC').catch((err: unknown) => err), 'PRICE_NOT_OPEN')).toBe(true)

    // The holder was not disturbed: it still writes.
    holder.send(`write ${LOCK_T0 + 99_000}`)
    await holder.waitForLine(new RegExp(`^WROTE ${LOCK_T0 + 99_000}$`))
    holder.send('close')
    await holder.waitForLine(/^CLOSED$/)
    expect(await holder.ended, holder.stderr()).toBe(0)

    // Now it opens here, and sees the holder's write.
    const after = await open()
    expect(await after.latest('BTC', { limit: 3000 })).toEqual(expectedBtc([...written(5), LOCK_T0 + 99_000]))
  })

  // Fails today: PriceStore.open() reopens the database but not the store's sublevels,
  // which abstract-level closed with it, so the retry gets PRICE_STORAGE_ERROR (LEVEL_DATABASE_NOT_OPEN).
  it('a store refused with PRICE_LOCKED opens on a retry once the holder has closed', async () => {
    const holder = probe('hold')
    await holder.waitForLine(/^OPENED 0$/)
    holder.send(`write ${LOCK_T0}`)
    await holder.waitForLine(new RegExp(`^WROTE ${LOCK_T0}$`))
    const refused = new PriceStore(new ClassicLevel(dir), options)
    stores.push(refused)
    await rejectsLocked(refused.open())
    holder.send('close')
    await holder.waitForLine(/^CLOSED$/)
    await refused.open()
    expect(refused.status).toBe('open')
    expect(await refused.latest('BTC')).toEqual(expectedBtc([LOCK_T0]))
  })

  it('a holder killed with SIGKILL leaves no lock behind', async () => {
    const holder = probe('hold')
    await holder.waitForLine(/^OPENED 0$/)
    holder.send(`write ${LOCK_T0}`)
    await holder.waitForLine(new RegExp(`^WROTE ${LOCK_T0}$`))
    await rejectsLocked(PriceStore.open(dir, options))
    holder.kill()
    expect(await holder.ended).toBe('SIGKILL')
    const store = await open()
    expect(await store.latest('BTC')).toEqual(expectedBtc([LOCK_T0]))
  })
})

describe('locking within one process', () => {
  it('a second open of the same directory gets PRICE_LOCKED; the first keeps working; after it closes the second opens', async () => {
    const first = await open()
    await first.putMany(written(20).map(lockRecord))
    await rejectsLocked(PriceStore.open(dir, options))
    await rejectsLocked(PriceStore.open(dir, { ...options, cache: { recordsPerSymbol: 0 } }))

    expect(first.status).toBe('open')
    await first.put(lockRecord(LOCK_T0 + 500_000))
    const all = [...written(20), LOCK_T0 + 500_000]
    expect(await first.latest('BTC', { limit: 3000 })).toEqual(expectedBtc(all))
    expect(await first.query(new URLSearchParams('symbol=BTC&limit=2'))).toEqual(expectedBtc(all).slice(0, 2))

    await first.close()
    const second = await open()
    expect(await second.latest('BTC', { limit: 3000 })).toEqual(expectedBtc(all))
    await second.put(lockRecord(LOCK_T0 + 600_000))
    expect((await second.latest('BTC'))[0]).toEqual(expectedBtc([LOCK_T0 + 600_000])[0])
  })

  // Fails today, for the same reason as the retry after PRICE_LOCKED above.
  it('close() then open() on the same store instance works, and sees the data', async () => {
    const store = new PriceStore(new ClassicLevel(dir), options)
    stores.push(store)
    await store.open()
    await store.put(lockRecord(LOCK_T0))
    await store.close()
    await store.open()
    expect(store.status).toBe('open')
    expect(await store.latest('BTC')).toEqual(expectedBtc([LOCK_T0]))
  })

  it('many concurrent opens of one directory: exactly one wins, the others get PRICE_LOCKED', async () => {
    const attempts = await Promise.allSettled(Array.from({ length: 6 }, () => PriceStore.open(dir, options)))
    const opened = attempts.flatMap((attempt) => (attempt.status === 'fulfilled' ? [attempt.value] : []))
    stores.push(...opened)
    expect(opened.length).toBe(1)
    for (const attempt of attempts) {
      if (attempt.status === 'rejected') expect(isPriceStoreError(attempt.reason, 'PRICE_LOCKED'), String(attempt.reason)).toBe(true)
    }
    const [winner] = opened as [PriceStore]
    await winner.put(lockRecord(LOCK_T0))
    expect(await winner.latest('BTC')).toEqual(expectedBtc([LOCK_T0]))
  })
})

describe('opening a store that is not this one\'s to open', () => {
  const HOUR = 3_600_000
  /** Records over three hours, so the store holds chunks and heads entries of sealed hours. */
  const spread = [...written(30), ...written(20, 3_700), ...written(10, 7_300)]
  /** Written by a process killed right after: left in the log, unsealed, for the next open to replay. */
  const unsealed = LOCK_T0 + 7_400_000

  /** Everything the directory holds, key by key, read without the store. */
  async function contents(): Promise<string[]> {
    const db = new ClassicLevel<Uint8Array, Uint8Array>(dir, { keyEncoding: 'view', valueEncoding: 'view' })
    try {
      return (await db.iterator().all()).map(([key, value]) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`)
    } finally {
      await db.close()
    }
  }

  async function refused(options: { provider: { name: string; id: string; publicKey: string } }, code: string): Promise<PriceStoreError> {
    const err = await PriceStore.open(dir, options).then(
      (store) => {
        stores.push(store)
        throw new Error(`expected ${code}, but it opened`)
      },
      (caught: unknown) => caught,
    )
    expect(isPriceStoreError(err, code as PriceStoreError['code']), `got ${String(err)}`).toBe(true)
    return err as PriceStoreError
  }

  async function seed(): Promise<unknown[]> {
    const store = await open()
    await store.putMany(spread.map(lockRecord))
    await store.close()
    const holder = probe('hold')
    await holder.waitForLine(/^OPENED \d+$/)
    holder.send(`write ${unsealed}`)
    await holder.waitForLine(new RegExp(`^WROTE ${unsealed}$`))
    holder.kill()
    expect(await holder.ended).toBe('SIGKILL')
    return expectedBtc([...spread, unsealed])
  }

  it('another provider id or public key gets PRICE_PROVIDER_MISMATCH naming both, and changes nothing', async () => {
    const before = await seed()
    const stored = await contents()
    const other = { name: LOCK_PROVIDER.name, id: 'another-provider-id', publicKey: 'another-provider-key' }
    const cases = [
      { provider: { ...LOCK_PROVIDER, id: other.id }, named: [LOCK_PROVIDER.id, other.id] },
      { provider: { ...LOCK_PROVIDER, publicKey: other.publicKey }, named: [LOCK_PROVIDER.publicKey, other.publicKey] },
      { provider: other, named: [LOCK_PROVIDER.id, other.id, LOCK_PROVIDER.publicKey, other.publicKey] },
    ]
    for (const { provider, named } of cases) {
      const err = await refused({ provider }, 'PRICE_PROVIDER_MISMATCH')
      // The message names what is stored and what was given.
      for (const text of named) expect(err.message).toContain(JSON.stringify(text))
      // The constructor path too: the refused store is left closed and refuses queries.
      const store = new PriceStore(new ClassicLevel(dir), { provider })
      await expect(store.open()).rejects.toSatisfy((caught: unknown) => isPriceStoreError(caught, 'PRICE_PROVIDER_MISMATCH'))
      expect(store.status).toBe('closed')
      expect(isPriceStoreError(await store.latest('BTC').catch((caught: unknown) => caught), 'PRICE_NOT_OPEN')).toBe(true)
    }
    // Nothing was written, and the directory is not left locked.
    expect(await contents()).toEqual(stored)
    const right = await open()
    expect(await right.latest('BTC', { limit: 3000 })).toEqual(before)
    expect(await right.range('BTC', { from: 0, to: LOCK_T0 + 3 * HOUR, interval: HOUR })).toHaveLength(3)
    await right.put(lockRecord(LOCK_T0 + 9_000_000))
    expect((await right.latest('BTC'))[0]).toEqual(expectedBtc([LOCK_T0 + 9_000_000])[0])
  })

  it('another provider name alone is not a mismatch: the store answers to the id and key it was created for', async () => {
    const before = await seed()
    const renamed = await PriceStore.open(dir, { provider: { ...LOCK_PROVIDER, name: 'renamed' } })
    stores.push(renamed)
    expect(await renamed.latest('BTC', { limit: 3000 })).toEqual(before)
  })

  it('a store whose meta says format "2" (or "1") gets PRICE_UNSUPPORTED_FORMAT, and changes nothing', async () => {
    await seed()
    for (const format of ['2', '1']) {
      const db = new ClassicLevel(dir)
      await db.sublevel<string, string>('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' }).put('format', format)
      await db.close()
      const stored = await contents()
      const err = await refused(options, 'PRICE_UNSUPPORTED_FORMAT')
      expect(err.message).toContain(`"${format}"`)
      expect(err.message).toMatch(/import/)
      expect(await contents()).toEqual(stored)
    }
    // Not locked afterwards: the directory opens (here without the store) as soon as it is refused.
    const db = new ClassicLevel(dir)
    await db.open()
    await db.close()
  })
})
