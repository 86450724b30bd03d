/**
 * The property behind "fast enough to leave on" being safe to leave on:
 * whatever record the store accepts (extra fields in any order, `-0`,
 * subnormal and huge values, unicode in `source` and `symbol`), signed as
 * RedStone signs, carried through JSON as the store exports it, verifies
 * as valid; and the same record with its value changed does not.
 */
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { TRICKY_SYMBOLS, inputRecordArb } from '../../src/testing/record-arbitraries.js'
import type { AllowedSigners } from '../../src/trust/allowed-signers.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { arweaveSign, evmWallet, liteEvmSign, newArweaveWallet, typedEvmSign, type ArweaveWallet } from './support/redstone-signers.js'

const evm = evmWallet('8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f')
let wallet: ArweaveWallet
let signers: AllowedSigners

beforeAll(async () => {
  wallet = await newArweaveWallet()
  signers = { providers: [{ id: wallet.address, publicKey: wallet.publicKey, evmAddresses: [evm.address] }] }
}, 120_000)

const unicodeSourceArb = fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 5 }), fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ unit: 'grapheme', maxLength: 5 })), { maxKeys: 5, noNullPrototype: true })

/** A record the store accepts, made this test's provider's, with or without a unicode `source`. */
const recordArb = fc
  .tuple(inputRecordArb([...TRICKY_SYMBOLS, 'ETH', 'Ωmega-ü', 'A'.repeat(40)], 60_000), fc.option(unicodeSourceArb, { nil: undefined }))
  .map(([record, source]) => {
    const { signature: _s, liteEvmSignature: _l, evmSignature: _e, providerPublicKey: _k, ...rest } = record as Record<string, unknown>
    return { ...rest, ...(source === undefined ? {} : { source }), provider: '' } as Record<string, unknown>
  })

/** Signs with every kind RedStone's signers could make for this record (they threw on the others). */
async function signAll(unsigned: Record<string, unknown>): Promise<Record<string, unknown>> {
  const record = { ...unsigned, provider: wallet.address }
  const signed: Record<string, unknown> = { ...record, signature: await arweaveSign(record, wallet), providerPublicKey: wallet.publicKey }
  const fields = record as unknown as { symbol: string; value: number; timestamp: number; version: string }
  for (const [field, sign] of [['liteEvmSignature', () => liteEvmSign(fields, evm)], ['evmSignature', () => typedEvmSign(fields, evm)]] as const) {
    try {
      signed[field] = sign()
    } catch {
      // RedStone could not have signed this record with this kind.
    }
  }
  return signed
}

describe('sign → export (JSON) → verify', () => {
  it('is valid for every kind RedStone could sign, for any record the store accepts', async () => {
    await fc.assert(
      fc.asyncProperty(recordArb, async (unsigned) => {
        const signed = await signAll(unsigned)
        const exported = JSON.parse(JSON.stringify(signed)) as Record<string, unknown>
        // Both as signed (a -0 still -0) and as exported (JSON made it 0).
        for (const verdict of [verifyRecord(signed, signers), verifyRecord(exported, signers)]) {
          expect(verdict.checks.map((check) => [check.kind, check.result, check.reason])).toEqual(verdict.checks.map((check) => [check.kind, 'valid', undefined]))
        }
        const verdict = verifyRecord(exported, signers)
        expect(verdict.checks.length).toBe(1 + ('liteEvmSignature' in signed ? 1 : 0) + ('evmSignature' in signed ? 1 : 0))
        const value = exported['value'] as number
        const changed = value === 0 ? 1 : value * 2
        if (Number.isFinite(changed)) expect(verifyRecord({ ...exported, value: changed }, signers).checks[0]?.result).toBe('invalid')
      }),
      { seed: 2222, numRuns: 120 },
    )
  }, 120_000)
})
