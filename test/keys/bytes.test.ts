import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ByteReader, ByteWriter, MalformedBytes, asBuffer, readUint64, writeUint64 } from '../../src/keys/bytes.js'

const MAX = Number.MAX_SAFE_INTEGER

/** Varints around every 7-bit boundary, up to 2^53 - 1. */
const VARINT_EDGES = [0, 1, 127, 128, 255, 16_383, 16_384, 2 ** 21 - 1, 2 ** 21, 2 ** 28 - 1, 2 ** 28, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 35,
  2 ** 42 - 1, 2 ** 42, 2 ** 49 - 1, 2 ** 49, 2 ** 52, MAX - 1, MAX]

function malformed(read: () => unknown): MalformedBytes {
  let caught: unknown
  try {
    read()
  } catch (err) {
    caught = err
  }
  expect(caught, 'expected MalformedBytes, nothing was thrown').toBeInstanceOf(MalformedBytes)
  return caught as MalformedBytes
}

describe('uint64 big-endian', () => {
  it('round-trips every safe integer, and byte order is numeric order', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), fc.maxSafeNat(), (a, b) => {
        const x = Buffer.alloc(8)
        const y = Buffer.alloc(8)
        writeUint64(x, 0, a)
        writeUint64(y, 0, b)
        expect(readUint64(x, 0)).toBe(a)
        expect(Math.sign(Buffer.compare(x, y))).toBe(Math.sign(a - b))
      }),
      { numRuns: 500 },
    )
    const x = Buffer.alloc(8)
    writeUint64(x, 0, MAX)
    expect(x.toString('hex')).toBe('001fffffffffffff')
    writeUint64(x, 0, 2 ** 32)
    expect(x.toString('hex')).toBe('0000000100000000')
  })

  it('writes at an offset inside a view of a larger buffer', () => {
    const backing = Buffer.alloc(32, 0xaa)
    const view = backing.subarray(5, 20)
    writeUint64(view, 3, 0x0102030405)
    expect(backing.subarray(8, 16).toString('hex')).toBe('0000000102030405')
    expect(backing[7]).toBe(0xaa)
    expect(backing[16]).toBe(0xaa)
    expect(readUint64(view, 3)).toBe(0x0102030405)
  })
})

describe('asBuffer', () => {
  it('returns a Buffer as it is, and over a Uint8Array view the same bytes without copying', () => {
    const buffer = Buffer.from('abc')
    expect(asBuffer(buffer)).toBe(buffer)
    const backing = new Uint8Array([1, 2, 3, 4, 5, 6])
    const view = backing.subarray(2, 5)
    const wrapped = asBuffer(view)
    expect(Buffer.isBuffer(wrapped)).toBe(true)
    expect([...wrapped]).toEqual([3, 4, 5])
    backing[3] = 40
    expect(wrapped[1]).toBe(40)
    expect(asBuffer(new Uint8Array(0)).length).toBe(0)
  })
})

