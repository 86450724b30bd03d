/**
 * The bytes of a **verdict group** (sublevel `w`): the signature
 * verdicts one commit wrote for one symbol's records of one period. A batch
 * of 10,000 records then adds one entry per symbol and hour it touches, not
 * one per record: LevelDB's and abstract-level's cost per entry was most of
 * what a verified batch spent after its last signature was checked.
 *
 * ```
 * version (1 byte, 1) · verdict count (varint) · per distinct verdict: its verdict-codec bytes, sized ·
 * record count (varint) · per record: ms after the period's start (varint) · id (text) · pick (varint)
 * ```
 * A pick of 0 says the commit wrote the record without a verdict (the
 * policy was `off`: the record lost the verdict it had); `n` names the
 * group's `n`th verdict. Records are in the order the commit gave them.
 */
import { ByteReader, ByteWriter, MalformedBytes } from './bytes.js'
import { PERIOD_MS } from './key-layout.js'

const VERSION = 1

/** A decoded verdict group: parallel arrays, one place per record. */
export interface VerdictGroup {
  /** The group's distinct verdicts, each as verdict-codec bytes. */
  readonly verdicts: readonly Uint8Array[]
  readonly timestamps: readonly number[]
  readonly ids: readonly string[]
  /** Per record: 0 for no verdict, else 1 + the index of its verdict in {@link VerdictGroup.verdicts}. */
  readonly picks: readonly number[]
}

const writer = new ByteWriter(4096)

/**
 * The bytes of `group`, whose records all fall in `period`.
 * @throws RangeError for a record outside the period or a pick naming no verdict
 */
export function encodeVerdictGroup(group: VerdictGroup, period: number): Buffer {
  const { verdicts, timestamps, ids, picks } = group
  writer.reset().byte(VERSION).varint(verdicts.length)
  for (const verdict of verdicts) writer.sized(verdict)
  writer.varint(timestamps.length)
  const start = period * PERIOD_MS
  for (let i = 0; i < timestamps.length; i++) {
    const offset = (timestamps[i] as number) - start
    if (!(offset >= 0 && offset < PERIOD_MS)) throw new RangeError(`timestamp ${timestamps[i]} is outside period ${period}`)
    const pick = picks[i] as number
    if (!(pick >= 0 && pick <= verdicts.length)) throw new RangeError(`pick ${pick} names none of ${verdicts.length} verdicts`)
    writer.varint(offset).text(ids[i] as string).varint(pick)
  }
  return Buffer.from(writer.view())
}

/**
 * The group `bytes` hold, for `period`.
 * @throws MalformedBytes when they do not parse
 */
export function decodeVerdictGroup(bytes: Uint8Array, period: number): VerdictGroup {
  const reader = new ByteReader(bytes)
  const version = reader.byte()
  if (version !== VERSION) throw new MalformedBytes(`a verdict group of version ${version}, this store reads version ${VERSION}`)
  const verdicts: Uint8Array[] = []
  for (let count = reader.varint(); verdicts.length < count;) {
    const at = reader.sized()
    verdicts.push(reader.bytes.subarray(at, reader.offset))
  }
  const count = reader.varint()
  const timestamps: number[] = []
  const ids: string[] = []
  const picks: number[] = []
  const start = period * PERIOD_MS
  for (let i = 0; i < count; i++) {
    const offset = reader.varint()
    if (offset >= PERIOD_MS) throw new MalformedBytes(`a record ${offset} ms into a period of ${PERIOD_MS} ms`)
    timestamps.push(start + offset)
    ids.push(reader.text())
    const pick = reader.varint()
    if (pick > verdicts.length) throw new MalformedBytes(`a pick of verdict ${pick} of ${verdicts.length}`)
    picks.push(pick)
  }
  if (!reader.done) throw new MalformedBytes(`${bytes.length - reader.offset} bytes after a verdict group`)
  return { verdicts, timestamps, ids, picks }
}

/** Builds a {@link VerdictGroup} record by record, keeping each distinct verdict once. */
export class VerdictGroupBuilder {
  readonly #verdicts: Uint8Array[] = []
  readonly #timestamps: number[] = []
  readonly #ids: string[] = []
  readonly #picks: number[] = []
  /** The pick of each verdict kept, by what names it (see {@link VerdictGroupBuilder.add}). */
  readonly #known = new Map<unknown, number>()

  /**
   * Adds a record and its verdict's bytes (`undefined`: the record has no verdict). Records whose verdicts have
   * the same `name` share one copy of the bytes; by default the name is the bytes object itself, so equal bytes in
   * different objects need a name that tells them alike.
   */
  add(timestamp: number, id: string, verdict: Uint8Array | undefined, name: unknown = verdict): void {
    let pick = 0
    if (verdict !== undefined) {
      pick = this.#known.get(name) ?? 0
      if (pick === 0) {
        this.#verdicts.push(verdict)
        this.#known.set(name, (pick = this.#verdicts.length))
      }
    }
    this.#timestamps.push(timestamp)
    this.#ids.push(id)
    this.#picks.push(pick)
  }

  /** The group built. */
  finish(): VerdictGroup {
    return { verdicts: this.#verdicts, timestamps: this.#timestamps, ids: this.#ids, picks: this.#picks }
  }
}

/** `group` without the records `drop` names (by timestamp), its verdicts no record picks any more left out. */
export function withoutRecords(group: VerdictGroup, drop: (timestamp: number) => boolean): VerdictGroup {
  const kept = new VerdictGroupBuilder()
  group.timestamps.forEach((timestamp, i) => {
    if (drop(timestamp)) return
    const pick = group.picks[i] as number
    kept.add(timestamp, group.ids[i] as string, pick === 0 ? undefined : group.verdicts[pick - 1], pick)
  })
  return kept.finish()
}
