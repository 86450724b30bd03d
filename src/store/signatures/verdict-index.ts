/**
 * The verdicts sublevel (`w`): the signature verdicts of the
 * records verified at ingest, in **groups**, one per commit, symbol and
 * period (keys/verdict-group-codec.ts), written in the records' own atomic
 * write and deleted with them by a prune. A record's verdict is the one of
 * the latest group naming it: a record written again takes its new verdict,
 * and one written again without verification (the policy now `off`) is
 * named with no verdict, so a verdict always describes the record as it is
 * stored. Only a record that can have one needs naming: the index keeps,
 * per symbol, the latest hour holding any group, and an unverified write
 * past it (a store that verified once, writing new hours under `off`)
 * writes nothing.
 */
import { undecodable } from '../../keys/entry-errors.js'
import { PERIOD_MS, periodOf, readVerdictGroupKey, verdictGroupKey, verdictGroupRange, verdictGroupSymbol } from '../../keys/key-layout.js'
import { decodeVerdict, encodeVerdict } from '../../keys/verdict-codec.js'
import { VerdictGroupBuilder, decodeVerdictGroup, encodeVerdictGroup, withoutRecords, type VerdictGroup } from '../../keys/verdict-group-codec.js'
import type { StoredRecord } from '../../records/stored-record.js'
import type { RecordVerdict } from '../../trust/verdict.js'
import type { Provider } from '../../types.js'
import type { RootBatch } from '../db/root-batch.js'
import type { BytesSublevel } from '../db/sublevels.js'
import type { ReadView } from '../read/read-view.js'

/** A stored verdict, with the key of its record. */
export interface KeptVerdict {
  readonly timestamp: number
  readonly id: string
  readonly verdict: RecordVerdict
}

/** Reads and writes the verdicts sublevel. */
export class VerdictIndex {
  readonly #level: BytesSublevel
  readonly #prefix: Uint8Array
  readonly #provider: Provider
  /**
   * Per symbol with any group, the latest period holding one (or more than that: it is raised as a write is staged,
   * and a prune does not lower it). A record of another symbol, or of a later period, has no verdict to undo.
   */
  readonly #lastPeriods = new Map<string, number>()

  constructor(level: BytesSublevel, prefix: Uint8Array, provider: Provider) {
    this.#level = level
    this.#prefix = prefix
    this.#provider = provider
  }

  /**
   * Learns, when the store opens, each symbol's latest period holding a group: two seeks per symbol with any (its
   * first key, then its last), none for a store that never verified.
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` for a key that is not a verdict group's
   */
  async load(): Promise<void> {
    this.#lastPeriods.clear()
    let after: Buffer | undefined
    for (;;) {
      const [first] = await this.#level.keys(after === undefined ? { limit: 1 } : { gte: after, limit: 1 }).all()
      if (first === undefined) return
      const { symbol, gte, lt } = keyParts(first, verdictGroupSymbol)
      const [last = first] = await this.#level.keys({ gte, lt, reverse: true, limit: 1 }).all()
      this.#lastPeriods.set(symbol, keyParts(last, readVerdictGroupKey).period)
      after = lt
    }
  }

  /** Whether `symbol` may have a stored verdict (a group was written for it): without, {@link read} finds none. */
  mayHold(symbol: string): boolean {
    return this.#lastPeriods.has(symbol)
  }

