/**
 * The LevelDB floor of issue 4: classic-level iterating the same key range
 * as the store, with no decoding (raw buffers, `nextv` with a large
 * `highWaterMarkBytes`), on the store's own database files.
 *
 * LevelDB locks its directory, so the floor opens a twin of the store's
 * closed directory: the immutable table files (`*.ldb`) are hard links to the
 * same inodes (same bytes, same page cache), the small mutable files
 * (CURRENT, MANIFEST, log) are copies. Keys are the store's:
 * sublevel prefix `!p!`, then `symbol | 0x00 | timestamp (u64 BE) | id`.
 */
import { copyFile, link, mkdir, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import { symbolRange } from '../src/keys/key-codec.js'

/** The store's sublevel of record keys (see src/store/price-store.ts). */
const PRICES_SUBLEVEL = 'p'
const READ_AHEAD_BYTES = 8 * 1024 * 1024
const NEXTV_SIZE = 10_000

type RawLevel = ClassicLevel<Buffer, Buffer>

export class LevelFloor {
  readonly #db: RawLevel
  readonly #dir: string
  readonly #prefix: Buffer

  private constructor(db: RawLevel, dir: string) {
    this.#db = db
    this.#dir = dir
    this.#prefix = Buffer.from(db.sublevel(PRICES_SUBLEVEL).prefix, 'utf8')
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
    return new LevelFloor(db, twinDir)
  }

  #bounds(symbol: string, from?: number, to?: number): { gte: Buffer; lt: Buffer } {
    const range = symbolRange(symbol, from, to)
    return { gte: Buffer.concat([this.#prefix, range.gte]), lt: Buffer.concat([this.#prefix, range.lt]) }
  }

  /**
   * Iterates the records of `symbol` in `from..to` (newest first when
   * `reverse`), keys and values as raw buffers, and returns how many there were.
   */
  async scan(symbol: string, from: number | undefined, to: number | undefined, reverse: boolean, limit = -1): Promise<number> {
    const iterator = this.#db.iterator({
      ...this.#bounds(symbol, from, to),
      reverse,
      limit,
      highWaterMarkBytes: READ_AHEAD_BYTES,
    })
    let count = 0
    try {
      const size = limit > 0 ? Math.min(limit, NEXTV_SIZE) : NEXTV_SIZE
      for (;;) {
        const entries = await iterator.nextv(size)
        if (entries.length === 0) break
        count += entries.length
      }
    } finally {
      await iterator.close()
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
