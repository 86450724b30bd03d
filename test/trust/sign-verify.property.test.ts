/**
 * The property behind "fast enough to leave on" being safe to leave on:
 * whatever record the store accepts (extra fields in any order, `-0`,
 * subnormal and huge values, unicode in `source` and `symbol`), signed as
 * RedStone signs, carried through JSON as the store exports it, verifies
 * as valid; and the same record with its value changed does not.
 */
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import type { AllowedSigners } from '../../src/trust/allowed-signers.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { signAll as signRecord, signingKeys, unsignedRecordArb, type SigningKeys } from './support/signed-records.js'

let keys: SigningKeys
let signers: AllowedSigners

beforeAll(async () => {
  keys = await signingKeys('8da4ef21b864d2cc526dbdb2a120bd2874c36c9d0a1fb7f8c63d7f7a8b41de8f')
  signers = keys.signers
}, 120_000)

const recordArb = unsignedRecordArb
const signAll = (unsigned: Record<string, unknown>): Promise<Record<string, unknown>> => signRecord(unsigned, keys.wallet, keys.evm)

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
