/**
 * Sign → store → export → verify: any batch of records the store accepts,
 * signed as RedStone signs (every kind RedStone could sign for the record),
 * is taken by a store that rejects bad signatures, comes back from export
 * verifying valid, and `store.verify({ recheck: true })` finds every record
 * valid at ingest and now, and none altered. So what the store keeps (extra
 * fields, `-0`, unicode in `source`, key order) is what was signed.
 */
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { beforeAll, describe, expect, it } from 'vitest'
import { PriceStore, type NewPriceRecord } from '../../src/index.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { signAll, signingKeys, unsignedRecordArb } from '../trust/support/signed-records.js'

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
      { seed: 2226, numRuns: 40 },
    )
  }, 180_000)
})
