/**
 * The 32-byte hashes RedStone's EVM signers signed for one record, rebuilt
 * as redstone-node src/signers/EvmPriceSigner.ts builds them for a package
 * of one price (PriceSignerService.signSinglePrice):
 * - lite (`liteEvmSignature`): keccak256 of bytes32(symbol) ‖
 *   uint256(round(value × 10⁸)) ‖ uint256(ceil(timestamp / 1000)), signed
 *   with EIP-191 personal_sign (so the signed digest is keccak256("\x19Ethereum
 *   Signed Message:\n32" ‖ that hash));
 * - typed (`evmSignature`, nodes before April 2022): EIP-712 v4 of
 *   `PriceData(bytes32[] symbols,uint256[] values,uint256 timestamp)` with
 *   one symbol and one value and the timestamp in ms, domain
 *   `{ name: "Redstone", version: <the record's version>, chainId }`
 *   (the node passed its own "major.minor" version, the one it wrote into
 *   each record, and its manifest's evmChainId, 1 in every public manifest).
 * Each returns a reason string instead when the record's fields could not
 * have been signed (the signer would have thrown).
 */
import { keccak_256 } from '@noble/hashes/sha3'

const encoder = new TextEncoder()
const HEX = /^[0-9a-fA-F]*$/

/** Either the digest to recover the signer from, or why there can be none. */
export type Digest = { readonly digest: Uint8Array } | { readonly unsignable: string }

/**
 * bytes32 of a symbol (EvmPriceSigner.convertStringToBytes32String): the
 * UTF-8 bytes right-padded (ethers formatBytes32String, at most 31 bytes);
 * for strings longer than 31 characters keccak256 of the UTF-8 (ethers.id),
 * or the string itself when it is already `0x` + 64 hex.
 */
export function symbolBytes32(symbol: string): Uint8Array | string {
  if (symbol.length > 31) {
    if (symbol.length === 66 && symbol.startsWith('0x')) {
      return HEX.test(symbol.slice(2)) ? Buffer.from(symbol.slice(2), 'hex') : 'the symbol is 0x and 64 characters that are not hex'
    }
    return keccak_256(encoder.encode(symbol))
  }
  const bytes = encoder.encode(symbol)
  if (bytes.length > 31) return 'the symbol is over 31 bytes of UTF-8 (ethers formatBytes32String refuses it)'
  const out = new Uint8Array(32)
  out.set(bytes)
  return out
}

/** Math.round(value × 10⁸) as RedStone serialised it, when it is a non-negative integer a signer could encode. */
function scaledValue(value: unknown): bigint | string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'the value is not a finite number'
  const scaled = Math.round(value * 10 ** 8)
  if (!Number.isFinite(scaled)) return 'round(value × 10⁸) is not finite'
  if (scaled < 0) return 'the value is negative (a uint256 cannot hold it)'
  return BigInt(scaled)
}

/** The digest personal_sign signed for the lite signature of a record. */
export function liteDigest(record: Readonly<Record<string, unknown>>): Digest {
  const { symbol, timestamp } = record
  if (typeof symbol !== 'string') return { unsignable: 'the symbol is not a string' }
  const symbolWord = symbolBytes32(symbol)
  if (typeof symbolWord === 'string') return { unsignable: symbolWord }
  const value = scaledValue(record['value'])
  if (typeof value === 'string') return { unsignable: value }
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp)) return { unsignable: 'the timestamp is not a finite number' }
  const seconds = Math.ceil(timestamp / 1000)
  if (seconds < 0) return { unsignable: 'the timestamp is before 1970 (a uint256 cannot hold it)' }
  // The hex string RedStone built: each number's hex padded to 64 digits (longer when it does not
  // fit), then ethereumjs-util toBuffer, which pads the whole string to an even length at its front.
  let hex = Buffer.from(symbolWord).toString('hex') + value.toString(16).padStart(64, '0') + BigInt(seconds).toString(16).padStart(64, '0')
  if (hex.length % 2 === 1) hex = `0${hex}`
  const hash = keccak_256(Buffer.from(hex, 'hex'))
  return { digest: personalMessageDigest(hash) }
}

/** EIP-191 version 0x45: keccak256("\x19Ethereum Signed Message:\n" + length ‖ message). */
export function personalMessageDigest(message: Uint8Array): Uint8Array {
  const prefix = encoder.encode(`\x19Ethereum Signed Message:\n${message.length}`)
  return keccak_256(concat([prefix, message]))
}

const DOMAIN_TYPE_HASH = keccak_256(encoder.encode('EIP712Domain(string name,string version,uint256 chainId)'))
const PRICE_DATA_TYPE_HASH = keccak_256(encoder.encode('PriceData(bytes32[] symbols,uint256[] values,uint256 timestamp)'))
const NAME_HASH = keccak_256(encoder.encode('Redstone'))
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** The EIP-712 digest of a record's price package of one price; `chainId` is the domain's (1 for RedStone's public nodes). */
export function typedDigest(record: Readonly<Record<string, unknown>>, chainId: number): Digest {
  const { symbol, timestamp, version } = record
  if (typeof symbol !== 'string') return { unsignable: 'the symbol is not a string' }
  if (typeof version !== 'string') return { unsignable: 'the version is not a string' }
  const symbolWord = symbolBytes32(symbol)
  if (typeof symbolWord === 'string') return { unsignable: symbolWord }
  const value = scaledValue(record['value'])
  if (typeof value === 'string') return { unsignable: value }
  // eth-sig-util encoded numbers through bn.js, which refuses numbers past 2^53.
  if (value > MAX_SAFE) return { unsignable: 'round(value × 10⁸) is past 2^53 (bn.js refused it)' }
  if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp) || timestamp < 0) return { unsignable: 'the timestamp is not a non-negative safe integer' }
  const domain = keccak_256(concat([DOMAIN_TYPE_HASH, NAME_HASH, keccak_256(encoder.encode(version)), word(BigInt(chainId))]))
  const struct = keccak_256(concat([PRICE_DATA_TYPE_HASH, keccak_256(symbolWord), keccak_256(word(value)), word(BigInt(timestamp))]))
  return { digest: keccak_256(concat([Uint8Array.of(0x19, 0x01), domain, struct])) }
}

/** A uint256 as 32 big-endian bytes. */
function word(value: bigint): Uint8Array {
  return Buffer.from(value.toString(16).padStart(64, '0'), 'hex')
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(parts)
}
