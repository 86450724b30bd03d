/**
 * Heads entries as older formats wrote them, made from an entry written
 * now, for the tests that rewrite a database into an older format.
 */
import { ByteReader } from '../../src/keys/bytes.js'
import { readHeads } from '../../src/keys/heads-codec.js'

/**
 * `bytes` (a heads entry written now) as version 6 (format 6: no delta
 * keys), version 4 (formats 4 and 5: no page table either) or version 3
 * (format 3: no delta count either; the entry must have no delta part)
 * wrote it.
 */
export function olderHeads(bytes: Buffer, version: 3 | 4 | 6): Buffer {
  let headsEnd: number | undefined
  const { deltaKeys } = readHeads(bytes, 0, (_timestamp, _idStart, _idEnd, _valueStart, valueEnd) => {
    headsEnd = valueEnd
  })
  if (version === 6) {
    // The delta keys are last: their varint length, then their bytes (a length of 0, one byte, when there are none).
    const keysStart = deltaKeys === undefined ? bytes.length : deltaKeys.byteOffset - bytes.byteOffset
    const lengthBytes = deltaKeys === undefined ? 1 : varintBytes(deltaKeys.length)
    return Buffer.concat([Buffer.from([6]), bytes.subarray(1, keysStart - lengthBytes)])
  }
  const reader = new ByteReader(bytes)
  reader.byte()
  reader.varint()
  const afterCount = reader.offset
  const deltas = reader.varint()
  const afterDeltas = reader.offset
  // With no head, the heads end after the head count's byte.
  const end = headsEnd ?? afterDeltas + 1
  if (version === 4) return Buffer.concat([Buffer.from([4]), bytes.subarray(1, end)])
  if (deltas !== 0) throw new Error('a format 3 heads entry cannot count delta parts')
  return Buffer.concat([Buffer.from([3]), bytes.subarray(1, afterCount), bytes.subarray(afterDeltas, end)])
}

/** How many bytes the varint of `value` takes (7 bits a byte). */
function varintBytes(value: number): number {
  let bytes = 1
  for (let rest = Math.floor(value / 128); rest > 0; rest = Math.floor(rest / 128)) bytes++
  return bytes
}
