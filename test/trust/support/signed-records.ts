/**
 * Records the store accepts, signed the way RedStone signed them: the
 * arbitraries and the signer shared by the property tests of verification
 * alone (test/trust) and through a store (test/property).
 */
import fc from 'fast-check'
import { TRICKY_SYMBOLS, inputRecordArb } from '../../../src/testing/record-arbitraries.js'
import type { AllowedSigners } from '../../../src/trust/allowed-signers.js'
import { arweaveSign, evmWallet, liteEvmSign, newArweaveWallet, typedEvmSign, type ArweaveWallet, type EvmWallet } from './redstone-signers.js'

const unicodeSourceArb = fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 5 }), fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ unit: 'grapheme', maxLength: 5 })), { maxKeys: 5, noNullPrototype: true })

/** A record the store accepts (extra fields, `-0`, tricky symbols), unsigned, with or without a unicode `source`; its `provider` is set when signed. */
export const unsignedRecordArb: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(inputRecordArb([...TRICKY_SYMBOLS, 'ETH', 'Ωmega-ü', 'A'.repeat(40)], 60_000), fc.option(unicodeSourceArb, { nil: undefined }))
  .map(([record, source]) => {
    const { signature: _s, liteEvmSignature: _l, evmSignature: _e, providerPublicKey: _k, ...rest } = record as Record<string, unknown>
    return { ...rest, ...(source === undefined ? {} : { source }), provider: '' } as Record<string, unknown>
  })

/** Signs with every kind RedStone's signers could make for this record (they threw on the others), as `wallet`'s provider. */
export async function signAll(unsigned: Record<string, unknown>, wallet: ArweaveWallet, evm: EvmWallet): Promise<Record<string, unknown>> {
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

/** A provider's signing keys for a test file: a new Arweave wallet, an EVM wallet, and the signers that allow both. */
export interface SigningKeys {
  readonly wallet: ArweaveWallet
  readonly evm: EvmWallet
  readonly signers: AllowedSigners
}

/** Makes {@link SigningKeys} (about a second: the RSA-4096 key), the EVM wallet from `evmPrivateKey`. */
export async function signingKeys(evmPrivateKey: string): Promise<SigningKeys> {
  const wallet = await newArweaveWallet()
  const evm = evmWallet(evmPrivateKey)
  return { wallet, evm, signers: { providers: [{ id: wallet.address, publicKey: wallet.publicKey, evmAddresses: [evm.address] }] } }
}
