/**
 * Byte-level helpers shared by the key and value layouts: big-endian
 * integers (so byte order is numeric order) and LEB128 lengths.
 */

const TWO_POW_32 = 2 ** 32

/**
 * A Buffer over the same memory as `bytes`, not a copy (`bytes` itself when it is one). `Buffer.from(bytes)` allocates
 * and copies: the log's replay after a crash spent about a fifth of its time there (85 ms for 64 MiB).
 */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** Writes a safe integer as 8 bytes, big-endian; byte order equals numeric order. */
export function writeUint64(target: Uint8Array, offset: number, value: number): void {
  // Byte by byte rather than through a DataView: a view per call was an allocation per record written.
  checkBounds(target, offset)
  const high = Math.floor(value / TWO_POW_32)
  const low = value - high * TWO_POW_32
  target[offset] = high >>> 24
  target[offset + 1] = (high >>> 16) & 0xff
  target[offset + 2] = (high >>> 8) & 0xff
  target[offset + 3] = high & 0xff
  target[offset + 4] = low >>> 24
  target[offset + 5] = (low >>> 16) & 0xff
  target[offset + 6] = (low >>> 8) & 0xff
  target[offset + 7] = low & 0xff
}

/** Reads 8 big-endian bytes as a number (exact below 2^53). */
export function readUint64(source: Uint8Array, offset: number): number {
  checkBounds(source, offset)
  const high = (source[offset] as number) * 0x1000000 + (((source[offset + 1] as number) << 16) | ((source[offset + 2] as number) << 8) | (source[offset + 3] as number))
  const low = (source[offset + 4] as number) * 0x1000000 + (((source[offset + 5] as number) << 16) | ((source[offset + 6] as number) << 8) | (source[offset + 7] as number))
  return high * TWO_POW_32 + low
}

function checkBounds(bytes: Uint8Array, offset: number): void {
  if (!(offset >= 0 && offset + 8 <= bytes.length)) throw new RangeError(`8 bytes at offset ${offset} do not fit in ${bytes.length}`)
}

/**
 * An append-only byte writer that grows as needed. Values are copied in, so
 * the written bytes never alias the caller's buffers.
 */
export class ByteWriter {
  #bytes: Buffer
  #length = 0

  constructor(capacity = 256) {
    this.#bytes = Buffer.allocUnsafe(capacity)
  }

  get length(): number {
    return this.#length
  }

  #room(extra: number): void {
    if (this.#length + extra <= this.#bytes.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.#length + extra, this.#bytes.length * 2))
    this.#bytes.copy(grown, 0, 0, this.#length)
    this.#bytes = grown
  }

  byte(value: number): this {
    this.#room(1)
    this.#bytes[this.#length++] = value
    return this
  }

  uint16(value: number): this {
    this.#room(2)
    this.#bytes.writeUInt16BE(value, this.#length)
    this.#length += 2
    return this
  }

  uint32(value: number): this {
    this.#room(4)
    this.#bytes.writeUInt32BE(value, this.#length)
    this.#length += 4
    return this
  }

