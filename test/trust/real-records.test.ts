/**
 * Real records with real signatures, as RedStone's API served them
 * (fixtures/redstone-api-lite-records.json says where each was captured):
 * their liteEvmSignature recovers to the redstone provider's published EVM
 * address, and the provider id is the Arweave address of its published key.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { arweaveAddressOf } from '../../src/trust/arweave-key.js'
import { fieldCoverage } from '../../src/trust/verdict.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import type { Secp256k1Backend } from '../../src/trust/secp256k1-recover.js'

interface Fixture {
  readonly provider: { readonly id: string; readonly publicKey: string; readonly evmAddress: string }
  readonly captures: readonly { readonly records: readonly Record<string, unknown>[] }[]
}
const fixture = JSON.parse(readFileSync(new URL('./fixtures/redstone-api-lite-records.json', import.meta.url), 'utf8')) as Fixture
const records = fixture.captures.flatMap((capture) => capture.records)
const signers = { providers: [{ id: fixture.provider.id, publicKey: fixture.provider.publicKey, evmAddresses: [fixture.provider.evmAddress] }] }

describe('real RedStone records', () => {
  it('name a provider that is the Arweave address of its published key', () => {
    expect(arweaveAddressOf(fixture.provider.publicKey)).toBe(fixture.provider.id)
  })

  for (const backend of ['native', 'noble'] as const satisfies readonly Secp256k1Backend[]) {
    it(`carry lite signatures by the provider's published EVM address (${backend})`, () => {
      expect(records.length).toBe(5)
      for (const record of records) {
        const verdict = verifyRecord(record, signers, { secp256k1: backend })
        expect(verdict.overall, String(record['id'])).toBe('valid')
        expect(verdict.checks).toEqual([{ kind: 'lite-evm', result: 'valid', signer: fixture.provider.evmAddress.toLowerCase(), covers: ['symbol', 'value', 'timestamp'] }])
        expect(fieldCoverage(verdict, 'value')).toBe('verified')
        expect(fieldCoverage(verdict, 'source')).toBe('not-covered')
      }
    })
  }

  it('fail when a covered field is changed, and stay valid when an uncovered one is', () => {
    const record = records[0] as Record<string, unknown>
    expect(verifyRecord({ ...record, value: (record['value'] as number) * 1.0001 }, signers).overall).toBe('invalid')
    expect(verifyRecord({ ...record, timestamp: (record['timestamp'] as number) + 1000 }, signers).overall).toBe('invalid')
    expect(verifyRecord({ ...record, symbol: 'ETH' }, signers).overall).toBe('invalid')
    expect(verifyRecord({ ...record, source: {}, id: 'x', permawebTx: 'y' }, signers).overall).toBe('valid')
  })
})
