/**
 * What a prune is asked to do (its options, checked) and how far one under
 * way has got; the steps themselves are in pruner.ts.
 */
import { describeValue } from '../../errors.js'
import { checkSignal } from '../../rules/abort.js'
import { compareIds } from '../../rules/compare-ids.js'
import { fail } from '../../rules/query-errors.js'
import { checkSymbol } from '../../engine/parse-query.js'
import { periodOf } from '../../keys/key-layout.js'

/** What {@link PriceStore.prune} takes. */
export interface PruneOptions {
  /** Records with `timestamp < before` go (ms since the epoch, a safe integer >= 0); nothing at or after it is touched. */
  readonly before: number
  /** Only this symbol's records; every symbol's when left out. */
  readonly symbol?: string
  /** Count what would go, and remove nothing. */
  readonly dryRun?: boolean
  /** Stops the prune between two steps (what was removed stays removed) with `PRICE_ABORTED`. */
  readonly signal?: AbortSignal
  /** Called between turns of steps (and at the end) with the totals so far. */
  readonly onProgress?: (progress: PruneResult) => void
}

/** What a prune removed (or, in a dry run, would remove). */
export interface PruneResult {
  /** Records removed. */
  readonly records: number
  /** Hours (UTC) that lost records, whole or in part. */
  readonly hours: number
  /** Symbols left with no record, which left the symbol index (`symbols()`), in UTF-8 byte order. */
  readonly symbols: readonly string[]
}

/** Checked prune options. */
export interface PruneRequest {
  readonly before: number
  readonly symbol: string | undefined
  readonly dryRun: boolean
  readonly signal: AbortSignal | undefined
  readonly onProgress: ((progress: PruneResult) => void) | undefined
}

/**
 * Checks the options of a prune.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (options, `dryRun`, `onProgress`, `signal`),
 *   `PRICE_INVALID_RANGE` (`before`), `PRICE_INVALID_SYMBOL` (`symbol`)
 */
export function toPruneRequest(options: unknown): PruneRequest {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw fail('PRICE_INVALID_QUERY', 'options', `prune options must be an object { before, symbol? } (got ${describeValue(options)})`)
  }
  const { before, symbol, dryRun = false, signal, onProgress } = options as Partial<PruneOptions>
  if (typeof before !== 'number' || !Number.isSafeInteger(before) || before < 0) {
    throw fail('PRICE_INVALID_RANGE', 'before', `before must be a safe integer >= 0, ms since the epoch (got ${describeValue(before)})`)
  }
  if (symbol !== undefined) checkSymbol('symbol', symbol)
  if (typeof dryRun !== 'boolean') throw fail('PRICE_INVALID_QUERY', 'dryRun', `dryRun must be a boolean (got ${describeValue(dryRun)})`)
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw fail('PRICE_INVALID_QUERY', 'onProgress', `onProgress must be a function (got ${describeValue(onProgress)})`)
  }
  return { before, symbol, dryRun, signal: checkSignal(signal), onProgress }
}

/** One prune under way: where it is, and what it removed so far. */
export class PruneRun {
  readonly request: PruneRequest
  /** The last hour holding records to remove. */
  readonly lastHour: number
  /** Every symbol: the last chunk key done. One symbol: the next hour to look at. */
  cursor: Buffer | undefined
  nextHour = 0
  /** A lower bound on each symbol's newest sealed hour (seals only add later ones), to skip most emptiness checks. */
  readonly newest = new Map<string, number>()
  #records = 0
  #hours = 0
  #lastHour = -1
  readonly #emptied: string[] = []

  constructor(request: PruneRequest) {
    this.request = request
    this.lastHour = periodOf(request.before - 1)
  }

  /** The totals so far. */
  result(): PruneResult {
    return Object.freeze({ records: this.#records, hours: this.#hours, symbols: Object.freeze([...this.#emptied].sort(compareIds)) })
  }

  count(period: number, records: number, emptied: readonly string[]): void {
    this.#records += records
    if (records > 0 && period !== this.#lastHour) this.#hours++
    if (records > 0) this.#lastHour = period
    this.#emptied.push(...emptied)
  }
}
