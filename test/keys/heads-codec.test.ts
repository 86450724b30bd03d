import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ByteWriter } from '../../src/keys/bytes.js'
import type { ChunkRecord } from '../../src/keys/chunk-codec.js'
import { encodeHeads, readHeads } from '../../src/keys/heads-codec.js'
import { HEAD_MS, HEADS_PER_PERIOD, PERIOD_MS } from '../../src/keys/key-layout.js'
import { STORE_FORMAT } from '../../src/keys/format-version.js'
import { idArb } from '../../src/testing/record-arbitraries.js'
import { OTHER_VERSIONS, expectEveryCutMalformed, expectMalformed, expectOnlyMalformed, withVersion } from './codec-helpers.js'

/** An hour boundary (UTC). */
const H = 1_699_999_200_000

interface Read {
  readonly timestamp: number
  readonly id: string
  readonly value: Buffer
}

function read(bytes: Buffer, periodStart = H): { count: number; heads: Read[] } {
  const heads: Read[] = []
  const count = readHeads(bytes, periodStart, (timestamp, idStart, idEnd, valueStart, valueEnd) => {
    heads.push({ timestamp, id: bytes.toString('utf8', idStart, idEnd), value: Buffer.from(bytes.subarray(valueStart, valueEnd)) })
  })
  return { count, heads }
}

const head = (timestamp: number, id: string, value: Uint8Array): ChunkRecord => ({ timestamp, idBytes: Buffer.from(id, 'utf8'), value })

/** At most one head per ten-minute bucket of the period, ascending. */
const headsArb = fc
  .subarray([0, 1, 2, 3, 4, 5])
  .chain((buckets) =>
    fc.tuple(...buckets.map((bucket) =>
      fc.record({
        timestamp: fc.integer({ min: H + bucket * HEAD_MS, max: H + (bucket + 1) * HEAD_MS - 1 }),
        id: fc.oneof(idArb, fc.uuid()),
        value: fc.uint8Array({ maxLength: 200 }),
      }))))

describe('heads entries', () => {
  it('round-trip the heads (ids as UTF-8 text, values as bytes) and the chunk\'s record count (property)', () => {
    fc.assert(
      fc.property(headsArb, fc.oneof(fc.nat(10_000), fc.maxSafeNat()), (heads, count) => {
        const bytes = encodeHeads(H, count, heads.map((h) => head(h.timestamp, h.id, h.value)))
        expect(read(bytes)).toEqual({ count, heads: heads.map((h) => ({ timestamp: h.timestamp, id: h.id, value: Buffer.from(h.value) })) })
      }),
      { numRuns: 300 },
    )
  })

  it('has the documented layout: version | count | head count | (offset | id | value)*', () => {
    const bytes = encodeHeads(H, 300, [head(H + 599_999, 'é', Buffer.from([7])), head(H + PERIOD_MS - 1, 'z', Buffer.alloc(0))])
    const expectedBytes = new ByteWriter().byte(STORE_FORMAT).varint(300).byte(2)
      .varint(599_999).text('é').sized(Buffer.from([7]))
      .varint(PERIOD_MS - 1).text('z').sized(Buffer.alloc(0))
      .finish()
    expect(bytes).toEqual(expectedBytes)
  })

  it('a chunk with no heads still records its count', () => {
    expect(read(encodeHeads(H, 0, []))).toEqual({ count: 0, heads: [] })
  })

  it(`more than ${HEADS_PER_PERIOD} heads is MalformedBytes`, () => {
    const seven = new ByteWriter().byte(STORE_FORMAT).varint(7).byte(HEADS_PER_PERIOD + 1)
    for (let i = 0; i <= HEADS_PER_PERIOD; i++) seven.varint(i).text(`id${i}`).sized(Buffer.from([i]))
    expectMalformed(() => read(seven.finish()), 'seven heads')
  })

  it('a version other than 3, every truncation, and trailing bytes are MalformedBytes', () => {
    const good = encodeHeads(H, 12, [head(H + 5, 'a', Buffer.from('one')), head(H + HEAD_MS, 'b', Buffer.from('two'))])
    for (const version of OTHER_VERSIONS) expectMalformed(() => read(withVersion(good, version)), `version ${version}`)
    expectEveryCutMalformed(good, read)
    expectMalformed(() => read(Buffer.concat([good, Buffer.from([0])])), 'one byte more')
  })

  it('random bytes: heads or MalformedBytes, never another error (property)', () => {
    const bytes = fc
      .tuple(fc.uint8Array({ maxLength: 60 }), fc.boolean())
      .map(([tail, versioned]) => Buffer.concat([Buffer.from(versioned ? [STORE_FORMAT] : []), tail]))
    expectOnlyMalformed(bytes, read, 500)
  })
})
