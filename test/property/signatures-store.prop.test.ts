/**
 * Sign → store → export → verify: any batch of records the store accepts,
 * signed as RedStone signs (every kind RedStone could sign for the record),
 * is taken by a store that rejects bad signatures, comes back from export
 * verifying valid, and `store.verify({ recheck: true })` finds every record
 * valid at ingest and now, and none altered. So what the store keeps (extra
 * fields, `-0`, unicode in `source`, key order) is what was signed.
 *
 * `npm test` makes 10 runs of the property; the slow set (`npm run test:slow`,
 * run by CI too) makes all 40.
 */
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { beforeAll, describe, expect, it } from 'vitest'
import { PriceStore, type NewPriceRecord } from '../../src/index.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { signAll, signingKeys, unsignedRecordArb } from '../trust/support/signed-records.js'
import { runs } from '../support/full-runs.js'

let keys: Awaited<ReturnType<typeof signingKeys>>

beforeAll(async () => {
  keys = await signingKeys('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318')
}, 120_000)

describe('sign → store → export → verify', () => {
  it('holds for any batch the store accepts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(unsignedRecordArb, { minLength: 1, maxLength: 4 }), async (unsigned) => {
        const batch = await Promise.all(unsigned.map((record) => signAll(record, keys.wallet, keys.evm)))
        const store = await PriceStore.open(new MemoryLevel(), {
          provider: { name: 'redstone', id: keys.wallet.address, publicKey: keys.wallet.publicKey },
          signatures: { policy: 'reject', evmSigners: [keys.evm.address], threads: 1 },
        })
        try {
          await store.putBatch(batch as unknown as NewPriceRecord[])
          const exported: Record<string, unknown>[] = []
          for await (const record of store.export()) exported.push(JSON.parse(JSON.stringify(record)) as Record<string, unknown>)
          expect(exported.length).toBeGreaterThan(0)
          for (const record of exported) expect(verifyRecord(record, keys.signers).overall, JSON.stringify(record)).toBe('valid')
          const report = await store.verify({ recheck: true })
          expect(report.stored).toMatchObject({ valid: exported.length, unchecked: 0 })
          expect(report.recheck).toMatchObject({ verdicts: { valid: exported.length }, altered: [], failing: [] })
        } finally {
          await store.close()
        }
      }),
      { seed: 2226, numRuns: runs(10, 40) },
    )
  }, 180_000)

  it('verifies the EVM signatures a record keeps among its extra fields: one tampered refuses the batch, naming it', async () => {
    const signed = await signAll({
      id: 'eth-1', symbol: 'ETH', value: 1800.5, timestamp: 1_685_099_220_000, version: '0.4', permawebTx: 'tx', source: { binance: 1800.5 }, provider: '',
    }, keys.wallet, keys.evm)
    expect(Object.keys(signed)).toEqual(expect.arrayContaining(['signature', 'liteEvmSignature', 'evmSignature']))
    const store = await PriceStore.open(new MemoryLevel(), {
      provider: { name: 'redstone', id: keys.wallet.address, publicKey: keys.wallet.publicKey },
      signatures: { policy: 'reject', evmSigners: [keys.evm.address], threads: 1 },
    })
    try {
      for (const field of ['liteEvmSignature', 'evmSignature'] as const) {
        const value = signed[field] as string
        // Another valid-looking signature: the last digit of s changed, so it recovers another signer or none.
        const tampered = { ...signed, [field]: `${value.slice(0, -3)}${value.at(-3) === '0' ? '1' : '0'}${value.slice(-2)}` }
        await expect(store.putBatch([tampered as unknown as NewPriceRecord])).rejects.toMatchObject({ code: 'PRICE_INVALID_SIGNATURE', details: { index: 0, field } })
      }
      expect(store.position).toBe(0)
      await store.putBatch([signed as unknown as NewPriceRecord])
      expect((await store.verify()).stored).toMatchObject({ valid: 1 })
    } finally {
      await store.close()
    }
  })
})
