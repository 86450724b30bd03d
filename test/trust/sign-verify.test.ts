/**
 * Records signed as RedStone's code signed them (support/redstone-signers.ts),
 * verified by verifyRecord: each kind valid; every field a kind covers,
 * changed one at a time, makes it fail; every field it does not cover,
 * changed, leaves it valid and the verdict says "not covered"; signers not
 * allowed are told apart from altered records where the kind allows it.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { AllowedSigners } from '../../src/trust/allowed-signers.js'
import type { Secp256k1Backend } from '../../src/trust/secp256k1-recover.js'
import { SIGNATURE_COVERS, fieldCoverage, type SignatureKind } from '../../src/trust/verdict.js'
import { verifyRecord } from '../../src/trust/verify-record.js'
import { arweaveSign, evmWallet, liteEvmSign, newArweaveWallet, typedEvmSign, type ArweaveWallet } from './support/redstone-signers.js'

const evm = evmWallet('4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318')
const stranger = evmWallet('0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef')
let wallet: ArweaveWallet
let other: ArweaveWallet
let signers: AllowedSigners

const FIELDS = ['id', 'source', 'symbol', 'timestamp', 'version', 'value', 'permawebTx', 'provider'] as const
type Field = (typeof FIELDS)[number]

function unsignedRecord(provider: string): Record<string, unknown> {
  return { id: 'b33c2869-cf10', symbol: 'BNB', provider, value: 306.5322608, permawebTx: 'mock-permaweb-tx', version: '0.4', source: { coingecko: 306.61, binance: 306.51226, 'kucoin-2': 'error' }, timestamp: 1685099220000 }
}

/** The record carrying only `kind`, signed by the test's keys. */
async function signedWith(kind: SignatureKind, record = unsignedRecord(wallet.address)): Promise<Record<string, unknown>> {
  const base = record as { symbol: string; value: number; timestamp: number; version: string }
  if (kind === 'arweave') return { ...record, signature: await arweaveSign(record, wallet), providerPublicKey: wallet.publicKey }
  if (kind === 'lite-evm') return { ...record, liteEvmSignature: liteEvmSign(base, evm) }
  return { ...record, evmSignature: typedEvmSign(base, evm) }
}

/** A change of each field that every kind covering it must notice. */
function tampered(record: Record<string, unknown>, field: Field): Record<string, unknown> {
  const changes: Record<Field, unknown> = {
    id: 'another-id',
    source: { ...(record['source'] as object), coingecko: 306.62 },
    symbol: 'BTC',
    timestamp: (record['timestamp'] as number) + 1000,
    version: '0.5',
    value: (record['value'] as number) + 0.01,
    permawebTx: 'another-tx',
    provider: other.address,
  }
  return { ...record, [field]: changes[field] }
}

beforeAll(async () => {
  wallet = await newArweaveWallet()
  other = await newArweaveWallet()
  signers = { providers: [{ id: wallet.address, publicKey: wallet.publicKey, evmAddresses: [evm.address.toUpperCase().replace('0X', '0x')] }] }
}, 120_000)

