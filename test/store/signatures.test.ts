/**
 * A store that verifies signatures (`signatures.policy`): records signed in
 * the test the way RedStone's nodes signed them (test/trust/support), some
 * tampered. `flag` keeps a verdict with each record and takes the batch;
 * `reject` refuses a batch with a failing record whole; `store.verify()`
 * counts the stored verdicts and, with `recheck`, verifies the records again
 * from what the store returns, naming any the store altered. The verdicts
 * never change what a query returns, and go with their records (rewrites,
 * prunes, backups).
 */
import { MemoryLevel } from 'memory-level'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { PriceStore, type NewPriceRecord, type PriceStoreOptions } from '../../src/index.js'
import { ClusterNode } from '../../src/cluster.js'
import { T0 } from '../../src/testing/records.js'
import { SignatureVerifier } from '../../src/trust/signature-verifier.js'
import { MemoryLog } from '../cluster/support/memory-log.js'
import { arweaveSign, newArweaveWallet, type ArweaveWallet } from '../trust/support/redstone-signers.js'

const HOUR = 3_600_000
let wallet: ArweaveWallet
let provider: PriceStoreOptions['provider']

beforeAll(async () => {
  wallet = await newArweaveWallet()
  provider = { name: 'redstone', id: wallet.address, publicKey: wallet.publicKey }
}, 60_000)

const open: PriceStore[] = []
afterEach(async () => {
  for (const store of open.splice(0)) await store.close()
})
afterAll(async () => {
  for (const store of open.splice(0)) await store.close()
})

async function openStore(policy: 'off' | 'flag' | 'reject', db = new MemoryLevel<any, any>()): Promise<PriceStore> {
  const store = await PriceStore.open(db, { provider, signatures: { policy, threads: 1 } })
  open.push(store)
  return store
}

/** A record of `symbol` at `T0 + offset`, signed by the test's wallet. */
async function signed(symbol: string, offset: number, value = 100 + offset / 1000): Promise<NewPriceRecord> {
  const record = {
    id: `${symbol}-${offset}`, symbol, provider: wallet.address, value, permawebTx: 'mock-permaweb-tx', version: '0.4',
    source: { binance: value, coinbase: value + 0.5 }, timestamp: T0 + offset,
  }
  return { ...record, signature: await arweaveSign(record, wallet) }
}

async function exported(store: PriceStore): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = []
  for await (const record of store.export()) out.push(record as unknown as Record<string, unknown>)
  return out
}

