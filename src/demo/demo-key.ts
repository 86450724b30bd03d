/**
 * The demo key: a secp256k1 key published on purpose, so the demo data set
 * carries real `liteEvmSignature`s that anyone can verify (and tamper with)
 * without a key of their own. Its private key is keccak256 of
 * {@link DEMO_KEY_TEXT}: anyone can sign with it, so a record it signed
 * proves nothing beyond "this is demo data". Never allow it for real prices.
 *
 * Signing uses libsecp256k1 through the `secp256k1` package's prebuilt
 * native binding when it loads (about 25 times faster than pure JS), else
 * @noble/curves; both sign deterministically (RFC 6979, low s), so the
 * same record gets the same signature on every platform.
 */
import { createRequire } from 'node:module'
import { secp256k1 } from '@noble/curves/secp256k1'
import { keccak_256 } from '@noble/hashes/sha3'
import { liteDigest } from '../trust/evm-message.js'

/** The text whose keccak256 is the demo's private key. */
export const DEMO_KEY_TEXT = 'price-store demo key: published on purpose, signs only the demo data set'

/** The demo's private key (hex): public, for the demo only. */
export const DEMO_PRIVATE_KEY: string = Buffer.from(keccak_256(new TextEncoder().encode(DEMO_KEY_TEXT))).toString('hex')

const privateKey = Buffer.from(DEMO_PRIVATE_KEY, 'hex')

/** The demo key's EVM address (`0x` + 40 lower-case hex): the `--evm-signer` that makes the demo verify. */
export const DEMO_SIGNER: string = `0x${Buffer.from(keccak_256(secp256k1.getPublicKey(privateKey, false).subarray(1)).subarray(12)).toString('hex')}`

interface NativeSigner {
  ecdsaSign(digest: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number }
}

let native: NativeSigner | null | undefined

function nativeSigner(): NativeSigner | null {
  if (native !== undefined) return native
  try {
    // The native module alone: the package's main entry would fall back to elliptic, slower than noble.
    native = createRequire(import.meta.url)('secp256k1/bindings') as NativeSigner
  } catch {
    native = null
  }
  return native
}

/**
 * The `liteEvmSignature` the demo key makes for a record's `symbol`, `value`
 * and `timestamp`, as RedStone's nodes wrote theirs (`0x` + r ‖ s ‖ v, v 27
 * or 28), with `backend` (default native when it loads). Throws when the fields could not have been signed (a negative
 * value, a symbol over 31 bytes): the demo never makes such records.
 */
export function demoLiteSignature(
  record: { readonly symbol: string; readonly value: number; readonly timestamp: number },
  backend: 'native' | 'noble' = nativeSigner() === null ? 'noble' : 'native',
): string {
  const digest = liteDigest(record)
  if ('unsignable' in digest) throw new RangeError(`the demo cannot sign ${record.symbol}: ${digest.unsignable}`)
  const binding = backend === 'native' ? nativeSigner() : null
  let compact: Uint8Array
  let recovery: number
  if (binding === null) {
    const signature = secp256k1.sign(digest.digest, privateKey)
    compact = signature.toCompactRawBytes()
    recovery = signature.recovery
  } else {
    const signature = binding.ecdsaSign(digest.digest, privateKey)
    compact = signature.signature
    recovery = signature.recid
  }
  return `0x${Buffer.from(compact).toString('hex')}${(27 + recovery).toString(16)}`
}
