/**
 * A RedStone data package: data points (feed id, value) and a millisecond
 * timestamp signed together by one node of a data service with its
 * secp256k1 key. The shapes here hold exactly what was signed (the bytes32
 * of each feed id, each value as the integer that was signed) next to the
 * unsigned fields a gateway adds (ids, the claimed signer).
 */
import { keccak_256 } from '@noble/hashes/sha3'

/** The byte sizes of RedStone's serialized package (@redstone-finance/protocol `redstone-constants`). */
export const PACKAGE_LAYOUT = Object.freeze({
  feedId: 32,
  timestamp: 6,
  valueByteSize: 4,
  pointsCount: 3,
  signature: 65,
  /** The largest value byte size of a numeric point (bytes points may be longer). */
  maxNumericValue: 32,
  /** The byte size of a numeric value when the point names none. */
  defaultNumericValue: 32,
  /** The decimals a numeric value is scaled by when the point names none. */
  defaultDecimals: 8,
})

/** One data point of a package. */
export interface DataPackagePoint {
  /**
   * The feed id: as the gateway named it; for a point read from bytes, the text of its bytes32 when that is
   * right-padded UTF-8, else the bytes32 as `0x` + 64 hex (a long id is signed as its keccak256, which cannot be undone).
   */
  readonly dataFeedId: string
  /** What was signed for the id: its bytes32, `0x` + 64 lower-case hex. */
  readonly feedIdWord: string
  /** The value as signed: the big-endian unsigned integer of the package's `valueByteSize` bytes (for a numeric point, value × 10^decimals). */
  readonly value: bigint
  /** For a numeric point read from JSON: the decimals its value was scaled by (not signed: 8 unless the point said otherwise). */
  readonly decimals?: number
}

/** A signed data package, from gateway JSON (`parseDataPackage`) or its serialized bytes (`parseSerializedDataPackage`). */
export interface DataPackage {
  /** The points in the order they are signed (gateway JSON is sorted by feed id bytes32, as RedStone sorts before signing). */
  readonly dataPoints: readonly DataPackagePoint[]
  /** The signed timestamp, ms since 1970. */
  readonly timestampMilliseconds: number
  /** The byte size of every value in the package (signed). */
  readonly valueByteSize: number
  /** The signature: `0x` + 130 lower-case hex, r ‖ s ‖ v. */
  readonly signature: string
  /** Unsigned: the package id the gateway gave (a feed id, or `___ALL_FEEDS___`). */
  readonly dataPackageId?: string
  /** Unsigned: the data service the package was served for; it decides whose signers apply. */
  readonly dataServiceId?: string
  /** Unsigned: the signer the gateway claims, lower-case. */
  readonly signerAddress?: string
}

const encoder = new TextEncoder()
const HEX_STRING = /^0x[0-9a-fA-F]*$/

/**
 * The bytes32 RedStone signs for a feed id (protocol `convertStringToBytes32`):
 * ids of up to 31 UTF-16 units are their UTF-8, right-padded with zeros, and
 * must fit in 31 bytes (ethers formatBytes32String refuses more); longer ids
 * are keccak256 of their UTF-8, or of the bytes they spell when they are a
 * `0x` hex string. A reason string when RedStone could not have signed it.
 */
export function feedIdWord(feedId: string): Uint8Array | string {
  if (feedId.length > 31) {
    if (!HEX_STRING.test(feedId)) return keccak_256(encoder.encode(feedId))
    if (feedId.length % 2 === 1) return 'a 0x feed id of odd length (ethers refuses to hash it)'
    return keccak_256(Buffer.from(feedId.slice(2), 'hex'))
  }
  const bytes = encoder.encode(feedId)
  if (bytes.length > 31) return `${bytes.length} bytes of UTF-8, over the 31 a bytes32 id holds`
  const word = new Uint8Array(PACKAGE_LAYOUT.feedId)
  word.set(bytes)
  return word
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/** The feed id a bytes32 names: its text when it is right-padded UTF-8 that would encode back to it, else its hex. */
export function feedIdOfWord(word: Uint8Array): string {
  const end = word.indexOf(0) === -1 ? word.length : word.indexOf(0)
  const hex = `0x${Buffer.from(word).toString('hex')}`
  if (end === 0 || end === word.length || word.subarray(end).some((byte) => byte !== 0)) return hex
  try {
    const text = decoder.decode(word.subarray(0, end))
    const back = feedIdWord(text)
    return typeof back !== 'string' && Buffer.from(back).equals(Buffer.from(word)) ? text : hex
  } catch {
    return hex
  }
}

/** `0x` + lower-case hex of bytes. */
export function hexOf(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString('hex')}`
}
