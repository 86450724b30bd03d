/**
 * Recovers the EVM address that made a secp256k1 signature of a digest.
 * Two interchangeable backends: libsecp256k1 through the `secp256k1`
 * package's prebuilt native binding (about 25 times faster: see
 * bench/results/issue22-signatures.md), and @noble/curves in pure JS where
 * no prebuilt binding loads (a platform without one). Both get the same
 * checked input, so they agree; the tests run both.
 */
import { createRequire } from 'node:module'
import { secp256k1 } from '@noble/curves/secp256k1'
import { keccak_256 } from '@noble/hashes/sha3'

/** A parsed 65-byte EVM signature: r ‖ s (64 bytes, s low) and the recovery bit. */
export interface RecoverableSignature {
  readonly compact: Uint8Array
  readonly recovery: 0 | 1
}

/** The backend names. */
export type Secp256k1Backend = 'native' | 'noble'

interface NativeBinding {
  ecdsaRecover(signature: Uint8Array, recovery: number, digest: Uint8Array, compressed: boolean): Uint8Array
}

let native: NativeBinding | null | undefined

/** The native binding, or null when it does not load here (then `noble` is used). */
function nativeBinding(): NativeBinding | null {
  if (native !== undefined) return native
  try {
    // `secp256k1/bindings` is the native module alone (the package's main entry would fall back
    // to elliptic, slower than noble); node-gyp-build loads the prebuilt binary for this platform.
    native = createRequire(import.meta.url)('secp256k1/bindings') as NativeBinding
  } catch {
    native = null
  }
  return native
}

/** The backend `recoverAddress` uses when none is asked for: native when it loads. */
export function defaultBackend(): Secp256k1Backend {
  return nativeBinding() === null ? 'noble' : 'native'
}

/** The signer's address (`0x` + 40 lower-case hex), or undefined when no public key recovers from the signature. */
export function recoverAddress(digest: Uint8Array, signature: RecoverableSignature, backend: Secp256k1Backend = defaultBackend()): string | undefined {
  const publicKey = backend === 'native' ? recoverNative(digest, signature) : recoverNoble(digest, signature)
  if (publicKey === undefined) return undefined
  // The address is the last 20 bytes of keccak256 of the 64-byte uncompressed key (without its 0x04).
  return `0x${Buffer.from(keccak_256(publicKey.subarray(1)).subarray(12)).toString('hex')}`
}

function recoverNative(digest: Uint8Array, signature: RecoverableSignature): Uint8Array | undefined {
  const binding = nativeBinding()
  if (binding === null) return recoverNoble(digest, signature)
  try {
    return binding.ecdsaRecover(signature.compact, signature.recovery, digest, false)
  } catch {
    return undefined
  }
}

function recoverNoble(digest: Uint8Array, signature: RecoverableSignature): Uint8Array | undefined {
  try {
    return secp256k1.Signature.fromCompact(signature.compact).addRecoveryBit(signature.recovery).recoverPublicKey(digest).toRawBytes(false)
  } catch {
    return undefined
  }
}
