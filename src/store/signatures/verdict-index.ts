/**
 * The verdicts sublevel (`v`): one signature verdict per record verified at
 * ingest, keyed like the record (symbol, timestamp, id), written in the
 * record's own atomic write, and deleted with it by a prune. A record written
 * again without verification (the policy now `off`) loses its verdict in that
 * same write, so a verdict always describes the record as it is stored.
 */
import { undecodable } from '../../keys/entry-errors.js'
import { readVerdictKey, verdictKey, verdictRange } from '../../keys/key-layout.js'
import { decodeVerdict, encodeVerdict } from '../../keys/verdict-codec.js'
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
  /** Whether the sublevel may hold a verdict: then writes without verdicts delete the ones of their records. */
  #holdsAny = false

  constructor(level: BytesSublevel, prefix: Uint8Array, provider: Provider) {
    this.#level = level
    this.#prefix = prefix
    this.#provider = provider
  }

  /** Learns, when the store opens, whether any verdict is stored. */
  async load(): Promise<void> {
    const [first] = await this.#level.keys({ limit: 1 }).all()
    this.#holdsAny = first !== undefined
  }

  /** Puts the verdicts of a batch's records into its write; without verdicts, deletes any its records had. */
  stage(batch: RootBatch, records: readonly StoredRecord[], verdicts: readonly RecordVerdict[] | undefined): void {
    if (verdicts === undefined) {
      if (!this.#holdsAny) return
      for (const record of records) batch.del(this.#prefix, verdictKey(record.symbol, record.timestamp, record.id))
      return
    }
    this.#holdsAny = true
    // The verifier hands records with equal verdicts one shared object (nearly a whole batch has one): encoded once.
    const encoded = new Map<RecordVerdict, Buffer>()
    records.forEach((record, index) => {
      const verdict = verdicts[index] as RecordVerdict
      let bytes = encoded.get(verdict)
      if (bytes === undefined) encoded.set(verdict, (bytes = encodeVerdict(verdict, this.#provider.id)))
      batch.put(this.#prefix, verdictKey(record.symbol, record.timestamp, record.id), bytes)
    })
  }

  /** Puts the deletion of the verdicts of `symbol` with timestamps `from..to` (inclusive) into a prune's write. */
  async stageDeletes(batch: RootBatch, symbol: string, from: number, to: number): Promise<void> {
    if (!this.#holdsAny) return
    for (const key of await this.#level.keys(verdictRange(symbol, from, to)).all()) batch.del(this.#prefix, key)
  }

  /**
   * The verdicts of `symbol` with timestamps `from..to` (inclusive) in `view`, in key order (the order of the
   * symbol's records: timestamp, then id), a page at a time.
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` for a verdict that does not decode
   */
  async *read(view: ReadView, symbol: string, from: number, to: number): AsyncGenerator<KeptVerdict[]> {
    const iterator = view.entries(this.#level, verdictRange(symbol, from, to))
    try {
      for (;;) {
        const entries = await iterator.nextv(1024)
        if (entries.length === 0) return
        yield entries.map(([key, value]) => {
          try {
            const { timestamp, id } = readVerdictKey(key, symbol)
            return { timestamp, id, verdict: decodeVerdict(value, this.#provider.id) }
          } catch (err) {
            throw undecodable(`the signature verdict of a ${symbol} record (key 0x${Buffer.from(key).toString('hex')})`, err)
          }
        })
      }
    } finally {
      await iterator.close()
    }
  }
}
