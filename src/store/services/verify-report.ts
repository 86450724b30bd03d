/**
 * `store.verify()`: a report on the signatures of a selection of records,
 * from one view: how many records carry each stored verdict (or none:
 * `unchecked`, written while verification was off), the failing ones, and,
 * with `recheck`, every record verified again from the bytes the store
 * returns. A record that passed at ingest and fails now was altered by the
 * store: the report lists it under `altered`, which must always be empty.
 */
import { PriceStoreError } from '../../errors.js'
import { optionsObject, signalOf, toExportSelection } from '../../engine/typed-queries.js'
import { throwIfAborted } from '../../rules/abort.js'
import type { OverallVerdict, RecordVerdict } from '../../trust/verdict.js'
import type { PriceRecord } from '../../types.js'
import type { ExportSelection } from '../../engine/typed-queries.js'
import type { ReadView } from '../read/read-view.js'
import type { StoreReader } from '../read/store-reader.js'
import type { IngestVerifier } from '../signatures/ingest-verifier.js'
import type { SignaturePolicy } from '../signatures/signature-options.js'
import type { KeptVerdict, VerdictIndex } from '../signatures/verdict-index.js'

/** Options of `store.verify()`: the selection of `store.export()`, and what to do with it. */
export interface VerifyOptions {
  /** Only these symbols; every symbol when left out. */
  readonly symbols?: readonly string[]
  /** Only records at or after this time (ms since the epoch). */
  readonly from?: number
  /** Only records at or before this time. */
  readonly to?: number
  /** Verify every selected record again from its stored bytes, and compare with its stored verdict (default false). */
  readonly recheck?: boolean
  /** Most failing (and altered) records listed (default 100, at most 10,000); the counts always cover everything. */
  readonly limit?: number
  readonly signal?: AbortSignal
}

/** Counts of records by verdict. */
export type VerdictCounts = Record<OverallVerdict, number>

/** A record named in a report. */
export interface ReportedRecord {
  readonly symbol: string
  readonly timestamp: number
  readonly id: string
  readonly verdict: RecordVerdict
}

/** A record whose verdict now differs from the one stored at ingest. */
export interface AlteredRecord extends ReportedRecord {
  /** The verdict kept at ingest. */
  readonly stored: RecordVerdict
}

/** What `store.verify()` found. */
export interface VerifyReport {
  /** The store's `signatures.policy`. */
  readonly policy: SignaturePolicy
  /** Records in the selection. */
  readonly records: number
  /** Records by the verdict stored at ingest; `unchecked`: none stored (written while verification was off). */
  readonly stored: VerdictCounts & { readonly unchecked: number }
  /** Records whose stored verdict is not `valid`, the first `limit` in export order. */
  readonly failing: readonly ReportedRecord[]
  /** With `recheck`: every record verified again, from the record as the store returns it. */
  readonly recheck?: {
    readonly verdicts: VerdictCounts
    /** Records whose verdict now is not `valid`, the first `limit`. */
    readonly failing: readonly ReportedRecord[]
    /** Records stored with a `valid` verdict that are not valid now: the store changed them. Always empty in a sound store. */
    readonly altered: readonly AlteredRecord[]
  }
  /** Whether a list above was cut at `limit`. */
  readonly truncated: boolean
}

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 10_000
/** Records verified again per call to the workers. */
const RECHECK_BATCH = 2_000

/** What verify reads. */
export interface VerifySource {
  readonly view: ReadView
  readonly verdicts: VerdictIndex
  readonly ingest: IngestVerifier
}

/**
 * Checks verify's own options (the selection is checked by the caller, as for export).
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (details.parameter `recheck` or `limit`)
 */
export function verifyFlags(rawOptions: unknown): { recheck: boolean; limit: number } {
  const { recheck = false, limit = DEFAULT_LIMIT } = optionsObject<VerifyOptions>(rawOptions)
  if (typeof recheck !== 'boolean') throw invalid('recheck', 'must be true or false')
  if (!Number.isSafeInteger(limit) || limit < 0 || limit > MAX_LIMIT) throw invalid('limit', `must be an integer from 0 to ${MAX_LIMIT}`)
  return { recheck, limit }
}

/** The report over `selection` in `source.view`. */
export async function verifyRecords(
  source: VerifySource, selection: ExportSelection, flags: { recheck: boolean; limit: number }, signal: AbortSignal | undefined,
): Promise<VerifyReport> {
  const report = new ReportBuilder(source.ingest.policy, flags)
  const pending: { record: PriceRecord; stored: RecordVerdict | undefined }[] = []
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return
    const now = await source.ingest.verify(pending.map(({ record }) => record))
    pending.forEach(({ record, stored }, index) => report.rechecked(record, stored, now[index] as RecordVerdict))
    pending.length = 0
  }
  const wanted = selection.symbols === undefined ? undefined : new Set(selection.symbols)
  const from = selection.from ?? 0
  const to = selection.to ?? Number.MAX_SAFE_INTEGER
  for (const symbol of await source.view.symbols()) {
    if (wanted !== undefined && !wanted.has(symbol)) continue
    const verdicts = new VerdictCursor(source.verdicts.read(source.view, symbol, from, to))
    for await (const rows of source.view.scan(symbol, { reverse: false, from, to })) {
      throwIfAborted(signal)
      for (const row of rows) {
        const stored = await verdicts.take(row.timestamp, row.id)
        report.stored(symbol, row.timestamp, row.id, stored)
        if (!flags.recheck) continue
        pending.push({ record: row.record(), stored })
        if (pending.length >= RECHECK_BATCH) await flush()
      }
    }
    await verdicts.close()
  }
  await flush()
  return report.finish()
}

