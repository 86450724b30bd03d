/**
 * Arweave RSA keys as RedStone records name them: the public key is the
 * JWK modulus `n` (base64url, exponent AQAB), the address is
 * base64url(sha256(modulus bytes)) (arweave-js `wallets.ownerToAddress`).
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto'

const BASE64URL = /^[A-Za-z0-9_-]+$/
const KEY_CACHE_LIMIT = 64

const addresses = new Map<string, string>()
const keyObjects = new Map<string, KeyObject | null>()

/** Decodes strict base64url (no padding, no other characters); undefined when it is not. */
export function fromBase64Url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return undefined
  return Buffer.from(text, 'base64url')
}

/** The Arweave address of a public key (modulus, base64url); `''` when it is not base64url. */
export function arweaveAddressOf(publicKey: string): string {
  const known = addresses.get(publicKey)
  if (known !== undefined) return known
  const modulus = fromBase64Url(publicKey)
  const address = modulus === undefined ? '' : createHash('sha256').update(modulus).digest('base64url')
  remember(addresses, publicKey, address)
  return address
}

/**
 * The RSA public key of a modulus with exponent 65537, parsed once; null
 * when the text is not a base64url modulus of 2048 to 4096 bits (Arweave
 * keys are 4096; the upper bound keeps a hostile record from naming a key
 * that costs seconds to verify).
 */
export function rsaKeyOf(publicKey: string): KeyObject | null {
  if (keyObjects.has(publicKey)) return keyObjects.get(publicKey) ?? null
  let key: KeyObject | null = null
  const modulus = fromBase64Url(publicKey)
  if (modulus !== undefined && modulus.length >= 256 && modulus.length <= 512 && modulus[0] !== 0) {
    try {
      key = createPublicKey({ key: { kty: 'RSA', n: publicKey, e: 'AQAB' }, format: 'jwk' })
    } catch {
      key = null
    }
  }
  remember(keyObjects, publicKey, key)
  return key
}

/** The modulus length in bytes of a key from rsaKeyOf. */
export function modulusBytes(key: KeyObject): number {
  return Math.ceil((key.asymmetricKeyDetails?.modulusLength ?? 0) / 8)
}

// A handful of provider keys in practice; the bound only stops hostile records that each name a new key.
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= KEY_CACHE_LIMIT) map.delete(map.keys().next().value as string)
  map.set(key, value)
}
