/**
 * A data package's byte form, as @redstone-finance/protocol writes it
 * (`DataPackage#toBytes`, `SignedDataPackage#toBytes`): each point's feed id
 * bytes32 ‖ value (`valueByteSize` bytes, big-endian), in the package's
 * order; then the timestamp (6 bytes), the value byte size (4) and the point
 * count (3). That is what is signed (keccak256 of it); the on-chain payload
 * carries one package as those bytes with the 65-byte signature r ‖ s ‖ v
 * appended.
 */
import { type DataPackage, type DataPackagePoint, PACKAGE_LAYOUT, feedIdOfWord, hexOf } from './data-package.js'
import { packageError } from './package-json.js'
import { integerBytes, integerOf } from './package-value.js'

const TRAILER = PACKAGE_LAYOUT.timestamp + PACKAGE_LAYOUT.valueByteSize + PACKAGE_LAYOUT.pointsCount

/**
 * The bytes a package's signer signed (keccak256 of them is the digest), in
 * the order of `pkg.dataPoints` (sorted by feed id bytes32 for a package read
 * from gateway JSON, as RedStone signs it; as found for one read from bytes).
 * @throws PriceStoreError `PRICE_INVALID_RECORD` when a value does not fit `valueByteSize`.
 */
export function serializeDataPackage(pkg: DataPackage): Uint8Array {
  const size = pkg.valueByteSize
  const parts: Uint8Array[] = []
  pkg.dataPoints.forEach((point, index) => {
    if (point.value < 0n || (point.value !== 0n && point.value.toString(16).length > size * 2)) {
      throw packageError(`dataPoints[${index}].value`, `does not fit ${size} bytes: ${point.value}`)
    }
    parts.push(Buffer.from(point.feedIdWord.slice(2), 'hex'), integerBytes(point.value, size))
  })
  parts.push(
    integerBytes(BigInt(pkg.timestampMilliseconds), PACKAGE_LAYOUT.timestamp),
    integerBytes(BigInt(size), PACKAGE_LAYOUT.valueByteSize),
    integerBytes(BigInt(pkg.dataPoints.length), PACKAGE_LAYOUT.pointsCount),
  )
  return new Uint8Array(Buffer.concat(parts))
}

/** The package as one package of an on-chain payload: the signed bytes with the signature (r ‖ s ‖ v) appended. */
export function serializeSignedDataPackage(pkg: DataPackage): Uint8Array {
  return new Uint8Array(Buffer.concat([serializeDataPackage(pkg), Buffer.from(pkg.signature.slice(2), 'hex')]))
}

/**
 * Reads one package of the on-chain payload form (`serializeSignedDataPackage`'s
 * bytes) back. The bytes must be exactly one package; feed ids come back as
 * text when their bytes32 is right-padded UTF-8, else as hex.
 * @throws PriceStoreError `PRICE_INVALID_RECORD` for bytes of another length than the counts say, no point, a value
 *   byte size over 2^16 (no RedStone package is that big), or one feed id twice.
 */
export function parseSerializedDataPackage(bytes: Uint8Array): DataPackage {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (data.length < TRAILER + PACKAGE_LAYOUT.signature) throw packageError('bytes', `are ${data.length} bytes, fewer than a package's ${TRAILER + PACKAGE_LAYOUT.signature} of trailer and signature`)
  const signatureAt = data.length - PACKAGE_LAYOUT.signature
  const count = data.readUIntBE(signatureAt - PACKAGE_LAYOUT.pointsCount, PACKAGE_LAYOUT.pointsCount)
  const valueByteSize = data.readUInt32BE(signatureAt - PACKAGE_LAYOUT.pointsCount - PACKAGE_LAYOUT.valueByteSize)
  const timestamp = data.readUIntBE(signatureAt - TRAILER, PACKAGE_LAYOUT.timestamp)
  if (count === 0) throw packageError('bytes', 'hold no data point (RedStone refuses empty packages)')
  if (valueByteSize > 2 ** 16) throw packageError('bytes', `say every value is ${valueByteSize} bytes`)
  const pointSize = PACKAGE_LAYOUT.feedId + valueByteSize
  if (count * pointSize !== signatureAt - TRAILER) {
    throw packageError('bytes', `are ${data.length} bytes, but ${count} points of ${pointSize} bytes, the trailer and the signature make ${count * pointSize + TRAILER + PACKAGE_LAYOUT.signature}`)
  }
  const points: DataPackagePoint[] = []
  const seen = new Set<string>()
  for (let index = 0; index < count; index++) {
    const at = index * pointSize
    const word = data.subarray(at, at + PACKAGE_LAYOUT.feedId)
    const feedIdWord = hexOf(word)
    if (seen.has(feedIdWord)) throw packageError('bytes', `hold feed id ${feedIdOfWord(word)} twice`)
    seen.add(feedIdWord)
    points.push({ dataFeedId: feedIdOfWord(word), feedIdWord, value: integerOf(data.subarray(at + PACKAGE_LAYOUT.feedId, at + pointSize)) })
  }
  return { dataPoints: points, timestampMilliseconds: timestamp, valueByteSize, signature: hexOf(data.subarray(signatureAt)) }
}
