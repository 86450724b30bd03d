import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ByteWriter } from '../../src/keys/bytes.js'
import { MAX_PART_RECORDS, encodeChunkPart, readChunkPart, readCompactId, readPartCount } from '../../src/keys/chunk-codec.js'
import type { ChunkRecord } from '../../src/keys/chunk-codec.js'
import { PERIOD_MS } from '../../src/keys/key-layout.js'
import { VALUE_VERSION } from '../../src/keys/format-version.js'
import { idArb } from '../../src/testing/record-arbitraries.js'
import { compareUtf8 as byUtf8 } from '../../src/testing/reference-model.js'
import { OTHER_VERSIONS, expectEveryCutMalformed, expectMalformed, expectOnlyMalformed, withVersion } from './codec-helpers.js'

/** An hour boundary (UTC). */
const H = 1_699_999_200_000

interface Input {
  readonly timestamp: number
  readonly id: string
  readonly value: Uint8Array
}

interface Read {
  readonly timestamp: number
  readonly id: string
  readonly compact: boolean
  readonly idLength: number
  readonly value: Buffer
}

const toChunk = (r: Input): ChunkRecord => ({ timestamp: r.timestamp, idBytes: Buffer.from(r.id, 'utf8'), value: r.value })

function encode(records: readonly Input[], partCount = 1, periodStart = H): Buffer {
  return encodeChunkPart(periodStart, partCount, records.map(toChunk))
}

function read(bytes: Buffer, periodStart = H): Read[] {
  const out: Read[] = []
  readChunkPart(bytes, periodStart, (timestamp, idStart, idEnd, compact, valueStart, valueEnd) => {
    out.push({
      timestamp,
      id: compact ? readCompactId(bytes, idStart) : bytes.toString('utf8', idStart, idEnd),
      compact,
      idLength: idEnd - idStart,
      value: Buffer.from(bytes.subarray(valueStart, valueEnd)),
    })
  })
  return out
}

const LOWER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const hex = (length: number, upper: boolean) =>
  fc.string({ unit: fc.constantFrom(...(upper ? '0123456789ABCDEF' : '0123456789abcdef')), minLength: length, maxLength: length })
/** UUID-shaped ids: lowercase (compacted), uppercase or mixed (kept as text). */
const uuidArb = fc.boolean().chain((upper) =>
  fc.tuple(hex(8, upper), hex(4, upper), hex(4, upper), hex(4, upper), hex(12, upper)).map((parts) => parts.join('-')))
const chunkIdArb = fc.oneof(idArb, fc.uuid(), uuidArb, fc.uuid().map((u) => u.toUpperCase()), fc.constant('x'.repeat(36)))

/** Records of one period, sorted by (timestamp, id bytes), no (timestamp, id) twice. */
function recordsArb(maxLength: number): fc.Arbitrary<Input[]> {
  const timestamp = fc.oneof(
    fc.constantFrom(H, H + 1, H + 127, H + 128, H + PERIOD_MS - 1),
    fc.integer({ min: H, max: H + PERIOD_MS - 1 }),
  )
  return fc
    .uniqueArray(fc.record({ timestamp, id: chunkIdArb, value: fc.uint8Array({ maxLength: 200 }) }), {
      maxLength,
      selector: (r) => `${r.timestamp}\u0000${r.id}`,
    })
    .map((records) => records.sort((a, b) => a.timestamp - b.timestamp || byUtf8(a.id, b.id)))
}

