import { setOwn } from '../../rules/own-keys.js'

/** How many per-symbol reads of the several-tokens and TWAP forms are in flight at once. */
const SEVERAL_CONCURRENCY = 64

/** Runs `task` for each index, at most {@link SEVERAL_CONCURRENCY} at once. */
export async function inBatches(indexes: readonly number[], task: (index: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < indexes.length; start += SEVERAL_CONCURRENCY) {
    await Promise.all(indexes.slice(start, start + SEVERAL_CONCURRENCY).map(task))
  }
}

/**
 * The answer of a keyed form: `itemOf` each symbol's find, in the symbols'
 * order, symbols without a find left out.
 */
export function keyedBySymbol<F, T>(symbols: readonly string[], found: readonly (F | undefined)[], itemOf: (find: F) => T): Record<string, T> {
  const keyed: Record<string, T> = {}
  symbols.forEach((symbol, i) => {
    const find = found[i]
    if (find !== undefined) setOwn(keyed, symbol, itemOf(find))
  })
  return keyed
}