  uint64(value: number): this {
    this.#room(8)
    writeUint64(this.#bytes, this.#length, value)
    this.#length += 8
    return this
  }

  float64(value: number): this {
    this.#room(8)
    this.#bytes.writeDoubleLE(value, this.#length)
    this.#length += 8
    return this
  }

  /** An unsigned LEB128 integer: 1 byte below 128, 2 below 16,384. */
  varint(value: number): this {
    this.#room(8)
    let rest = value
    while (rest >= 0x80) {
      this.#bytes[this.#length++] = (rest % 0x80) | 0x80
      rest = Math.floor(rest / 0x80)
    }
    this.#bytes[this.#length++] = rest
    return this
  }

  bytes(value: Uint8Array): this {
    this.#room(value.length)
    this.#bytes.set(value, this.#length)
    this.#length += value.length
    return this
  }

  /** A string's UTF-8 bytes, preceded by their length as a varint. */
  text(value: string): this {
    const length = Buffer.byteLength(value, 'utf8')
    this.varint(length)
    this.#room(length)
    this.#bytes.write(value, this.#length, 'utf8')
    this.#length += length
    return this
  }

  /** Bytes preceded by their length as a varint. */
  sized(value: Uint8Array): this {
    return this.varint(value.length).bytes(value)
  }

  /** Overwrites one byte already written. */
  patch(offset: number, value: number): this {
    if (offset >= this.#length) throw new RangeError(`offset ${offset} is past the ${this.#length} bytes written`)
    this.#bytes[offset] = value
    return this
  }

  /** Forgets what was written after the first `length` bytes. */
  truncate(length: number): this {
    if (length > this.#length) throw new RangeError(`cannot truncate ${this.#length} bytes to ${length}`)
    this.#length = length
    return this
  }

  /** Forgets what was written, keeping the memory, so one writer can serve many values. */
  reset(): this {
    this.#length = 0
    return this
  }

  /** The bytes written so far, as a view that the next write may change. */
  view(): Buffer {
    return this.#bytes.subarray(0, this.#length)
  }

  /**
   * A string's bytes decoded from base64, preceded by their length as a
   * varint, when the string is canonical base64 (it decodes and re-encodes
   * to the same text): then true. Otherwise writes nothing and returns false.
   */
  base64(value: string): boolean {
    const length = Buffer.byteLength(value, 'base64')
    if (!mayBeCanonicalBase64(value, length)) return false
    const start = this.#length
    this.varint(length)
    this.#room(length)
    // Node's decoder skips what is not a base64 digit, so a string with anything else decodes to fewer bytes.
    const written = this.#bytes.write(value, this.#length, 'base64')
    if (written !== length) {
      this.#length = start
      return false
    }
    this.#length += written
    return true
  }

  /** The bytes written, as a buffer of their own. */
  finish(): Buffer {
    return Buffer.from(this.#bytes.subarray(0, this.#length))
  }

  /**
   * The bytes written, for a writer that is not used again (it is left empty): a view of its memory when at most an
   * eighth of that is unused, else a copy, so a kept value never pins much unused memory. Saves {@link finish}'s
   * copy where the capacity was sized close to the bytes.
   */
  take(): Buffer {
    const bytes = this.#length * 8 >= this.#bytes.length * 7 ? this.#bytes.subarray(0, this.#length) : this.finish()
    this.#bytes = Buffer.alloc(0)
    this.#length = 0
    return bytes
  }
}

const BASE64_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

/**
 * Whether `value`, which Node's base64 decoder reads as `bytes` bytes, can be exactly what its encoder writes for
 * them: padded to a multiple of 4 with the `=` its length implies, none of the URL-safe digits (which the decoder
 * also takes), and zero bits where the last digit holds fewer than 6 bits. What remains is that every character be
 * a digit, which the decoder proves by decoding all `bytes` (it skips anything else). Then the string decodes and
 * re-encodes to itself; checked without re-encoding, which made a 684-character string for every record written.
 */
function mayBeCanonicalBase64(value: string, bytes: number): boolean {
  if (value.length !== Math.ceil(bytes / 3) * 4 || value.includes('-') || value.includes('_')) return false
  const rest = bytes % 3
  if (rest === 0) return true
  // One byte left: its last digit keeps 2 bits (4 unused); two bytes: 4 bits (2 unused).
  const last = BASE64_DIGITS.indexOf(value[value.length - (rest === 1 ? 3 : 2)] as string)
  return last >= 0 && (last & (rest === 1 ? 0b1111 : 0b11)) === 0
}

/** Thrown by {@link ByteReader} when the bytes end early or do not parse; callers turn it into a coded error. */
export class MalformedBytes extends Error {}

/** Reads what {@link ByteWriter} wrote; every read checks its bounds. */
export class ByteReader {
  readonly bytes: Buffer
  offset: number
  readonly #end: number

  constructor(bytes: Uint8Array, offset = 0, end = bytes.length) {
    this.bytes = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.offset = offset
    this.#end = end
  }

  get done(): boolean {
    return this.offset >= this.#end
  }

  #take(length: number): number {
    const at = this.offset
    if (length < 0 || at + length > this.#end) throw new MalformedBytes(`needs ${length} bytes at offset ${at}, has ${this.#end - at}`)
    this.offset = at + length
    return at
  }

  byte(): number {
    return this.bytes[this.#take(1)] as number
  }

  uint16(): number {
    return this.bytes.readUInt16BE(this.#take(2))
  }

  uint32(): number {
    return this.bytes.readUInt32BE(this.#take(4))
  }

  uint64(): number {
    return readUint64(this.bytes, this.#take(8))
  }

  varint(): number {
    let value = 0
    let scale = 1
    for (let i = 0; i < 8; i++) {
      const byte = this.byte()
      value += (byte & 0x7f) * scale
      if (byte < 0x80) return value
      scale *= 0x80
    }
    throw new MalformedBytes(`varint too long at offset ${this.offset}`)
  }

  /** Skips `length` bytes and returns where they start. */
  skip(length: number): number {
    return this.#take(length)
  }

  /** A varint length, then that many bytes: returns their start (the end is `offset` after the call). */
  sized(): number {
    return this.#take(this.varint())
  }

  text(): string {
    const start = this.sized()
    return this.bytes.toString('utf8', start, this.offset)
  }
}
