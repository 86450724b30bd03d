import { isPriceStoreError } from '../../errors.js'
import { throwIfAborted } from '../../rules/abort.js'
import type { HotTails } from './hot-tails.js'
import type { ReadView } from './read-view.js'
import type { Row } from '../rows/row.js'

/** How many symbols' tails load from disk at once. */
const TAIL_LOAD_CONCURRENCY = 64

/**
 * Loads the hot tails of those of `symbols` that have records (`known`) and
 * no tail yet, from one view `read` runs; tails already loaded stay
 * installed when a later load fails or the signal aborts.
 */
export async function loadTails(
  tails: HotTails, symbols: readonly string[], known: { has(symbol: string): boolean },
  read: (run: (view: ReadView) => Promise<void>) => Promise<void>, signal: AbortSignal | undefined,
): Promise<void> {
  const missing = symbols.filter((symbol) => known.has(symbol) && !tails.has(symbol))
  // Each tail's write version is taken with the view, in one synchronous step: a batch that
  // lands while the loads run must make them stale, whichever symbol they reach last.
  const versions = new Map(missing.map((symbol) => [symbol, tails.version(symbol)]))
  await read(async (view) => {
    for (let start = 0; start < missing.length; start += TAIL_LOAD_CONCURRENCY) {
      // Tails already loaded stay installed: an aborted query leaves useful work behind.
      throwIfAborted(signal)
      await Promise.all(missing.slice(start, start + TAIL_LOAD_CONCURRENCY).map(async (symbol) => {
        const version = versions.get(symbol) as number
        const rows: Row[] = []
        try {
          for await (const batch of view.scan(symbol, { reverse: true, limit: tails.perSymbol })) rows.push(...batch)
        } catch (err) {
          // A damaged entry among a symbol's newest records: that symbol gets no tail, and its
          // queries read the disk, where only those that need the damaged entry fail.
          if (isPriceStoreError(err, 'PRICE_CORRUPT_VALUE')) return
          throw err
        }
        tails.install(symbol, version, rows)
      }))
    }
  })
}
