/**
 * Reading a data package as RedStone's gateways serve it
 * (`/data-packages/latest/<service>`, one entry of a feed's array) into a
 * `DataPackage`, refusing what RedStone's own code could not have signed.
 * Numeric points (`value` a number) are scaled as @redstone-finance/protocol
 * scales them; bytes points carry `value` as base64.
 */
import { PriceStoreError, describeValue } from '../errors.js'
import { type DataPackage, type DataPackagePoint, PACKAGE_LAYOUT, feedIdWord, hexOf } from './data-package.js'
import { bytesNeeded, integerOf, scaledNumericValue } from './package-value.js'

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/

/** A package refused: `PRICE_INVALID_RECORD` naming the package field at fault. */
export function packageError(field: string, message: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_RECORD', `data package: \`${field}\` ${message}`, { details: { field } })
}

/**
 * Reads one data package of gateway JSON (an object, or its JSON text).
 * Unknown fields (`metadata`, `sources`, `isSignatureValid`, ...) are
 * ignored: no signature covers them.
 * @throws PriceStoreError `PRICE_INVALID_RECORD` (`details.field` names the field) for: a package that is not an
 *   object; no data point; a feed id RedStone cannot make a bytes32 of (over 31 bytes of UTF-8 in up to 31 characters),
 *   or an empty one (RedStone would sign it as 32 zero bytes, which names no feed);
 *   two points with the same feed id bytes32; a value that is neither a number nor base64, negative, not finite, or
 *   that does not fit its byte size; points of different byte sizes; `decimals`/`valueByteSize` out of range; a
 *   timestamp that is not a safe integer ≥ 0 (or past the 6 bytes it is signed in); a missing signature, or one that
 *   is not base64 of 65 bytes, or whose v is 2 to 26; a `signerAddress` that is not an address.
 */
export function parseDataPackage(json: unknown): DataPackage {
  const input = typeof json === 'string' ? parseText(json) : json
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw packageError('package', `is not an object: ${describeValue(input)}`)
  const pkg = input as Readonly<Record<string, unknown>>
  const timestamp = pkg['timestampMilliseconds']
  if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw packageError('timestampMilliseconds', `is not a safe integer ≥ 0: ${describeValue(timestamp)}`)
  }
  if (timestamp >= 2 ** (8 * PACKAGE_LAYOUT.timestamp)) throw packageError('timestampMilliseconds', `does not fit the ${PACKAGE_LAYOUT.timestamp} bytes it is signed in: ${timestamp}`)
  const signature = signatureOf(pkg['signature'])
  const rawPoints = pkg['dataPoints']
  if (!Array.isArray(rawPoints)) throw packageError('dataPoints', `is not an array: ${describeValue(rawPoints)}`)
  if (rawPoints.length === 0) throw packageError('dataPoints', 'is empty (RedStone refuses empty packages)')
  if (rawPoints.length >= 2 ** (8 * PACKAGE_LAYOUT.pointsCount)) throw packageError('dataPoints', `holds ${rawPoints.length} points, more than its count's 3 bytes hold`)
  const parsed = rawPoints.map((point: unknown, index) => pointOf(point, `dataPoints[${index}]`))
  const valueByteSize = parsed[0]?.byteSize ?? PACKAGE_LAYOUT.defaultNumericValue
  parsed.forEach(({ byteSize }, index) => {
    if (byteSize !== valueByteSize) throw packageError(`dataPoints[${index}].value`, `is ${byteSize} bytes, but the first point's is ${valueByteSize}: every value of a package has one byte size`)
  })
  // RedStone sorts the points by their bytes32 id before signing, and refuses two with the same one.
  const points = parsed.map(({ point }) => point).sort((a, b) => (a.feedIdWord < b.feedIdWord ? -1 : a.feedIdWord > b.feedIdWord ? 1 : 0))
  points.forEach((point, index) => {
    if (index > 0 && points[index - 1]?.feedIdWord === point.feedIdWord) throw packageError('dataPoints', `holds feed id ${describeValue(point.dataFeedId)} twice`)
  })
  return {
    dataPoints: points,
    timestampMilliseconds: timestamp,
    valueByteSize,
    signature,
    ...optionalText(pkg, 'dataPackageId'),
    ...optionalText(pkg, 'dataServiceId'),
    ...signerOf(pkg['signerAddress']),
  }
}