describe('a store that flags signatures', () => {
  it('keeps a verdict with every record, returns the records unchanged, and reports the failing one', async () => {
    const store = await openStore('flag')
    const good = [await signed('BTC', 0), await signed('BTC', 1000), await signed('ETH', 0)]
    const tampered = { ...(await signed('ETH', 1000)), value: 999 }
    expect(await store.putMany([...good, tampered])).toBe(4)
    // What a query returns is what was written (and the provider's key), verdict or not.
    expect(await store.latest('ETH')).toEqual([{ ...tampered, providerPublicKey: wallet.publicKey }])
    const report = await store.verify({ recheck: true })
    expect(report).toMatchObject({ policy: 'flag', records: 4, truncated: false })
    expect(report.stored).toEqual({ valid: 3, unsigned: 0, invalid: 1, malformed: 0, 'signer-not-allowed': 0, unchecked: 0 })
    expect(report.failing).toHaveLength(1)
    expect(report.failing[0]).toMatchObject({ symbol: 'ETH', timestamp: T0 + 1000, id: 'ETH-1000', verdict: { overall: 'invalid' } })
    expect(report.failing[0]!.verdict.checks[0]).toMatchObject({ kind: 'arweave', result: 'invalid', signer: wallet.address })
    expect(report.recheck).toMatchObject({ verdicts: { valid: 3, invalid: 1 }, altered: [] })
    // A selection: one symbol, a window.
    expect((await store.verify({ symbols: ['BTC'], from: T0 + 1000 })).stored).toMatchObject({ valid: 1, invalid: 0, unchecked: 0 })
  })

  it('writes batches given together in the order given, though the later one is verified first', async () => {
    const store = await PriceStore.open(new MemoryLevel(), { provider, signatures: { policy: 'flag', threads: 2 } })
    open.push(store)
    // The large batch's verdicts are held back until the correction's are in: the correction is verified first.
    const verifyEncoded = SignatureVerifier.prototype.verifyEncoded
    let correctionVerified: () => void = () => {}
    const correctionDone = new Promise<void>((resolve) => (correctionVerified = resolve))
    const order: string[] = []
    const spy = vi.spyOn(SignatureVerifier.prototype, 'verifyEncoded').mockImplementation(async function (this: SignatureVerifier, count, encode) {
      const verdicts = await verifyEncoded.call(this, count, encode)
      if (count > 1) await correctionDone
      else correctionVerified()
      order.push(count > 1 ? 'large' : 'correction')
      return verdicts
    })
    try {
      const large = [...(await Promise.all(Array.from({ length: 40 }, (_, i) => signed('ETH', i * 1000)))), await signed('BTC', 0, 1)]
      const correction = [await signed('BTC', 0, 2)]
      const [first, second] = await Promise.all([store.putBatch(large), store.putBatch(correction)])
      expect(order).toEqual(['correction', 'large'])
      expect(first.position).toBeLessThan(second.position)
      expect((await store.latest('BTC'))[0]?.value).toBe(2)
      expect((await store.verify({ symbols: ['BTC'] })).stored).toMatchObject({ valid: 1, unchecked: 0 })
    } finally {
      spy.mockRestore()
    }
  })

  it('names a record the store altered after it passed: recheck finds its stored verdict valid and the record failing', async () => {
    const db = new MemoryLevel<any, any>()
    const store = await openStore('flag', db)
    const record = await signed('BTC', 0)
    await store.putMany([record])
    const verdicts = db.sublevel<Uint8Array, Uint8Array>('w', { keyEncoding: 'view', valueEncoding: 'view' })
    const [[key, value]] = await verdicts.iterator().all() as [[Uint8Array, Uint8Array]]
    await store.close()
    // The record changes under its verdict: written again without verification (which drops the verdict), and
    // the old verdict put back behind the store's back, in place of the group that says it has none.
    const unverified = await openStore('off', db)
    await unverified.putMany([{ ...record, value: 1 }])
    await unverified.close()
    await db.open()
    await verdicts.open()
    await verdicts.clear()
    await verdicts.put(key, value)
    const reopened = await openStore('flag', db)
    const report = await reopened.verify({ recheck: true })
    expect(report.stored.valid).toBe(1)
    expect(report.recheck?.altered).toHaveLength(1)
    expect(report.recheck?.altered[0]).toMatchObject({ symbol: 'BTC', id: 'BTC-0', stored: { overall: 'valid' }, verdict: { overall: 'invalid' } })
  })

  it('drops a verdict when its record is written again unverified, and with its record when pruned', async () => {
    const db = new MemoryLevel<any, any>()
    const store = await openStore('flag', db)
    await store.putMany([await signed('BTC', 0), await signed('BTC', 2 * HOUR), await signed('ETH', 0)])
    await store.close()
    const unverified = await openStore('off', db)
    await unverified.putMany([await signed('ETH', 0)])
    expect((await unverified.verify()).stored).toMatchObject({ valid: 2, unchecked: 1 })
    expect(await unverified.prune({ before: T0 + HOUR })).toMatchObject({ records: 2 })
    expect((await unverified.verify()).stored).toMatchObject({ valid: 1, unchecked: 0 })
    // Gone from the disk, not just unreferenced: the one group left is the later hour's BTC record's.
    const verdicts = db.sublevel<Uint8Array, Uint8Array>('w', { keyEncoding: 'view', valueEncoding: 'view' })
    expect(await verdicts.keys().all()).toHaveLength(1)
  })
})

