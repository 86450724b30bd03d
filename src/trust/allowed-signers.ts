/**
 * Who may sign for which provider. A record's Arweave signature is accepted
 * from the provider's own key only (its id is the Arweave address of that
 * key); its EVM signatures from the addresses configured for its provider.
 */
import { arweaveAddressOf } from './arweave-key.js'

/** The signers allowed for one provider. */
export interface ProviderSigners {
  /** The provider id as records carry it in `provider` (for RedStone: the Arweave address of its key). */
  readonly id: string
  /** The provider's Arweave public key: the RSA modulus `n` of its JWK, base64url (the store's `Provider.publicKey`). */
  readonly publicKey?: string
  /** EVM addresses (`0x` + 40 hex, any case) allowed to sign `liteEvmSignature` and `evmSignature` for this provider. */
  readonly evmAddresses?: readonly string[]
}

/** The signers allowed per provider: what `verifyRecord` and `SignatureVerifier` check signers against. */
export interface AllowedSigners {
  readonly providers: readonly ProviderSigners[]
}

/** AllowedSigners made ready for lookups; built once per verifier. */
export interface SignerTable {
  /** Whether `publicKey` is the configured key of provider `providerId`. */
  allowsArweaveKey(providerId: string, publicKey: string): boolean
  /** The configured key of a provider, used when a record carries none. */
  arweaveKeyOf(providerId: string): string | undefined
  /** Whether `address` (lower-case) may sign EVM kinds for `providerId`. */
  allowsEvm(providerId: string, address: string): boolean
  /** Whether any EVM address is configured for `providerId`. */
  hasEvmSigners(providerId: string): boolean
}

/** Builds the lookup table of `signers`. Never throws on odd entries: they simply allow nothing they do not name. */
export function signerTable(signers: AllowedSigners): SignerTable {
  const keys = new Map<string, string>()
  const evm = new Map<string, Set<string>>()
  for (const entry of signers.providers) {
    if (typeof entry.publicKey === 'string' && entry.publicKey !== '') keys.set(entry.id, entry.publicKey)
    const addresses = evm.get(entry.id) ?? new Set<string>()
    for (const address of entry.evmAddresses ?? []) addresses.add(address.toLowerCase())
    evm.set(entry.id, addresses)
  }
  return {
    // The key must be the one configured for the provider, and the provider id its address
    // (a configuration whose id is not the key's address allows nothing).
    allowsArweaveKey: (providerId, publicKey) => keys.get(providerId) === publicKey && arweaveAddressOf(publicKey) === providerId,
    arweaveKeyOf: (providerId) => keys.get(providerId),
    allowsEvm: (providerId, address) => evm.get(providerId)?.has(address) ?? false,
    hasEvmSigners: (providerId) => (evm.get(providerId)?.size ?? 0) > 0,
  }
}