  /**
   * Puts the verdicts of a batch's records, committed at `position`, into its write: a group per symbol and period.
   * Without verdicts (policy `off`), the groups name with none the records that may have one (of a symbol and period
   * up to the latest holding a group).
   */
  stage(batch: RootBatch, records: readonly StoredRecord[], verdicts: readonly RecordVerdict[] | undefined, position: number): void {
    if (verdicts === undefined && this.#lastPeriods.size === 0) return
    // The verifier hands records with equal verdicts one shared object (nearly a whole batch has one): encoded once.
    const encoded = new Map<RecordVerdict, Buffer>()
    for (const [symbol, periods] of placesBySymbol(records)) {
      let last = this.#lastPeriods.get(symbol) ?? -1
      for (const [period, places] of periods) {
        if (period > last) {
          // Past the symbol's last group: an unverified record there has no verdict to undo; a verified one moves it.
          if (verdicts === undefined) continue
          this.#lastPeriods.set(symbol, (last = period))
        }
        const group = new VerdictGroupBuilder()
        for (const place of places) {
          const record = records[place] as StoredRecord
          const verdict = verdicts?.[place]
          let bytes = verdict === undefined ? undefined : encoded.get(verdict)
          if (verdict !== undefined && bytes === undefined) encoded.set(verdict, (bytes = encodeVerdict(verdict, this.#provider.id)))
          // One bytes object per distinct verdict (above): the builder keeps each once.
          group.add(record.timestamp, record.id, bytes)
        }
        batch.put(this.#prefix, verdictGroupKey(symbol, period, position), encodeVerdictGroup(group.finish(), period))
      }
    }
  }

  /**
   * Puts the deletion of the verdicts of `symbol` with timestamps `from..to` (inclusive) into a prune's write: groups
   * wholly inside go, groups reaching outside are written again with the records outside alone.
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` for a group reaching outside the range that does not decode
   */
  async stageDeletes(batch: RootBatch, symbol: string, from: number, to: number): Promise<void> {
    if (!this.#lastPeriods.has(symbol)) return
    for (const [key, value] of await this.#level.iterator(verdictGroupRange(symbol, from, to)).all()) {
      const { period } = readVerdictGroupKey(key)
      if (period * PERIOD_MS >= from && (period + 1) * PERIOD_MS - 1 <= to) {
        batch.del(this.#prefix, key)
        continue
      }
      const group = decodeGroup(key, value, symbol, period)
      const kept = withoutRecords(group, (timestamp) => timestamp >= from && timestamp <= to)
      if (kept.timestamps.length === group.timestamps.length) continue
      if (kept.timestamps.length === 0) batch.del(this.#prefix, key)
      else batch.put(this.#prefix, key, encodeVerdictGroup(kept, period))
    }
  }

  /**
   * The verdicts of `symbol` with timestamps `from..to` (inclusive) in `view`, a period at a time in timestamp order
   * (records of one timestamp in no particular order).
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` for a group that does not decode
   */
  async *read(view: ReadView, symbol: string, from: number, to: number): AsyncGenerator<KeptVerdict[]> {
    const iterator = view.entries(this.#level, verdictGroupRange(symbol, from, to))
    const period = new PeriodVerdicts(this.#provider.id)
    try {
      for (;;) {
        const entries = await iterator.nextv(256)
        for (const [key, value] of entries) {
          const at = readVerdictGroupKey(key).period
          if (at !== period.period) {
            const page = period.take(from, to)
            if (page.length > 0) yield page
            period.period = at
          }
          period.add(key, value, symbol, at)
        }
        if (entries.length === 0) break
      }
      const page = period.take(from, to)
      if (page.length > 0) yield page
    } finally {
      await iterator.close()
    }
  }
}

/** The places of `records` by symbol, then by period, in batch order. */
function placesBySymbol(records: readonly StoredRecord[]): Map<string, Map<number, number[]>> {
  const bySymbol = new Map<string, Map<number, number[]>>()
  records.forEach((record, place) => {
    let periods = bySymbol.get(record.symbol)
    if (periods === undefined) bySymbol.set(record.symbol, (periods = new Map()))
    const period = periodOf(record.timestamp)
    const places = periods.get(period)
    if (places === undefined) periods.set(period, [place])
    else places.push(place)
  })
  return bySymbol
}

/** The groups of one period of a symbol, merged: each record's verdict from the latest group naming it. */
class PeriodVerdicts {
  period = -1
  readonly #providerId: string
  /** By timestamp and id; `undefined` when the latest group named the record with no verdict. */
  #latest = new Map<string, { timestamp: number; id: string; verdict: RecordVerdict | undefined }>()

  constructor(providerId: string) {
    this.#providerId = providerId
  }

  /** Adds the next group, of period `at` (groups come in commit order: a later one's verdicts replace an earlier one's). */
  add(key: Uint8Array, value: Uint8Array, symbol: string, at: number): void {
    const group = decodeGroup(key, value, symbol, at)
    const verdicts = group.verdicts.map((bytes) => {
      try {
        return decodeVerdict(bytes, this.#providerId)
      } catch (err) {
        throw undecodable(describeGroup(key, symbol), err)
      }
    })
    group.timestamps.forEach((timestamp, i) => {
      const id = group.ids[i] as string
      const pick = group.picks[i] as number
      this.#latest.set(`${timestamp}:${id}`, { timestamp, id, verdict: pick === 0 ? undefined : verdicts[pick - 1] })
    })
  }

  /** The period's verdicts with timestamps `from..to`, in timestamp order; the period is left empty. */
  take(from: number, to: number): KeptVerdict[] {
    const page: KeptVerdict[] = []
    for (const { timestamp, id, verdict } of this.#latest.values()) {
      if (verdict !== undefined && timestamp >= from && timestamp <= to) page.push({ timestamp, id, verdict })
    }
    this.#latest = new Map()
    return page.sort((a, b) => a.timestamp - b.timestamp)
  }
}

/** What `read` makes of a verdict group key, or `PRICE_CORRUPT_VALUE` naming the key. */
function keyParts<T>(key: Uint8Array, read: (key: Uint8Array) => T): T {
  try {
    return read(key)
  } catch (err) {
    throw undecodable(`a signature verdicts key (0x${Buffer.from(key).toString('hex')})`, err)
  }
}

/** The group `value` of the key `key` (of `symbol`, in `period`). */
function decodeGroup(key: Uint8Array, value: Uint8Array, symbol: string, period: number): VerdictGroup {
  try {
    return decodeVerdictGroup(value, period)
  } catch (err) {
    throw undecodable(describeGroup(key, symbol), err)
  }
}

function describeGroup(key: Uint8Array, symbol: string): string {
  return `the signature verdicts of ${symbol} records (key 0x${Buffer.from(key).toString('hex')})`
}