describe('a store that rejects bad signatures', () => {
  it('refuses a batch with a failing record whole, naming it, and takes a good one', async () => {
    const store = await openStore('reject')
    const batch = [await signed('BTC', 0), await signed('BTC', 1000), { ...(await signed('BTC', 2000)), source: { binance: 1 } }]
    await expect(store.putBatch(batch)).rejects.toMatchObject({ code: 'PRICE_INVALID_SIGNATURE', details: { index: 2, field: 'signature' } })
    await expect(store.putBatch(batch)).rejects.toThrow(/^record 2: its signature is invalid \(.+\) \(id "BTC-2000", BTC at \d+\)$/)
    expect(store.position).toBe(0)
    expect(await exported(store)).toEqual([])
    expect((await store.putBatch(batch.slice(0, 2))).stored).toBe(2)
    expect((await store.verify()).stored).toMatchObject({ valid: 2 })
  })

  it('refuses a record signed by another Arweave key than the provider\'s (checked against the provider\'s key: invalid)', async () => {
    const store = await openStore('reject')
    const other = await newArweaveWallet()
    const { signature: _, ...unsigned } = await signed('BTC', 0)
    const foreign = { ...unsigned, signature: await arweaveSign(unsigned, other) }
    await expect(store.putMany([await signed('BTC', 1000), foreign])).rejects.toThrow(/^record 1: its signature is invalid/)
    expect(await exported(store)).toEqual([])
  }, 60_000)
})

describe('a cluster node on a store that rejects bad signatures', () => {
  it('refuses the batch before it reaches the stream, and applies a good one', async () => {
    const log = new MemoryLog({ maxMessageBytes: 64 * 1024 })
    const store = await openStore('reject')
    const node = await ClusterNode.follow(store, log.connect(), { applyWaitMs: 5_000 })
    try {
      const bad = { ...(await signed('BTC', 1000)), value: 1 }
      // A generator: the node reads the batch twice (the records, then their signatures).
      function* batch() { yield bad }
      await expect(node.putBatch(batch())).rejects.toMatchObject({ code: 'PRICE_INVALID_SIGNATURE', details: { index: 0 } })
      expect(log.commitEntries()).toEqual([])
      expect((await node.putBatch([await signed('BTC', 0)])).stored).toBe(1)
      expect(log.commitEntries()).toHaveLength(1)
      expect((await store.verify()).stored).toMatchObject({ valid: 1 })
    } finally {
      await node.stop()
    }
  })
})

describe('a store that verifies, closed and opened again', () => {
  it('verifies again after a reopen, its counts starting from 0, and refuses a report asked while closing', async () => {
    const store = await openStore('flag')
    await store.putMany([await signed('BTC', 0)])
    expect(store.signatures.verdicts.valid).toBe(1)
    // Its outcome is taken at once (a rejection must never be left unhandled while the store closes): either the
    // report finished before the workers stopped, or it is told the store closed, never a plain Error.
    const outcome = store.verify({ recheck: true }).then((done) => done.records, (err: unknown) => err)
    await store.close()
    const settled = await outcome
    if (typeof settled === 'number') expect(settled).toBe(1)
    else expect(settled).toMatchObject({ code: 'PRICE_NOT_OPEN' })
    await store.open()
    expect(store.signatures).toMatchObject({ policy: 'flag', rejectedBatches: 0, verdicts: { valid: 0 } })
    await store.putMany([await signed('ETH', 0)])
    expect((await store.verify({ recheck: true })).recheck).toMatchObject({ verdicts: { valid: 2 }, altered: [] })
  })
})

describe('a store that does not verify', () => {
  it('keeps no verdict and reports its records unchecked', async () => {
    const store = await openStore('off')
    await store.putMany([await signed('BTC', 0), { ...(await signed('BTC', 1000)), value: 5 }])
    const report = await store.verify()
    expect(report).toMatchObject({ policy: 'off', records: 2, failing: [] })
    expect(report.stored).toMatchObject({ valid: 0, invalid: 0, unchecked: 2 })
  })

  it('refuses bad verify options', async () => {
    const store = await openStore('off')
    await expect(store.verify({ recheck: 'yes' as never })).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY', details: { parameter: 'recheck' } })
    await expect(store.verify({ limit: -1 })).rejects.toMatchObject({ code: 'PRICE_INVALID_QUERY', details: { parameter: 'limit' } })
    await expect(store.verify({ from: 5, to: 1 })).rejects.toMatchObject({ code: 'PRICE_INVALID_RANGE' })
    await expect(PriceStore.open(new MemoryLevel(), { provider, signatures: { policy: 'strict' as never } })).rejects.toMatchObject({
      code: 'PRICE_INVALID_OPTIONS', details: { field: 'signatures.policy' },
    })
  })
})