describe.each(['native', 'noble'] as const satisfies readonly Secp256k1Backend[])('verifyRecord with the %s secp256k1 backend', (backend) => {
  const options = { secp256k1: backend }

  for (const kind of ['arweave', 'lite-evm', 'evm-typed'] as const) {
    describe(`${kind}`, () => {
      it('is valid as signed, with its signer and what it covers', async () => {
        const verdict = verifyRecord(await signedWith(kind), signers, options)
        expect(verdict.overall).toBe('valid')
        expect(verdict.checks).toEqual([{ kind, result: 'valid', signer: kind === 'arweave' ? wallet.address : evm.address, covers: SIGNATURE_COVERS[kind] }])
      })

      it('fails when any covered field is changed, and says so for that field', async () => {
        const signed = await signedWith(kind)
        for (const field of SIGNATURE_COVERS[kind] as readonly Field[]) {
          const verdict = verifyRecord(tampered(signed, field), signers, options)
          expect(verdict.overall, field).toBe('invalid')
          expect(fieldCoverage(verdict, field), field).toBe('fails')
        }
      })

      it('stays valid when a field it does not cover is changed, and calls that field not covered', async () => {
        const signed = await signedWith(kind)
        const uncovered = FIELDS.filter((field) => !SIGNATURE_COVERS[kind].includes(field) && field !== 'provider')
        expect(uncovered.length).toBe(kind === 'arweave' ? 0 : kind === 'lite-evm' ? 4 : 3)
        for (const field of uncovered) {
          const verdict = verifyRecord(tampered(signed, field), signers, options)
          expect(verdict.overall, field).toBe('valid')
          expect(fieldCoverage(verdict, field), field).toBe('not-covered')
          expect(fieldCoverage(verdict, 'value'), field).toBe('verified')
        }
        // Extra fields and the joined-on-read ones are never covered.
        const extra = verifyRecord({ ...signed, minutes: 7, note: 'x' }, signers, options)
        expect(extra.overall).toBe('valid')
        expect(fieldCoverage(extra, 'minutes')).toBe('not-covered')
      })
    })
  }

  it('holds the EVM kinds to their precision: value to 10⁻⁸, and lite-evm timestamp to the second', async () => {
    const lite = await signedWith('lite-evm')
    const typed = await signedWith('evm-typed')
    const ts = lite['timestamp'] as number
    expect(verifyRecord({ ...lite, timestamp: ts - 999 }, signers, options).overall).toBe('valid') // same ceil(ts / 1000)
    expect(verifyRecord({ ...lite, timestamp: ts + 1 }, signers, options).overall).toBe('invalid')
    expect(verifyRecord({ ...typed, timestamp: ts + 1 }, signers, options).overall).toBe('invalid')
    expect(verifyRecord({ ...lite, value: 306.532260800001 }, signers, options).overall).toBe('valid')
    expect(verifyRecord({ ...typed, value: 306.532260800001 }, signers, options).overall).toBe('valid')
  })

  it('tells a signer not allowed from an altered record: an Arweave key other than the configured one', async () => {
    const record = unsignedRecord(other.address)
    const verdict = verifyRecord({ ...record, signature: await arweaveSign(record, other), providerPublicKey: other.publicKey }, signers, options)
    expect(verdict.checks).toMatchObject([{ kind: 'arweave', result: 'signer-not-allowed', signer: other.address }])
    // Signed by one key but naming another provider: the provider field is covered, so invalid.
    const misnamed = unsignedRecord(wallet.address)
    const wrong = verifyRecord({ ...misnamed, signature: await arweaveSign(misnamed, other), providerPublicKey: other.publicKey }, signers, options)
    expect(wrong.checks).toMatchObject([{ result: 'invalid', signer: other.address }])
  })

  it('uses the configured key when the record carries none (records as the store keeps them)', async () => {
    const { providerPublicKey: _key, ...bare } = await signedWith('arweave')
    expect(verifyRecord(bare, signers, options).overall).toBe('valid')
    expect(verifyRecord(bare, { providers: [] }, options).checks).toMatchObject([{ result: 'signer-not-allowed' }])
  })

  it('calls an EVM signature by an address not configured signer-not-allowed, or invalid when the provider has signers (recovery cannot tell)', () => {
    const record = unsignedRecord(wallet.address) as { symbol: string; value: number; timestamp: number; version: string }
    const bystranger = { ...record, liteEvmSignature: liteEvmSign(record, stranger), evmSignature: typedEvmSign(record, stranger) }
    const none = verifyRecord(bystranger, { providers: [{ id: wallet.address, publicKey: wallet.publicKey }] }, options)
    expect(none.checks.map((c) => [c.result, c.signer])).toEqual([['signer-not-allowed', stranger.address], ['signer-not-allowed', stranger.address]])
    const configured = verifyRecord(bystranger, signers, options)
    expect(configured.checks.map((c) => [c.result, c.signer])).toEqual([['invalid', stranger.address], ['invalid', stranger.address]])
    // A provider changed to one with no EVM signers: provider is not covered, but it decides who may sign.
    const moved = verifyRecord({ ...record, provider: 'elsewhere', liteEvmSignature: liteEvmSign(record, evm) }, signers, options)
    expect(moved.checks).toMatchObject([{ result: 'signer-not-allowed', signer: evm.address }])
  })
})

describe('the Arweave signed text', () => {
  it('verifies a 32-byte salt (arweave-js WebCrypto driver) as well as the longest (its Node driver)', async () => {
    const record = unsignedRecord(wallet.address)
    const signed = { ...record, signature: await arweaveSign(record, wallet, 32) }
    expect(verifyRecord(signed, signers).overall).toBe('valid')
  })

  it('keeps the picked order for versions without a dot (other than "3"), and sorts keys deeply for "3" and "x.y"', async () => {
    for (const version of ['1', '3', '0.4', '0.4.25']) {
      const record = { ...unsignedRecord(wallet.address), version, source: { zeta: 1, Alpha: [{ b: 1, a: 2 }], '10': 'x', '2': 'y', 'é': 3 } }
      const signed = { ...record, signature: await arweaveSign(record, wallet) }
      expect(verifyRecord(signed, signers).overall, version).toBe('valid')
      // Key order inside source matters exactly when the version is not sorted (so a store must keep it).
      const reordered = { ...signed, source: Object.fromEntries(Object.entries(record.source).reverse()) }
      expect(verifyRecord(reordered, signers).overall, version).toBe(version === '1' ? 'invalid' : 'valid')
      const reorderedTop = Object.fromEntries(Object.entries(signed).reverse())
      expect(verifyRecord(reorderedTop, signers).overall, `${version} top`).toBe('valid')
      const nested = { ...signed, source: { ...record.source, Alpha: [{ a: 2, b: 1 }] } }
      expect(verifyRecord(nested, signers).overall, `${version} nested`).toBe(version === '1' ? 'invalid' : 'valid')
    }
  })

  it('sums several kinds: valid only when every kind present is', async () => {
    const record = unsignedRecord(wallet.address) as { symbol: string; value: number; timestamp: number; version: string }
    const all = { ...record, signature: await arweaveSign(record, wallet), liteEvmSignature: liteEvmSign(record, evm), evmSignature: typedEvmSign(record, evm) }
    const verdict = verifyRecord(all, signers)
    expect(verdict.overall).toBe('valid')
    expect(verdict.checks.map((c) => c.kind)).toEqual(['arweave', 'lite-evm', 'evm-typed'])
    // source changed: only the Arweave signature covers it; value stays vouched for by the EVM kinds.
    const altered = verifyRecord({ ...all, source: {} }, signers)
    expect(altered.overall).toBe('invalid')
    expect(fieldCoverage(altered, 'source')).toBe('fails')
    expect(fieldCoverage(altered, 'value')).toBe('verified')
    expect(verifyRecord({ ...record, provider: wallet.address }, signers)).toEqual({ overall: 'unsigned', checks: [] })
  })
})