describe('chunk parts: round trip', () => {
  it('any sorted records come back in order: timestamps, ids as the same text, value bytes (property)', () => {
    fc.assert(
      fc.property(recordsArb(40), fc.integer({ min: 1, max: 0xffff }), (records, parts) => {
        const bytes = encode(records, parts)
        expect(readPartCount(bytes)).toBe(parts)
        const back = read(bytes)
        expect(back.map(({ timestamp, id }) => ({ timestamp, id }))).toEqual(records.map(({ timestamp, id }) => ({ timestamp, id })))
        back.forEach((r, i) => {
          expect(r.value).toEqual(Buffer.from((records[i] as Input).value))
          // Lowercase canonical UUIDs, and only they, take the 16-byte form.
          expect(r.compact).toBe(LOWER_UUID.test(r.id))
          expect(r.idLength).toBe(r.compact ? 16 : Buffer.byteLength(r.id, 'utf8'))
        })
      }),
      { numRuns: 300 },
    )
  })

  it('a lowercase UUID id is stored as 16 bytes and read back as the same lowercase text', () => {
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e'
    const bytes = encode([{ timestamp: H + 5, id, value: Buffer.from([1, 2]) }])
    const [back] = read(bytes)
    expect(back).toMatchObject({ id, compact: true, idLength: 16, timestamp: H + 5 })
    // The 16 bytes are the UUID's hex digits, in order.
    expect(bytes.includes(Buffer.from(id.replaceAll('-', ''), 'hex'))).toBe(true)
    expect(bytes.includes(Buffer.from(id, 'utf8'))).toBe(false)
    const asText = encode([{ timestamp: H + 5, id: 'x'.repeat(36), value: Buffer.from([1, 2]) }])
    expect(asText.length - bytes.length).toBe(20)
  })

  it.each([
    ['uppercase', '0F8FAD5B-D9CB-469F-A165-70867728950E'],
    ['mixed case', '0f8fad5b-D9CB-469f-a165-70867728950e'],
    ['no dashes (32 characters)', '0f8fad5bd9cb469fa16570867728950e'],
    ['dashes misplaced', '0f8fad5bd-9cb-469f-a165-70867728950e'],
    ['a non-hex digit', '0f8fad5b-d9cb-469f-a165-70867728950g'],
    ['braces', '{0f8fad5b-d9cb-469f-a165-70867728950}'],
    ['36 non-ASCII bytes', 'é'.repeat(18)],
    ['a trailing newline', '0f8fad5b-d9cb-469f-a165-70867728950\n'],
  ])('a UUID-like id (%s) is kept as text, unchanged', (_name, id) => {
    const [back] = read(encode([{ timestamp: H, id, value: Buffer.alloc(0) }]))
    expect(back).toMatchObject({ id, compact: false, idLength: Buffer.byteLength(id, 'utf8') })
  })

  it('ids that differ only in case both come back, in UTF-8 order', () => {
    const lower = '0f8fad5b-d9cb-469f-a165-70867728950e'
    const upper = lower.toUpperCase()
    const records = [upper, lower].sort(byUtf8).map((id) => ({ timestamp: H + 1, id, value: Buffer.from(id) }))
    expect(read(encode(records)).map((r) => [r.id, r.value.toString()])).toEqual(records.map((r) => [r.id, r.id]))
  })

  it('timestamps are offsets from the period start: both edges of the hour, and a different period start', () => {
    const records = [H, H + 1, H + PERIOD_MS - 1].map((timestamp, i) => ({ timestamp, id: `r${i}`, value: Buffer.from([i]) }))
    expect(read(encode(records)).map((r) => r.timestamp)).toEqual([H, H + 1, H + PERIOD_MS - 1])
    const far = 2_501_999_792 * PERIOD_MS
    expect(read(encode([{ timestamp: Number.MAX_SAFE_INTEGER, id: 'max', value: Buffer.alloc(1) }], 1, far), far).map((r) => r.timestamp))
      .toEqual([Number.MAX_SAFE_INTEGER])
  })

  it('an empty part, and empty values, are valid', () => {
    expect(read(encode([]))).toEqual([])
    expect(read(encode([{ timestamp: H, id: 'a', value: Buffer.alloc(0) }, { timestamp: H, id: 'b', value: Buffer.alloc(0) }])).map((r) => r.id))
      .toEqual(['a', 'b'])
  })

  it('starts with the format version and the part count', () => {
    const bytes = encode([{ timestamp: H, id: 'a', value: Buffer.from([9]) }], 3)
    expect(bytes[0]).toBe(VALUE_VERSION)
    expect(bytes.readUInt16BE(1)).toBe(3)
    expect(readPartCount(bytes)).toBe(3)
  })

  it(`holds up to MAX_PART_RECORDS (${MAX_PART_RECORDS}) records; a part claiming more is MalformedBytes`, () => {
    const many = Array.from({ length: MAX_PART_RECORDS + 1 }, (_, i) => ({ timestamp: H + i, id: `id-${i}`, value: Buffer.from([i & 0xff]) }))
    const full = read(encode(many.slice(0, MAX_PART_RECORDS)))
    expect(full.length).toBe(MAX_PART_RECORDS)
    expect(full.at(-1)).toMatchObject({ timestamp: H + MAX_PART_RECORDS - 1, id: `id-${MAX_PART_RECORDS - 1}` })
    expectMalformed(() => read(encode(many)), 'one record too many')
    // A count past the bound is refused before anything is allocated for it.
    expectMalformed(() => read(new ByteWriter().byte(VALUE_VERSION).uint16(1).varint(2 ** 40).finish()), 'a huge count')
  })
})

describe('chunk parts: damaged bytes → MalformedBytes', () => {
  const records: Input[] = [
    { timestamp: H + 1_000, id: '0f8fad5b-d9cb-469f-a165-70867728950e', value: Buffer.from('first value') },
    { timestamp: H + 1_000, id: 'text-id', value: Buffer.from('second') },
    { timestamp: H + 600_000, id: 'é\u{1F600}', value: Buffer.from('third, a little longer') },
  ]
  const good = encode(records, 2)

  it('every truncation of a part', () => {
    expectEveryCutMalformed(good, read)
    for (let cut = 0; cut < 3; cut++) expectMalformed(() => readPartCount(good.subarray(0, cut)), `part count, cut at ${cut}`)
  })

  it('trailing bytes after the last record', () => {
    expectMalformed(() => read(Buffer.concat([good, Buffer.from([0])])), 'one byte more')
  })

  it.each(OTHER_VERSIONS)('a version byte other than 3 (%i)', (version) => {
    const damaged = withVersion(good, version)
    expectMalformed(() => read(damaged), 'readChunkPart')
    expectMalformed(() => readPartCount(damaged), 'readPartCount')
  })

  it('a value length running past the part', () => {
    // Rebuilt from the documented layout: one record whose value claims 100 bytes and has 3.
    const bytes = new ByteWriter().byte(VALUE_VERSION).uint16(1).varint(1).varint(0).varint(2).bytes(Buffer.from('a')).varint(100).bytes(Buffer.from('abc')).finish()
    expectMalformed(() => read(bytes), 'value past the end')
  })

  it('an id length running past the part', () => {
    const bytes = new ByteWriter().byte(VALUE_VERSION).uint16(1).varint(1).varint(0).varint(200).bytes(Buffer.from('abc')).finish()
    expectMalformed(() => read(bytes), 'id past the end')
  })

  it('any byte changed, or random bytes: MalformedBytes or records, never another error or a hang (property)', () => {
    const damaged = fc.oneof(
      fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b)),
      fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })).map(([at, byte]) => {
        const copy = Buffer.from(good)
        copy[at] = byte
        return copy
      }),
      fc.uint8Array({ maxLength: 40 }).map((tail) => Buffer.concat([Buffer.from([VALUE_VERSION, 0, 1]), tail])),
    )
    expectOnlyMalformed(damaged, read, 1000)
  })
})
