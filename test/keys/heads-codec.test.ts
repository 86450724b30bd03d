import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ByteWriter } from '../../src/keys/bytes.js'
import { encodeChunkPart, parseChunkPart, type ChunkRecord } from '../../src/keys/chunk-codec.js'
import { KEY_COLUMN_VERSION } from '../../src/keys/format-version.js'
import { MAX_DELTA_KEYS, MAX_TABLE_PAGES, encodeHeads, readHeads } from '../../src/keys/heads-codec.js'
import { idTag } from '../../src/rules/id-tag.js'
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
  return withPages(bytes, periodStart).entry
}

/** The entry as read, and its page table as plain arrays. */
function withPages(bytes: Buffer, periodStart = H): { entry: { count: number; deltas: number; heads: Read[] }; pages: { timestamps: number[]; idTags: number[]; records: number } } {
  const heads: Read[] = []
  const { records: count, deltas, pageStarts } = readHeads(bytes, periodStart, (timestamp, idStart, idEnd, valueStart, valueEnd) => {
    heads.push({ timestamp, id: bytes.toString('utf8', idStart, idEnd), value: Buffer.from(bytes.subarray(valueStart, valueEnd)) })
  })
  return { entry: { count, deltas, heads }, pages: { timestamps: [...pageStarts.timestamps], idTags: [...pageStarts.idTags], records: pageStarts.records } }
}

/** FNV-1a over UTF-16 code units, written out from its definition. */
function fnv1a(id: string): number {
  let hash = 2166136261n
  for (const unit of Array.from({ length: id.length }, (_, i) => id.charCodeAt(i))) hash = ((hash ^ BigInt(unit)) * 16777619n) % 2n ** 32n
  return Number(hash)
}

const head = (timestamp: number, id: string, value: Uint8Array): ChunkRecord => ({ timestamp, idBytes: Buffer.from(id, 'utf8'), value })