/** Walks a symbol's verdicts alongside its records (both in timestamp order). */
class VerdictCursor {
  readonly #pages: AsyncGenerator<KeptVerdict[]>
  #page: KeptVerdict[] = []
  #at = 0
  #done = false
  /** The verdicts of the timestamp being matched, by id. */
  #current = new Map<string, RecordVerdict>()
  #currentTimestamp = -1

  constructor(pages: AsyncGenerator<KeptVerdict[]>) {
    this.#pages = pages
  }

  /** The verdict of the record at (`timestamp`, `id`); records must be asked for in timestamp order. */
  async take(timestamp: number, id: string): Promise<RecordVerdict | undefined> {
    if (timestamp !== this.#currentTimestamp) {
      this.#current = new Map()
      this.#currentTimestamp = timestamp
      for (let next = await this.#peek(); next !== undefined && next.timestamp <= timestamp; next = await this.#peek()) {
        if (next.timestamp === timestamp) this.#current.set(next.id, next.verdict)
        this.#at++
      }
    }
    return this.#current.get(id)
  }

  async close(): Promise<void> {
    await this.#pages.return(undefined)
  }

  async #peek(): Promise<KeptVerdict | undefined> {
    while (this.#at >= this.#page.length && !this.#done) {
      const next = await this.#pages.next()
      if (next.done === true) this.#done = true
      else {
        this.#page = next.value
        this.#at = 0
      }
    }
    return this.#page[this.#at]
  }
}

/** Counts and lists as records come. */
class ReportBuilder {
  readonly #policy: SignaturePolicy
  readonly #limit: number
  readonly #recheck: boolean
  #records = 0
  readonly #stored: VerdictCounts & { unchecked: number } = { ...zeroCounts(), unchecked: 0 }
  readonly #failing: ReportedRecord[] = []
  readonly #now = zeroCounts()
  readonly #nowFailing: ReportedRecord[] = []
  readonly #altered: AlteredRecord[] = []
  #truncated = false

  constructor(policy: SignaturePolicy, flags: { recheck: boolean; limit: number }) {
    this.#policy = policy
    this.#limit = flags.limit
    this.#recheck = flags.recheck
  }

  stored(symbol: string, timestamp: number, id: string, verdict: RecordVerdict | undefined): void {
    this.#records++
    if (verdict === undefined) {
      this.#stored.unchecked++
      return
    }
    this.#stored[verdict.overall]++
    if (verdict.overall !== 'valid') this.#list(this.#failing, { symbol, timestamp, id, verdict })
  }

  rechecked(record: PriceRecord, stored: RecordVerdict | undefined, now: RecordVerdict): void {
    this.#now[now.overall]++
    if (now.overall === 'valid') return
    const named = { symbol: record.symbol, timestamp: record.timestamp, id: record.id, verdict: now }
    this.#list(this.#nowFailing, named)
    if (stored?.overall === 'valid') this.#list(this.#altered, { ...named, stored })
  }

  finish(): VerifyReport {
    return {
      policy: this.#policy,
      records: this.#records,
      stored: this.#stored,
      failing: this.#failing,
      ...(this.#recheck ? { recheck: { verdicts: this.#now, failing: this.#nowFailing, altered: this.#altered } } : {}),
      truncated: this.#truncated,
    }
  }

  #list<T>(list: T[], item: T): void {
    if (list.length < this.#limit) list.push(item)
    else this.#truncated = true
  }
}

function zeroCounts(): VerdictCounts {
  return { valid: 0, unsigned: 0, invalid: 0, malformed: 0, 'signer-not-allowed': 0 }
}

function invalid(parameter: string, rule: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_QUERY', `verify option ${parameter} ${rule}`, { details: { parameter } })
}

/**
 * `store.verify()` on a store's parts: checks the options, then reports from one view.
 * @throws PriceStoreError as {@link PriceStore.export} for the selection, `PRICE_INVALID_QUERY` (`recheck`, `limit`)
 */
export async function verifyWith(
  parts: { readonly reader: StoreReader; readonly verdicts: VerdictIndex; readonly ingest: IngestVerifier }, options: unknown,
): Promise<VerifyReport> {
  const selection = toExportSelection(options)
  const flags = verifyFlags(options)
  const signal = signalOf(options)
  return parts.reader.read('verify the signatures', (view) => verifyRecords({ view, verdicts: parts.verdicts, ingest: parts.ingest }, selection, flags, signal))
}
