/**
 * The integer RedStone signs for a numeric data point, computed as
 * @redstone-finance/protocol does (`convertNumberToBytes`): the JSON number
 * written with `toFixed(decimals)` (for numbers of 10^21 and more, whose
 * `toFixed` is exponential, the shortest digits of the number, as its
 * `toLocaleString` fallback writes them), read as a decimal scaled by
 * 10^decimals, big-endian in `byteSize` bytes. The decimal text is exact, so
 * the integer is built from its digits, never from a float product.
 */

/** The signed integer of a numeric value, or why RedStone could not have signed it. */
export function scaledNumericValue(value: number, decimals: number): bigint | string {
  if (!Number.isFinite(value)) return 'not a finite number'
  let text = value.toFixed(decimals)
  if (text.includes('e')) text = integerDigits(value)
  const negative = text.startsWith('-')
  const [whole = '0', fraction = ''] = (negative ? text.slice(1) : text).split('.')
  const scaled = BigInt(whole + fraction.padEnd(decimals, '0'))
  // ethers arrayify refuses a negative BigNumber's hex; a negative that rounds to zero signs as 0.
  if (negative && scaled !== 0n) return 'negative (RedStone signs unsigned integers only)'
  return scaled
}

/** The integer digits of a number of magnitude 10^21 or more (an integer): its shortest digits, zero-padded. */
function integerDigits(value: number): string {
  const [mantissa = '', exponentText = '0'] = String(value).split('e')
  const negative = mantissa.startsWith('-')
  const [whole = '', fraction = ''] = (negative ? mantissa.slice(1) : mantissa).split('.')
  const digits = (whole + fraction).padEnd(Number(exponentText) + 1, '0')
  return `${negative ? '-' : ''}${digits}`
}

/** How many bytes RedStone's serializer needs for an unsigned integer (ethers writes 0 as one byte). */
export function bytesNeeded(value: bigint): number {
  return value === 0n ? 1 : Math.ceil(value.toString(16).length / 2)
}

/** The integer as `byteSize` big-endian bytes; the caller checked it fits. */
export function integerBytes(value: bigint, byteSize: number): Uint8Array {
  const out = new Uint8Array(byteSize)
  if (byteSize === 0) return out
  const hex = value.toString(16).padStart(byteSize * 2, '0')
  out.set(Buffer.from(hex, 'hex'))
  return out
}

/** The big-endian unsigned integer of bytes. */
export function integerOf(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`)
}