/** A stored value's 9-byte header for `value` (flags 0, then the float64, little-endian), as a key column keeps it. */
function valueHeader(value: number): Buffer {
  const header = Buffer.alloc(9)
  header.writeDoubleLE(value, 1)
  return header
}

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

  it('has the documented layout: version 7 | count | delta count | head count | (offset | id | value)* | page count | base count | (offset | id tag)* | delta keys', () => {
    const heads = [head(H + 599_999, 'é', Buffer.from([7])), head(H + PERIOD_MS - 1, 'z', Buffer.alloc(0))]
    const pages = { timestamps: Float64Array.of(H + 3, H + 599_999), idTags: Uint32Array.of(idTag('a'), idTag('é')), records: 290 }
    const deltaKeys = Buffer.from([KEY_COLUMN_VERSION, 0, 2, 1, 25, 2, 0x61, 0])
    const layout = (keys: Uint8Array) => new ByteWriter().byte(7).varint(300).varint(2).byte(2)
      .varint(599_999).text('é').sized(Buffer.from([7]))
      .varint(PERIOD_MS - 1).text('z').sized(Buffer.alloc(0))
      .varint(2).varint(290).varint(3).varint(fnv1a('a')).varint(599_999).varint(fnv1a('é'))
      .sized(keys)
      .finish()
    const bytes = encodeHeads(H, { records: 300, deltas: 2 }, heads, pages)
    expect(bytes).toEqual(layout(Buffer.alloc(0)))
    expect(withPages(bytes).pages).toEqual({ timestamps: [H + 3, H + 599_999], idTags: [fnv1a('a'), fnv1a('é')], records: 290 })
    expect(readHeads(bytes, H, () => {}).deltaKeys).toBeUndefined()
    // Delta keys: a key column (version 5) whose part count is the delta count: here one record, 25 ms in, id "a", an empty value.
    expect([...parseChunkPart(deltaKeys, H).timestamps]).toEqual([H + 25])
    const withKeys = encodeHeads(H, { records: 300, deltas: 2 }, heads, pages, deltaKeys)
    expect(withKeys).toEqual(layout(deltaKeys))
    expect(readHeads(withKeys, H, () => {}).deltaKeys).toEqual(deltaKeys)
  })

  it('round-trip the delta keys: a key column of up to MAX_DELTA_KEYS records whose part count is the delta count (property)', () => {
    const keysArb = fc.uniqueArray(fc.record({ offset: fc.nat(PERIOD_MS - 1), id: fc.oneof(idArb, fc.uuid()), value: fc.double({ noNaN: true }) }), {
      minLength: 1, maxLength: 40, selector: (key) => `${key.offset}|${key.id}`,
    })
    fc.assert(fc.property(keysArb, fc.integer({ min: 1, max: MAX_DELTA_PARTS }), (keys, deltas) => {
      keys.sort((a, b) => a.offset - b.offset || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      const records = keys.map((key) => head(H + key.offset, key.id, valueHeader(key.value)))
      const column = encodeChunkPart(H, deltas, records, KEY_COLUMN_VERSION)
      const last = head(H + PERIOD_MS - 1, 'last', Buffer.alloc(0))
      const read = readHeads(encodeHeads(H, { records: 1000, deltas }, [last], undefined, column), H, () => {}).deltaKeys as Buffer
      const parsed = parseChunkPart(read, H)
      expect([...parsed.timestamps]).toEqual(keys.map((key) => H + key.offset))
      expect([...(parsed.values as Float64Array)]).toEqual(keys.map((key) => key.value))
    }), { numRuns: 200 })
  })

  it('delta keys without a delta part, of another version, of another delta count, empty, over MAX_DELTA_KEYS or over the record count are MalformedBytes', () => {
    const last = head(H + PERIOD_MS - 1, 'last', Buffer.alloc(0))
    const keysOf = (count: number, parts: number, version = KEY_COLUMN_VERSION) =>
      encodeChunkPart(H, parts, Array.from({ length: count }, (_, i) => head(H + i, `d${i}`, valueHeader(i))), version)
    const entry = (deltas: number, keys: Uint8Array, records = 1000) => encodeHeads(H, { records, deltas }, [last], undefined, keys)
    expect(readHeads(entry(2, keysOf(3, 2)), H, () => {}).deltaKeys?.length).toBeGreaterThan(0)
    expect(readHeads(entry(1, keysOf(MAX_DELTA_KEYS, 1)), H, () => {}).deltaKeys).toBeDefined()
    expectMalformed(() => read(entry(0, keysOf(3, 0))), 'delta keys without a delta part')
    expectMalformed(() => read(entry(2, keysOf(3, 2, 3))), 'delta keys that are a chunk part, not a key column')
    expectMalformed(() => read(entry(2, keysOf(3, 1))), 'delta keys of one delta part in an entry of two')
    expectMalformed(() => read(entry(2, keysOf(0, 2))), 'delta keys of no record')
    expectMalformed(() => read(entry(1, keysOf(MAX_DELTA_KEYS + 1, 1), 10_000)), 'more delta keys than an entry keeps')
    expectMalformed(() => read(entry(1, keysOf(3, 1), 2)), 'more delta keys than the chunk has records')
  })

  it('the id tag is FNV-1a over UTF-16 code units (property, against the definition in big integers)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (id) => {
      expect(idTag(id)).toBe(fnv1a(id))
    }), { numRuns: 500 })
  })

  it('round-trip the page table: each page\'s first timestamp and id tag (property); none past MAX_TABLE_PAGES', () => {
    const last = head(H + PERIOD_MS - 1, 'last', Buffer.alloc(0))
    const firstsArb = fc.array(fc.record({ offset: fc.nat(PERIOD_MS - 1), id: fc.oneof(idArb, fc.uuid()) }), { minLength: 1, maxLength: 40 })
      .map((firsts) => firsts.sort((a, b) => a.offset - b.offset))
    fc.assert(fc.property(firstsArb, (firsts) => {
      const table = { timestamps: Float64Array.from(firsts, (f) => H + f.offset), idTags: Uint32Array.from(firsts, (f) => idTag(f.id)), records: 5000 }
      const bytes = encodeHeads(H, { records: 5000, deltas: 0 }, [last], table)
      expect(withPages(bytes).pages).toEqual({ timestamps: firsts.map((f) => H + f.offset), idTags: firsts.map((f) => fnv1a(f.id)), records: 5000 })
    }), { numRuns: 200 })
    const many = (pages: number) => ({ timestamps: Float64Array.from({ length: pages }, (_, page) => H + page), idTags: new Uint32Array(pages), records: 100_000 })
    expect(withPages(encodeHeads(H, { records: 100_000, deltas: 0 }, [last], many(MAX_TABLE_PAGES + 1))).pages).toEqual({ timestamps: [], idTags: [], records: 0 })
    expect(withPages(encodeHeads(H, { records: 100_000, deltas: 0 }, [last], many(MAX_TABLE_PAGES))).pages.timestamps).toHaveLength(MAX_TABLE_PAGES)
  })

  it('a page table too long, out of order, past the period, with a tag over 32 bits, or that cannot place the records is MalformedBytes', () => {
    const entry = (table: (writer: ByteWriter) => ByteWriter, records = 9, deltas = 0, heads = 1) => {
      const writer = new ByteWriter().byte(7).varint(records).varint(deltas).byte(heads)
      for (let i = 0; i < heads; i++) writer.varint(PERIOD_MS - 1 - i).text('z').sized(Buffer.alloc(0))
      // No delta keys (length 0) after the table.
      return table(writer).varint(0).finish()
    }
    expectMalformed(() => read(entry((w) => w.varint(MAX_TABLE_PAGES + 1))), 'too many pages')
    expectMalformed(() => read(entry((w) => w.varint(2).varint(9).varint(10).varint(1).varint(9).varint(1))), 'out of order')
    expectMalformed(() => read(entry((w) => w.varint(1).varint(9).varint(PERIOD_MS).varint(1))), 'past the period')
    expectMalformed(() => read(entry((w) => w.varint(1).varint(9).varint(0).varint(2 ** 32))), 'a 33-bit tag')
    expect(withPages(entry((w) => w.varint(2).varint(9).varint(9).varint(1).varint(9).varint(2))).pages.timestamps).toEqual([H + 9, H + 9])
    // Pages of ceil(base / pages) base records, none empty, at least one head; without delta parts the base is every record, with them at most.
    const two = (base: number) => (w: ByteWriter) => w.varint(2).varint(base).varint(1).varint(1).varint(2).varint(2)
    expect(withPages(entry(two(2), 2)).pages).toEqual({ timestamps: [H + 1, H + 2], idTags: [1, 2], records: 2 })
    expectMalformed(() => read(entry(two(1), 1)), 'two pages for one record')
    expectMalformed(() => read(entry(two(0), 0)), 'two pages for no record')
    expectMalformed(() => read(entry((w) => w.varint(3).varint(4).varint(1).varint(1).varint(2).varint(2).varint(3).varint(3), 4)), 'three pages of two for four records: the last empty')
    expectMalformed(() => read(entry(two(2), 3)), 'no delta part, and a base of 2 of 3 records')
    expect(withPages(entry(two(2), 9, 1)).pages.records).toBe(2)
    expectMalformed(() => read(entry(two(10), 9, 1)), 'a base of more records than the chunk has')
    expectMalformed(() => read(entry(two(9), 9, 0, 0)), 'a table with no head')
  })

  it('a chunk with no heads still records its count', () => {
    expect(read(encodeHeads(H, { records: 0, deltas: 0 }, []))).toEqual({ count: 0, deltas: 0, heads: [] })
  })

  it(`more than ${MAX_DELTA_PARTS} delta parts is MalformedBytes`, () => {
    expectMalformed(() => read(new ByteWriter().byte(7).varint(3).varint(MAX_DELTA_PARTS + 1).byte(0).varint(0).finish()), 'too many deltas')
  })

  it(`more than ${HEADS_PER_PERIOD} heads is MalformedBytes`, () => {
    const seven = new ByteWriter().byte(7).varint(7).varint(0).byte(HEADS_PER_PERIOD + 1)
    for (let i = 0; i <= HEADS_PER_PERIOD; i++) seven.varint(i).text(`id${i}`).sized(Buffer.from([i]))
    expectMalformed(() => read(seven.finish()), 'seven heads')
  })

  it('a version other than 7, every truncation, and trailing bytes are MalformedBytes', () => {
    const heads = [head(H + 5, 'a', Buffer.from('one')), head(H + HEAD_MS, 'b', Buffer.from('two'))]
    const deltaKeys = encodeChunkPart(H, 1, [head(H + 7, 'late', valueHeader(2.5))], KEY_COLUMN_VERSION)
    const pages = { timestamps: Float64Array.of(H + 5, H + HEAD_MS), idTags: Uint32Array.of(1, 2 ** 32 - 1), records: 11 }
    const good = encodeHeads(H, { records: 12, deltas: 1 }, heads, pages, deltaKeys)
    for (const version of [...OTHER_VERSIONS, 3, 5, 6, 8]) expectMalformed(() => read(withVersion(good, version)), `version ${version}`)
    expectEveryCutMalformed(good, read)
    expectMalformed(() => read(Buffer.concat([good, Buffer.from([0])])), 'one byte more')
  })

  it('random bytes: heads or MalformedBytes, never another error (property)', () => {
    const bytes = fc
      .tuple(fc.uint8Array({ maxLength: 60 }), fc.boolean())
      .map(([tail, versioned]) => Buffer.concat([Buffer.from(versioned ? [7] : []), tail]))
    expectOnlyMalformed(bytes, read, 500)
  })
})