function parseText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch (cause) {
    throw new PriceStoreError('PRICE_INVALID_RECORD', `data package: not JSON: ${(cause as Error).message}`, { cause, details: { field: 'package' } })
  }
}

function signatureOf(field: unknown): string {
  if (field === undefined || field === null || field === '') throw packageError('signature', 'is missing')
  if (typeof field !== 'string' || !BASE64.test(field)) throw packageError('signature', `is not base64: ${describeValue(field)}`)
  const bytes = Buffer.from(field, 'base64')
  if (bytes.length !== PACKAGE_LAYOUT.signature) throw packageError('signature', `is ${bytes.length} bytes, not the 65 of r ‖ s ‖ v`)
  // As ethers splitSignature reads it when RedStone deserializes a package: a v of 0 or 1 is taken as 27 or 28 (and
  // serialized so), any other v under 27 is refused; a v over 28 passes here and makes the verdict `malformed`.
  const v = bytes[64] as number
  if (v === 0 || v === 1) bytes[64] = v + 27
  else if (v < 27) throw packageError('signature', `has v ${v} (27 or 28 expected; 0 and 1 are read as 27 and 28)`)
  return hexOf(bytes)
}

function pointOf(input: unknown, at: string): { point: DataPackagePoint; byteSize: number } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw packageError(at, `is not an object: ${describeValue(input)}`)
  const raw = input as Readonly<Record<string, unknown>>
  const feedId = raw['dataFeedId']
  if (typeof feedId !== 'string' || feedId === '') throw packageError(`${at}.dataFeedId`, `is not a non-empty string: ${describeValue(feedId)}`)
  const word = feedIdWord(feedId)
  if (typeof word === 'string') throw packageError(`${at}.dataFeedId`, `cannot be a bytes32 (${word}): ${describeValue(feedId)}`)
  const base = { dataFeedId: feedId, feedIdWord: hexOf(word) }
  const value = raw['value']
  if (typeof value === 'string') {
    // A bytes point: the value is signed as the bytes themselves.
    if (!BASE64.test(value)) throw packageError(`${at}.value`, `is neither a number nor base64: ${describeValue(value)}`)
    const bytes = Buffer.from(value, 'base64')
    return { point: { ...base, value: integerOf(bytes) }, byteSize: bytes.length }
  }
  if (typeof value !== 'number') throw packageError(`${at}.value`, `is neither a number nor base64: ${describeValue(value)}`)
  const decimals = raw['decimals'] ?? PACKAGE_LAYOUT.defaultDecimals
  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 100) {
    throw packageError(`${at}.decimals`, `is not an integer from 0 to 100: ${describeValue(decimals)}`)
  }
  const byteSize = raw['valueByteSize'] ?? PACKAGE_LAYOUT.defaultNumericValue
  if (typeof byteSize !== 'number' || !Number.isInteger(byteSize) || byteSize < 0 || byteSize > PACKAGE_LAYOUT.maxNumericValue) {
    throw packageError(`${at}.valueByteSize`, `is not an integer from 0 to 32: ${describeValue(byteSize)}`)
  }
  const scaled = scaledNumericValue(value, decimals)
  if (typeof scaled === 'string') throw packageError(`${at}.value`, `cannot be signed (${scaled}): ${describeValue(value)}`)
  if (bytesNeeded(scaled) > byteSize) throw packageError(`${at}.value`, `does not fit ${byteSize} bytes once scaled by 10^${decimals}: ${describeValue(value)}`)
  return { point: { ...base, value: scaled, decimals }, byteSize }
}

function optionalText(pkg: Readonly<Record<string, unknown>>, field: 'dataPackageId' | 'dataServiceId'): { [K in typeof field]?: string } {
  const value = pkg[field]
  if (value === undefined || value === null) return {}
  if (typeof value !== 'string') throw packageError(field, `is not a string: ${describeValue(value)}`)
  return { [field]: value }
}

function signerOf(value: unknown): { signerAddress?: string } {
  if (value === undefined || value === null) return {}
  if (typeof value !== 'string' || !ADDRESS.test(value)) throw packageError('signerAddress', `is not an EVM address: ${describeValue(value)}`)
  return { signerAddress: value.toLowerCase() }
}
