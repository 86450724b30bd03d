/**
 * Opening a database written by format 7, which kept one signature verdict
 * per record in sublevel `v`: the verdicts move into verdict groups
 * (sublevel `w`, keys/verdict-group-codec.ts), at commit position 0, before
 * every commit a store makes from now on, so a record written again later
 * takes its new verdict as it would have.
 *
 * They move in writes of about {@link RECORDS_PER_WRITE} verdicts, each one
 * atomic (the groups put, the per-record entries deleted) and ending where a
 * group ends: a crash leaves every verdict in exactly one of the two
 * sublevels, and the next open carries on from the first one left in `v`.
 * The database's `format` key says 8 before the first moves
 * (lifecycle/format.ts): a release that reads only format 7 then refuses a
 * store whose verdicts are partly moved, and never writes a per-record
 * verdict among them (its move would replace a group already moved).
 */
import type { AbstractLevel } from 'abstract-level'
import { undecodable } from '../../keys/entry-errors.js'
import { periodOf, readRecordVerdictKey, verdictGroupKey } from '../../keys/key-layout.js'
import { VerdictGroupBuilder, encodeVerdictGroup } from '../../keys/verdict-group-codec.js'
import { RootBatch, prefixOf } from '../db/root-batch.js'
import { toStorageError } from '../db/storage-errors.js'
import type { BytesSublevel } from '../db/sublevels.js'

/** Verdicts moved per atomic write (a write grows to the end of the group it reached). */
export const RECORDS_PER_WRITE = 10_000

/** Where the verdicts move from and to. */
export interface VerdictMove {
  readonly db: AbstractLevel<any, any, any>
  /** Format 7's sublevel `v`. */
  readonly from: BytesSublevel
  /** The verdict groups' sublevel `w`. */
  readonly to: BytesSublevel
  readonly sync: boolean
}

/**
 * Moves every verdict of format 7's sublevel into verdict groups; returns how many moved (0 for a database that
 * holds none, which costs one read).
 * @param perWrite verdicts moved per atomic write, at least (a write ends with a group)
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` for a key that does not parse, `PRICE_STORAGE_ERROR`
 */
export async function moveRecordVerdicts({ db, from, to, sync }: VerdictMove, perWrite = RECORDS_PER_WRITE): Promise<number> {
  const fromPrefix = prefixOf(from)
  const toPrefix = prefixOf(to)
  const iterator = from.iterator()
  let moved = 0
  let write = new PendingWrite()
  try {
    for (;;) {
      const entries = await iterator.nextv(1024)
      for (const [key, value] of entries) {
        let parsed: ReturnType<typeof readRecordVerdictKey>
        try {
          parsed = readRecordVerdictKey(key)
        } catch (err) {
          throw undecodable(`a format 7 signature verdict (key 0x${Buffer.from(key).toString('hex')})`, err)
        }
        const { symbol, timestamp, id } = parsed
        const period = periodOf(timestamp)
        if (write.records >= perWrite && !write.continues(symbol, period)) {
          moved += await write.commit(db, fromPrefix, toPrefix, sync)
          write = new PendingWrite()
        }
        write.add(key, symbol, period, timestamp, id, value)
      }
      if (entries.length === 0) break
    }
    moved += await write.commit(db, fromPrefix, toPrefix, sync)
  } finally {
    await iterator.close()
  }
  return moved
}

/** A verdict group being gathered from format 7's entries. */
interface GatheredGroup {
  readonly symbol: string
  readonly period: number
  readonly builder: VerdictGroupBuilder
}

/** The groups of one write under way, and the per-record keys they replace. */
class PendingWrite {
  records = 0
  readonly #keys: Uint8Array[] = []
  readonly #groups: GatheredGroup[] = []

  /** Whether the last group is the one of `symbol` and `period` (format 7's keys sort by symbol, then time). */
  continues(symbol: string, period: number): boolean {
    const last = this.#groups.at(-1)
    return last !== undefined && last.symbol === symbol && last.period === period
  }

  add(key: Uint8Array, symbol: string, period: number, timestamp: number, id: string, verdict: Uint8Array): void {
    if (!this.continues(symbol, period)) this.#groups.push({ symbol, period, builder: new VerdictGroupBuilder() })
    // Each entry's bytes are an object of their own: named by their content, so equal verdicts are kept once.
    const name = Buffer.from(verdict.buffer, verdict.byteOffset, verdict.byteLength).toString('latin1')
    const group = this.#groups.at(-1) as GatheredGroup
    group.builder.add(timestamp, id, verdict, name)
    this.#keys.push(key)
    this.records++
  }

  async commit(db: AbstractLevel<any, any, any>, fromPrefix: Uint8Array, toPrefix: Uint8Array, sync: boolean): Promise<number> {
    if (this.records === 0) return 0
    const batch = new RootBatch()
    for (const { symbol, period, builder } of this.#groups) batch.put(toPrefix, verdictGroupKey(symbol, period, 0), encodeVerdictGroup(builder.finish(), period))
    for (const key of this.#keys) batch.del(fromPrefix, key)
    try {
      await batch.write(db, sync)
    } catch (err) {
      throw toStorageError(err, 'move the signature verdicts of a format 7 store')
    }
    return this.records
  }
}
