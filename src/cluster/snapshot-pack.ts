/**
 * A store directory as one byte stream, and back: what a snapshot object
 * holds. The store's directory is flat (LevelDB's files), so the framing is:
 *
 * ```
 * "PSSNAP01"                                         8 bytes, the format
 * per file, in the order of their names (UTF-16 code units, as JS sorts):
 *   name length   u16, big-endian, 1..255
 *   name          UTF-8: letters, digits, `.`, `_`, `-`; not `.` nor `..`
 *   size          u64, big-endian, at most 2^53 - 1
 *   content       size bytes
 * end             u16 0
 * ```
 *
 * and nothing after. The same directory always packs to the same bytes, so
 * a digest of a first pass names what a second pass uploads. Unpacking
 * refuses anything else (another format, a bad name, a name twice, bytes
 * cut short or left over) with `PRICE_CORRUPT_VALUE`.
 */
import { open, readdir } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { PriceStoreError } from '../errors.js'

/** The first bytes of a packed directory: the framing's name and version. */
export const PACK_MAGIC = Buffer.from('PSSNAP01', 'latin1')
/** The bytes read from a file at a time, and so the largest piece {@link packDirectory} yields. */
const READ_BYTES = 1024 * 1024
const FILE_NAME = /^[A-Za-z0-9._-]{1,255}$/

/**
 * The bytes of the directory `dir`, packed (see the module's comment), in pieces of at most 1 MiB.
 * @throws PriceStoreError `PRICE_STORAGE_ERROR` for an entry that is not a file with a plain name, or a file that
 *   changes size while it is read
 */
export async function* packDirectory(dir: string): AsyncGenerator<Buffer> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  yield PACK_MAGIC
  for (const entry of entries) {
    if (!entry.isFile() || !isPlainName(entry.name)) throw new PriceStoreError('PRICE_STORAGE_ERROR', `${join(dir, entry.name)}: a store directory holds only files with plain names`)
    yield* packFile(dir, entry.name)
  }
  yield u16(0)
}

async function* packFile(dir: string, name: string): AsyncGenerator<Buffer> {
  const handle = await open(join(dir, name), 'r')
  try {
    const { size } = await handle.stat()
    const nameBytes = Buffer.from(name, 'utf8')
    const header = Buffer.alloc(2 + nameBytes.length + 8)
    header.writeUInt16BE(nameBytes.length, 0)
    nameBytes.copy(header, 2)
    header.writeBigUInt64BE(BigInt(size), 2 + nameBytes.length)
    yield header
    let read = 0
    while (read < size) {
      // A new buffer each time: the consumer may keep what it was given.
      const piece = Buffer.allocUnsafe(Math.min(READ_BYTES, size - read))
      const { bytesRead } = await handle.read(piece, 0, piece.length, read)
      if (bytesRead === 0) break
      read += bytesRead
      yield bytesRead === piece.length ? piece : piece.subarray(0, bytesRead)
    }
    if (read !== size || (await handle.stat()).size !== size) {
      throw new PriceStoreError('PRICE_STORAGE_ERROR', `${join(dir, name)} changed while it was packed`)
    }
  } finally {
    await handle.close()
  }
}

/**
 * Writes the files of a packed directory, read from `source`, into the existing directory `dir` (not flushed to the
 * disk: the caller does, once they are all written). Resolves once the end mark is read and nothing follows it.
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` for bytes that are not a packed directory (the files written so far
 *   stay: the caller removes `dir`)
 */
export async function unpackDirectory(source: AsyncIterable<Uint8Array>, dir: string): Promise<{ files: number; bytes: number }> {
  const pieces = source[Symbol.asyncIterator]()
  try {
    return await unpackFrom(new ByteReader(pieces), dir)
  } catch (err) {
    // Stops the source (a download) rather than let it run on for nothing.
    await pieces.return?.().catch(() => {})
    throw err
  }
}

async function unpackFrom(reader: ByteReader, dir: string): Promise<{ files: number; bytes: number }> {
  const magic = await reader.exactly(PACK_MAGIC.length, 'the format mark')
  if (!magic.equals(PACK_MAGIC)) throw corrupt(`it does not start with ${PACK_MAGIC.toString('latin1')}`)
  const seen = new Set<string>()
  let bytes = 0
  for (;;) {
    const nameLength = (await reader.exactly(2, 'a file header')).readUInt16BE(0)
    if (nameLength === 0) break
    const name = (await reader.exactly(nameLength, 'a file name')).toString('utf8')
    if (!isPlainName(name)) throw corrupt(`it names a file ${JSON.stringify(name)}`)
    if (seen.has(name)) throw corrupt(`it holds the file ${name} twice`)
    seen.add(name)
    const size = (await reader.exactly(8, 'a file size')).readBigUInt64BE(0)
    if (size > BigInt(Number.MAX_SAFE_INTEGER)) throw corrupt(`the file ${name} has an impossible size`)
    await writeFile(join(dir, name), reader, Number(size))
    bytes += Number(size)
  }
  if (await reader.more()) throw corrupt('bytes follow its end mark')
  return { files: seen.size, bytes }
}

async function writeFile(path: string, reader: ByteReader, size: number): Promise<void> {
  const handle = await open(path, 'wx').catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EEXIST' ? corrupt(`it holds a file ${basename(path)} the directory already has`) : err
  })
  try {
    let left = size
    while (left > 0) {
      const piece = await reader.upTo(left, `the content of ${path}`)
      await handle.write(piece, 0, piece.length)
      left -= piece.length
    }
  } finally {
    await handle.close()
  }
}

/** Reads exact amounts from a stream of pieces of any size. */
class ByteReader {
  readonly #pieces: AsyncIterator<Uint8Array>
  #held: Buffer = Buffer.alloc(0)

  constructor(pieces: AsyncIterator<Uint8Array>) {
    this.#pieces = pieces
  }

  /** The next `n` bytes. */
  async exactly(n: number, what: string): Promise<Buffer> {
    while (this.#held.length < n) {
      if (!(await this.#pull())) throw corrupt(`it ends inside ${what}`)
    }
    const out = this.#held.subarray(0, n)
    this.#held = this.#held.subarray(n)
    return out
  }

  /** The next 1 to `n` bytes (what is at hand, without waiting for more once there is some). */
  async upTo(n: number, what: string): Promise<Buffer> {
    if (this.#held.length === 0 && !(await this.#pull())) throw corrupt(`it ends inside ${what}`)
    const out = this.#held.subarray(0, Math.min(n, this.#held.length))
    this.#held = this.#held.subarray(out.length)
    return out
  }

  /** Whether any byte is left. */
  async more(): Promise<boolean> {
    while (this.#held.length === 0) {
      if (!(await this.#pull())) return false
    }
    return true
  }

  async #pull(): Promise<boolean> {
    const next = await this.#pieces.next()
    if (next.done === true) return false
    const piece = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength)
    this.#held = this.#held.length === 0 ? piece : Buffer.concat([this.#held, piece])
    return true
  }
}

function isPlainName(name: string): boolean {
  return FILE_NAME.test(name) && name !== '.' && name !== '..'
}

function u16(value: number): Buffer {
  const out = Buffer.alloc(2)
  out.writeUInt16BE(value, 0)
  return out
}

function corrupt(reason: string): PriceStoreError {
  return new PriceStoreError('PRICE_CORRUPT_VALUE', `the snapshot is not a packed store directory: ${reason}`)
}