describe('ByteWriter and ByteReader', () => {
  it('round-trip varints at every 7-bit edge, with the documented sizes', () => {
    for (const value of VARINT_EDGES) {
      const bytes = new ByteWriter(1).varint(value).finish()
      expect(new ByteReader(bytes).varint(), String(value)).toBe(value)
      expect(bytes.length, String(value)).toBe(Math.max(1, Math.ceil(value.toString(2).length / 7)))
    }
    expect(new ByteWriter().varint(127).finish().length).toBe(1)
    expect(new ByteWriter().varint(16_383).finish().length).toBe(2)
    expect(new ByteWriter().varint(MAX).finish().length).toBe(8)
  })

  it('round-trip any mix of fields, growing from a tiny capacity', () => {
    type Field =
      | { kind: 'byte'; value: number } | { kind: 'uint16'; value: number } | { kind: 'uint32'; value: number }
      | { kind: 'uint64'; value: number } | { kind: 'float64'; value: number } | { kind: 'varint'; value: number }
      | { kind: 'text'; value: string } | { kind: 'sized'; value: Uint8Array } | { kind: 'bytes'; value: Uint8Array }
    const field: fc.Arbitrary<Field> = fc.oneof(
      fc.integer({ min: 0, max: 255 }).map((value) => ({ kind: 'byte' as const, value })),
      fc.integer({ min: 0, max: 0xffff }).map((value) => ({ kind: 'uint16' as const, value })),
      fc.integer({ min: 0, max: 0xffff_ffff }).map((value) => ({ kind: 'uint32' as const, value })),
      fc.maxSafeNat().map((value) => ({ kind: 'uint64' as const, value })),
      fc.double().map((value) => ({ kind: 'float64' as const, value })),
      fc.oneof(fc.constantFrom(...VARINT_EDGES), fc.maxSafeNat(), fc.nat(300)).map((value) => ({ kind: 'varint' as const, value })),
      fc.string({ unit: 'binary', maxLength: 200 }).filter((s) => s.isWellFormed()).map((value) => ({ kind: 'text' as const, value })),
      fc.uint8Array({ maxLength: 300 }).map((value) => ({ kind: 'sized' as const, value })),
      fc.uint8Array({ maxLength: 40 }).map((value) => ({ kind: 'bytes' as const, value })),
    )
    fc.assert(
      fc.property(fc.array(field, { maxLength: 30 }), fc.integer({ min: 1, max: 64 }), (fields, capacity) => {
        const writer = new ByteWriter(capacity)
        for (const f of fields) {
          switch (f.kind) {
            case 'byte': writer.byte(f.value); break
            case 'uint16': writer.uint16(f.value); break
            case 'uint32': writer.uint32(f.value); break
            case 'uint64': writer.uint64(f.value); break
            case 'float64': writer.float64(f.value); break
            case 'varint': writer.varint(f.value); break
            case 'text': writer.text(f.value); break
            case 'sized': writer.sized(f.value); break
            case 'bytes': writer.bytes(f.value); break
          }
        }
        const bytes = writer.finish()
        expect(bytes.length).toBe(writer.length)
        const reader = new ByteReader(bytes)
        for (const f of fields) {
          switch (f.kind) {
            case 'byte': expect(reader.byte()).toBe(f.value); break
            case 'uint16': expect(reader.uint16()).toBe(f.value); break
            case 'uint32': expect(reader.uint32()).toBe(f.value); break
            case 'uint64': expect(reader.uint64()).toBe(f.value); break
            case 'float64': expect(Object.is(bytes.readDoubleLE(reader.skip(8)), f.value)).toBe(true); break
            case 'varint': expect(reader.varint()).toBe(f.value); break
            case 'text': expect(reader.text()).toBe(f.value); break
            case 'sized': {
              const start = reader.sized()
              expect(Buffer.from(bytes.subarray(start, reader.offset))).toEqual(Buffer.from(f.value))
              break
            }
            case 'bytes': {
              const start = reader.skip(f.value.length)
              expect(Buffer.from(bytes.subarray(start, reader.offset))).toEqual(Buffer.from(f.value))
              break
            }
          }
        }
        expect(reader.done).toBe(true)
      }),
      { numRuns: 300 },
    )
  })

  it('float64 keeps -0, NaN payloads aside, subnormals and extremes bit for bit', () => {
    for (const value of [-0, 0, 5e-324, -5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, Infinity, -Infinity, 0.1 + 0.2]) {
      const bytes = new ByteWriter(1).float64(value).finish()
      expect(Object.is(bytes.readDoubleLE(0), value), String(value)).toBe(true)
    }
  })

  it('text counts UTF-8 bytes, not UTF-16 units', () => {
    const value = 'é\u{1F600}\uFFFF'
    const bytes = new ByteWriter().text(value).finish()
    expect(bytes[0]).toBe(Buffer.byteLength(value, 'utf8'))
    expect(bytes.length).toBe(1 + 2 + 4 + 3)
    expect(new ByteReader(bytes).text()).toBe(value)
  })

  it('finish() copies: later writes and the returned buffer never alias each other or the inputs', () => {
    const input = Buffer.from([1, 2, 3])
    const writer = new ByteWriter(4).bytes(input)
    const first = writer.finish()
    input[0] = 99
    writer.byte(4)
    const second = writer.finish()
    first[1] = 77
    expect([...first]).toEqual([1, 77, 3])
    expect([...second]).toEqual([1, 2, 3, 4])
  })

  // The oracle is the definition: decoding and re-encoding gives the same text.
  const reencodes = (text: string): boolean => Buffer.from(text, 'base64').toString('base64') === text
  const base64Like = fc.oneof(
    fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64')),
    fc.uint8Array({ minLength: 1, maxLength: 40 }).chain((bytes) => {
      const text = Buffer.from(bytes).toString('base64')
      return fc.tuple(fc.nat({ max: text.length - 1 }), fc.constantFrom(...'AQgw+/=-_ \n\t.,:;!~@#$%^&*()[]{}<>?|`aZ09\u00e9\u0100')).map(([at, c]) => text.slice(0, at) + c + text.slice(at + 1))
    }),
    fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64').replace(/=+$/, '')),
    fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ '), maxLength: 24 }),
    fc.string({ unit: 'grapheme-ascii', maxLength: 24 }),
  )

  it('base64() takes a string exactly when it decodes and re-encodes to itself, and writes its decoded bytes (property)', () => {
    fc.assert(fc.property(base64Like, (text) => {
      const writer = new ByteWriter(2).byte(0xaa)
      const taken = writer.base64(text)
      expect(taken).toBe(reencodes(text))
      const written = writer.finish()
      if (!taken) expect([...written]).toEqual([0xaa])
      else {
        const reader = new ByteReader(written, 1)
        const start = reader.sized()
        expect(written.subarray(start, reader.offset).equals(Buffer.from(text, 'base64'))).toBe(true)
      }
    }), { numRuns: 3000 })
  })

  it('base64() refuses non-zero unused bits, missing padding and the URL-safe alphabet', () => {
    for (const text of ['QQ==', 'QR==', 'QUI=', 'QUJ=', 'QQ', 'QUI', '-_8=', 'Q Q==', 'QUJD', 'QUJD====']) {
      expect(new ByteWriter().base64(text), text).toBe(reencodes(text))
    }
    expect(reencodes('QR==')).toBe(false)
    expect(reencodes('QQ==')).toBe(true)
  })

  it('truncate() keeps the first bytes, writes on after them, and refuses to grow', () => {
    const writer = new ByteWriter(4).byte(1).byte(2).byte(3)
    expect([...writer.truncate(1).byte(9).finish()]).toEqual([1, 9])
    expect(() => writer.truncate(3)).toThrow(RangeError)
  })

  it('take() returns the bytes written and leaves the writer empty, whether it shares memory (nearly full) or copies', () => {
    for (const [capacity, written] of [[8, 8], [8, 7], [64, 3], [2, 40]] as const) {
      const writer = new ByteWriter(capacity)
      for (let i = 0; i < written; i++) writer.byte(i)
      const taken = writer.take()
      expect([...taken]).toEqual(Array.from({ length: written }, (_, i) => i))
      expect(writer.length).toBe(0)
      // Writing on afterwards gets memory of its own: the taken bytes never change.
      writer.bytes(Buffer.alloc(written, 0xee))
      expect([...taken]).toEqual(Array.from({ length: written }, (_, i) => i))
    }
  })

  it('reads inside a window of a larger buffer, from a plain Uint8Array too', () => {
    const inner = new ByteWriter().varint(300).text('abc').uint16(513).finish()
    const backing = new Uint8Array(inner.length + 10).fill(0xee)
    backing.set(inner, 4)
    const reader = new ByteReader(backing.subarray(2), 2, 2 + inner.length)
    expect(reader.varint()).toBe(300)
    expect(reader.text()).toBe('abc')
    expect(reader.uint16()).toBe(513)
    expect(reader.done).toBe(true)
    malformed(() => reader.byte())
  })

  it('every read past the end throws MalformedBytes, whatever the field', () => {
    const reads: [string, (r: ByteReader) => unknown][] = [
      ['byte', (r) => r.byte()], ['uint16', (r) => r.uint16()], ['uint32', (r) => r.uint32()], ['uint64', (r) => r.uint64()],
      ['varint', (r) => r.varint()], ['text', (r) => r.text()], ['sized', (r) => r.sized()], ['skip', (r) => r.skip(3)],
    ]
    const full: Record<string, Buffer> = {
      byte: Buffer.from([7]),
      uint16: new ByteWriter().uint16(0x1234).finish(),
      uint32: new ByteWriter().uint32(0x12345678).finish(),
      uint64: new ByteWriter().uint64(MAX).finish(),
      varint: new ByteWriter().varint(MAX).finish(),
      text: new ByteWriter().text('hello, world').finish(),
      sized: new ByteWriter().sized(Buffer.alloc(200, 1)).finish(),
      skip: Buffer.from([1, 2, 3]),
    }
    for (const [name, read] of reads) {
      const bytes = full[name] as Buffer
      expect(() => read(new ByteReader(bytes)), name).not.toThrow()
      for (let cut = 0; cut < bytes.length; cut++) {
        malformed(() => read(new ByteReader(bytes.subarray(0, cut))))
        // The same cut as a window `end` over the whole buffer.
        malformed(() => read(new ByteReader(bytes, 0, cut)))
      }
    }
  })

  it('a varint longer than 8 bytes, a negative skip, and a length past the end are MalformedBytes', () => {
    expect(new ByteReader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])).varint()).toBe(2 ** 56 - 1)
    malformed(() => new ByteReader(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01])).varint())
    malformed(() => new ByteReader(Buffer.alloc(4)).skip(-1))
    const huge = new ByteWriter().varint(2 ** 40).bytes(Buffer.alloc(4)).finish()
    malformed(() => new ByteReader(huge).sized())
    malformed(() => new ByteReader(huge).text())
  })

  it('a failed read leaves the offset where it was, so the error names the field that failed', () => {
    const reader = new ByteReader(Buffer.from([1, 2, 3]))
    reader.byte()
    const error = malformed(() => reader.uint32())
    expect(reader.offset).toBe(1)
    expect(error.message).toContain('offset 1')
  })
})
