import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ByteWriter } from '../../src/keys/bytes.js'
import type { ChunkRecord } from '../../src/keys/chunk-codec.js'
import { encodeHeads, readHeads } from '../../src/keys/heads-codec.js'
import { HEAD_MS, HEADS_PER_PERIOD, MAX_DELTA_PARTS, PERIOD_MS } from '../../src/keys/key-layout.js'
import { idArb } from '../../src/testing/record-arbitraries.js'
import { OTHER_VERSIONS, expectEveryCutMalformed, expectMalformed, expectOnlyMalformed, withVersion } from './codec-helpers.js'

/** An hour boundary (UTC). */
const H = 1_699_999_200_000

interface Read {
  readonly timestamp: number
  readonly id: string
  readonly value: Buffer
}

function read(bytes: Buffer, periodStart = H): { count: number; deltas: number; heads: Read[] } {
  const heads: Read[] = []
  const { records: count, deltas } = readHeads(bytes, periodStart, (timestamp, idStart, idEnd, valueStart, valueEnd) => {
    heads.push({ timestamp, id: bytes.toString('utf8', idStart, idEnd), value: Buffer.from(bytes.subarray(valueStart, valueEnd)) })
  })
  return { count, deltas, heads }
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
  it('round-trip the heads (ids as UTF-8 text, values as bytes), the chunk\'s record count and delta count (property)', () => {
    fc.assert(
      fc.property(headsArb, fc.oneof(fc.nat(10_000), fc.maxSafeNat()), fc.nat(MAX_DELTA_PARTS), (heads, count, deltas) => {
        const bytes = encodeHeads(H, { records: count, deltas }, heads.map((h) => head(h.timestamp, h.id, h.value)))
        expect(read(bytes)).toEqual({ count, deltas, heads: heads.map((h) => ({ timestamp: h.timestamp, id: h.id, value: Buffer.from(h.value) })) })
      }),
      { numRuns: 300 },
    )
  })

  it('has the documented layout: version 4 | count | delta count | head count | (offset | id | value)*', () => {
    const bytes = encodeHeads(H, { records: 300, deltas: 2 }, [head(H + 599_999, 'é', Buffer.from([7])), head(H + PERIOD_MS - 1, 'z', Buffer.alloc(0))])
    const expectedBytes = new ByteWriter().byte(4).varint(300).varint(2).byte(2)
      .varint(599_999).text('é').sized(Buffer.from([7]))
      .varint(PERIOD_MS - 1).text('z').sized(Buffer.alloc(0))
      .finish()
    expect(bytes).toEqual(expectedBytes)
  })

  it('a chunk with no heads still records its count', () => {
    expect(read(encodeHeads(H, { records: 0, deltas: 0 }, []))).toEqual({ count: 0, deltas: 0, heads: [] })
  })

  it('reads a format 3 entry (version 3, no delta count) as a chunk without delta parts', () => {
    const v3 = new ByteWriter().byte(3).varint(300).byte(1).varint(599_999).text('é').sized(Buffer.from([7])).finish()
    expect(read(v3)).toEqual({ count: 300, deltas: 0, heads: [{ timestamp: H + 599_999, id: 'é', value: Buffer.from([7]) }] })
  })

  it(`more than ${MAX_DELTA_PARTS} delta parts is MalformedBytes`, () => {
    expectMalformed(() => read(new ByteWriter().byte(4).varint(3).varint(MAX_DELTA_PARTS + 1).byte(0).finish()), 'too many deltas')
  })

  it(`more than ${HEADS_PER_PERIOD} heads is MalformedBytes`, () => {
    const seven = new ByteWriter().byte(4).varint(7).varint(0).byte(HEADS_PER_PERIOD + 1)
    for (let i = 0; i <= HEADS_PER_PERIOD; i++) seven.varint(i).text(`id${i}`).sized(Buffer.from([i]))
    expectMalformed(() => read(seven.finish()), 'seven heads')
  })

  it('a version other than 3 or 4, every truncation, and trailing bytes are MalformedBytes', () => {
    const good = encodeHeads(H, { records: 12, deltas: 1 }, [head(H + 5, 'a', Buffer.from('one')), head(H + HEAD_MS, 'b', Buffer.from('two'))])
    for (const version of OTHER_VERSIONS.filter((v) => v !== 4)) expectMalformed(() => read(withVersion(good, version)), `version ${version}`)
    expectEveryCutMalformed(good, read)
    expectMalformed(() => read(Buffer.concat([good, Buffer.from([0])])), 'one byte more')
  })

  it('random bytes: heads or MalformedBytes, never another error (property)', () => {
    const bytes = fc
      .tuple(fc.uint8Array({ maxLength: 60 }), fc.boolean())
      .map(([tail, versioned]) => Buffer.concat([Buffer.from(versioned ? [4] : []), tail]))
    expectOnlyMalformed(bytes, read, 500)
  })
})
