/**
 * Reading an EVM signature field: `0x` + 130 hex digits, r ‖ s ‖ v, as
 * eth-sig-util's personalSign / signTypedData wrote it (v 27 or 28;
 * ethereumjs-util's fromRpcSig also took 0 or 1). Everything else is
 * malformed: another length (no 64-byte EIP-2098 form: RedStone never wrote
 * one), non-hex, r or s out of range, and a high s. A high-s signature is
 * the malleated twin of a low-s one (same r, s' = n − s): libsecp256k1
 * signers (RedStone's) only make low-s ones, so a high s means the bytes
 * were changed, and accepting it would let two distinct signature strings
 * pass for one signing (EIP-2).
 */
import type { RecoverableSignature } from './secp256k1-recover.js'

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
const HALF_ORDER = CURVE_ORDER >> 1n

/** The parsed signature, or why the field is malformed. */
export function parseEvmSignature(field: unknown): RecoverableSignature | string {
  if (typeof field !== 'string') return 'not a string'
  if (field === '') return 'empty'
  if (!SIGNATURE.test(field)) return field.startsWith('0x') ? `not 65 bytes of hex (${field.length - 2} characters after 0x)` : 'not 0x-prefixed hex'
  const bytes = Buffer.from(field.slice(2), 'hex')
  const r = BigInt(`0x${field.slice(2, 66)}`)
  const s = BigInt(`0x${field.slice(66, 130)}`)
  const v = bytes[64] as number
  if (r === 0n || r >= CURVE_ORDER) return 'r is out of range'
  if (s === 0n || s >= CURVE_ORDER) return 's is out of range'
  if (s > HALF_ORDER) return 'high s (the malleated form of a low-s signature; EIP-2)'
  const recovery = v >= 27 ? v - 27 : v
  if (recovery !== 0 && recovery !== 1) return `v is ${v} (27, 28, 0 or 1 expected)`
  return { compact: bytes.subarray(0, 64), recovery }
}
