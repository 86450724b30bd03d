import { PriceStoreError } from '../errors.js'
import type { SampleRange, ScanOptions, ScanRow, ScanSource } from './scan-source.js'

/**
 * What one reader may see of the data: records up to a time, of some
 * symbols. A service metering its readers gives each request its reader's
 * scope (a delayed tier sees only records older than its delay; a key may
 * be limited to a list of symbols), and every form answers as if the data
 * held nothing else.
 */
export interface ReadScope {
  /** Only records with a timestamp at or before this (ms since the epoch) exist for this read. */
  readonly notAfter?: number
  /** Only these symbols exist for this read. */
  readonly symbols?: ReadonlySet<string>
}

/**
 * `scope` checked: `undefined` when it is absent or limits nothing.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for a scope that is not an object, a `notAfter` that is not a safe integer, or `symbols` that is not a set of strings
 */
export function checkScope(scope: unknown): ReadScope | undefined {
  if (scope === undefined) return undefined
  if (typeof scope !== 'object' || scope === null) throw invalid('scope', 'must be an object')
  const { notAfter, symbols } = scope as { notAfter?: unknown; symbols?: unknown }
  if (notAfter !== undefined && !Number.isSafeInteger(notAfter)) throw invalid('scope.notAfter', 'must be a safe integer (ms since the epoch)')
  if (symbols !== undefined && (!(symbols instanceof Set) || [...symbols].some((symbol) => typeof symbol !== 'string'))) {
    throw invalid('scope.symbols', 'must be a Set of symbols')
  }
  return notAfter === undefined && symbols === undefined ? undefined : (scope as ReadScope)
}

function invalid(field: string, problem: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_OPTIONS', `option ${field} ${problem}`, { details: { field } })
}

/** Whether `symbol` exists for a read in `scope`. */
export function inScope(scope: ReadScope, symbol: string): boolean {
  return scope.symbols === undefined || scope.symbols.has(symbol)
}

const NOTHING: readonly ScanRow[] = []

/**
 * `source` as a read in `scope` sees it: a symbol outside the scope has no
 * rows and is not listed, and every read stops at `notAfter`. Each read of
 * the source is bounded, not filtered afterwards, so the newest-first reads
 * behind latest and as-of find the newest record in scope at once.
 * The in-force shortcut is left out when `notAfter` is set (its times may
 * lie past it), and the quality series always; the engine then reads with
 * bounded scans.
 */
export function scopedSource(source: ScanSource, scope: ReadScope): ScanSource {
  const { scanNow, bucketHeads, inForce } = source
  const { notAfter } = scope
  const bounded = (options: ScanOptions): ScanOptions | undefined => {
    if (notAfter === undefined || (options.to !== undefined && options.to <= notAfter)) return options
    if (options.from !== undefined && options.from > notAfter) return undefined
    return { ...options, to: notAfter }
  }
  const empty = async function* (): AsyncGenerator<readonly ScanRow[]> {}
  return {
    scan: (symbol, options) => {
      const within = inScope(scope, symbol) ? bounded(options) : undefined
      return within === undefined ? empty() : source.scan(symbol, within)
    },
    symbols: async () => {
      const named = (await source.symbols()).filter((symbol) => inScope(scope, symbol))
      if (notAfter === undefined) return named
      // A symbol whose records all lie past notAfter does not exist yet for this read.
      const held = await Promise.all(named.map((symbol) => hasRowBy(source, symbol, notAfter)))
      return named.filter((_, index) => held[index])
    },
    ...(scanNow === undefined ? {} : {
      scanNow: (symbol: string, options: ScanOptions) => {
        const within = inScope(scope, symbol) ? bounded(options) : undefined
        return within === undefined ? NOTHING : scanNow.call(source, symbol, within)
      },
    }),
    ...(bucketHeads === undefined ? {} : {
      bucketHeads: (symbol: string, range: SampleRange) => {
        if (!inScope(scope, symbol)) return NOTHING
        // A grid cut at notAfter would move its last bucket: the engine scans such a range instead.
        return notAfter === undefined || range.to <= notAfter ? bucketHeads.call(source, symbol, range) : undefined
      },
    }),
    ...(inForce === undefined || notAfter !== undefined ? {} : {
      inForce: (symbol: string, times: readonly number[], side: 'before' | 'after') =>
        inScope(scope, symbol) ? inForce.call(source, symbol, times, side) : times.map(() => undefined),
    }),
  }
}

/** Whether `symbol` has a row at or before `time`: its oldest row, read alone. */
async function hasRowBy(source: ScanSource, symbol: string, time: number): Promise<boolean> {
  const options: ScanOptions = { to: time, reverse: false, limit: 1 }
  const now = source.scanNow?.(symbol, options)
  if (now !== undefined) return now.length > 0
  for await (const batch of source.scan(symbol, options)) if (batch.length > 0) return true
  return false
}
