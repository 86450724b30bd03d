/**
 * The LevelDB floor: classic-level reading the same stored values as the
 * store, with no decoding, on the store's own database files. In format 3
 * a symbol's hour is one chunk value, so the floor is one synchronous get
 * per hour of the range (and per part of a split hour), counting the records
 * from each chunk's header.
 *
 * LevelDB locks its directory, so the floor opens a twin of the store's
 * closed directory: the immutable table files (`*.ldb`) are hard links to the
 * same inodes (same bytes, same page cache), the small mutable files
 * (CURRENT, MANIFEST, log) are copies. Keys are the store's chunk keys
 * (src/keys/key-layout.ts) under the chunks sublevel's prefix (`!c!`,
 * named in src/keys/sublevels.ts).
 */
import { copyFile, link, mkdir, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { chunkKey, periodOf } from '../src/keys/key-layout.js'
import { SUBLEVELS } from '../src/keys/sublevels.js'

type RawLevel = ClassicLevel<Buffer, Buffer>

export class LevelFloor {
  readonly #db: RawLevel
  readonly #dir: string
  readonly #prefix: Buffer
  /** The first and last hour with a chunk: no read looks outside them (as the store's own reads do not). */
  #hours = { first: 0, last: -1 }

  private constructor(db: RawLevel, dir: string) {
    this.#db = db
    this.#dir = dir
    this.#prefix = Buffer.from(db.sublevel(SUBLEVELS.chunks).prefix, 'utf8')
  }

  /** Makes a twin of the closed store directory `storeDir` at `twinDir` and opens it. */
  static async open(storeDir: string, twinDir: string): Promise<LevelFloor> {
    await rm(twinDir, { recursive: true, force: true })
    await mkdir(twinDir, { recursive: true })
    for (const name of await readdir(storeDir)) {
      if (name === 'LOCK') continue
      if (name.endsWith('.ldb') || name.endsWith('.sst')) await link(join(storeDir, name), join(twinDir, name))
      else await copyFile(join(storeDir, name), join(twinDir, name))
    }
    const db = new ClassicLevel<Buffer, Buffer>(twinDir, { keyEncoding: 'buffer', valueEncoding: 'buffer' })
    await db.open()
    const floor = new LevelFloor(db, twinDir)
    await floor.#findHours()
    return floor
  }

  async #findHours(): Promise<void> {
    const bounds = { gte: this.#prefix, lt: Buffer.concat([this.#prefix.subarray(0, -1), Buffer.from([this.#prefix[this.#prefix.length - 1] as number + 1])]) }
    const [first] = await this.#db.keys({ ...bounds, limit: 1 }).all()
    const [last] = await this.#db.keys({ ...bounds, limit: 1, reverse: true }).all()
    if (first !== undefined && last !== undefined) {
      this.#hours = { first: first.readUInt32BE(this.#prefix.length), last: last.readUInt32BE(this.#prefix.length) }
    }
  }

  /** The raw chunk part, or undefined. */
  #part(symbol: string, period: number, part: number): Buffer | undefined {
    return this.#db.getSync(Buffer.concat([this.#prefix, chunkKey(period, symbol, part)]))
  }

  /**
   * Reads the chunk values of `symbol` for the hours of `from..to` (newest
   * first when `reverse`, stopping once `limit` records were read) as raw
   * buffers, and returns how many records they hold.
   */
  async scan(symbol: string, from: number | undefined, to: number | undefined, reverse: boolean, limit = -1): Promise<number> {
    const last = Math.min(periodOf(to ?? Number.MAX_SAFE_INTEGER), this.#hours.last)
    const first = Math.max(from === undefined ? 0 : periodOf(from), this.#hours.first)
    let count = 0
    for (let i = 0; i <= last - first; i++) {
      const period = reverse ? last - i : first + i
      const head = this.#part(symbol, period, 0)
      if (head === undefined) {
        if (from === undefined && count > 0) break
        continue
      }
      const parts = head.readUInt16BE(1)
      count += recordsIn(head)
      for (let part = 1; part < parts; part++) count += recordsIn(this.#part(symbol, period, part) as Buffer)
      if (limit > 0 && count >= limit) return limit
    }
    return count
  }

  /** The newest entry of each symbol, all seeks in flight at once; returns how many were found. */
  async newestOfEach(symbols: readonly string[]): Promise<number> {
    const found = await Promise.all(symbols.map((symbol) => this.scan(symbol, undefined, undefined, true, 1)))
    return found.reduce((a, b) => a + b, 0)
  }

  /** The newest entry of each non-empty interval bucket, one concurrent limit-1 seek per bucket; returns how many. */
  async seekPerBucket(symbol: string, from: number, to: number, interval: number): Promise<number> {
    const seeks: Promise<number>[] = []
    for (let bucket = Math.floor(from / interval); bucket <= Math.floor(to / interval); bucket++) {
      const lo = Math.max(from, bucket * interval)
      const hi = Math.min(to, bucket * interval + interval - 1)
      seeks.push(this.scan(symbol, lo, hi, true, 1))
    }
    return (await Promise.all(seeks)).reduce((a, b) => a + b, 0)
  }

  async close(): Promise<void> {
    await this.#db.close()
    await rm(this.#dir, { recursive: true, force: true })
  }
}

/** The record count in a chunk part's header: version byte, part count (u16), then a varint. */
function recordsIn(part: Buffer): number {
  let value = 0
  let scale = 1
  for (let offset = 3; offset < part.length; offset++) {
    const byte = part[offset] as number
    value += (byte & 0x7f) * scale
    if (byte < 0x80) return value
    scale *= 0x80
  }
  return value
}
