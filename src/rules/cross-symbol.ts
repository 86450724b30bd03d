/**
 * The rules of a cross-rate query's parameters. A cross rate is asked with two
 * stored symbols, `quote` and `base` (the price of one `quote` in `base`), never
 * as `symbol=ETH/BTC`: `/` is a legal character of a stored symbol (only
 * whitespace, commas and control characters are not), so `ETH/BTC` may be a
 * symbol of its own and must keep answering as one.
 */
import type { PriceStoreError } from '../errors.js'
import { fail } from './query-errors.js'
import { symbolProblem } from './text-rules.js'

/** A checked cross-rate pair, with the largest age allowed between its legs (ms), if any. */
export interface CrossPair {
  readonly quote: string
  readonly base: string
  readonly maxAge: number | undefined
}

/** Checks a cross-rate pair; returns it, or the coded error that refuses it. */
export function checkCrossPair(quote: unknown, base: unknown, maxAge: unknown): CrossPair | PriceStoreError {
  const quoteProblem = symbolProblem(quote)
  if (quoteProblem !== undefined) return fail('PRICE_INVALID_SYMBOL', 'quote', `quote ${quoteProblem}`)
  const baseProblem = symbolProblem(base)
  if (baseProblem !== undefined) return fail('PRICE_INVALID_SYMBOL', 'base', `base ${baseProblem}`)
  if (quote === base) return fail('PRICE_INVALID_QUERY', 'base', 'base and quote must be two different symbols')
  if (maxAge !== undefined && (typeof maxAge !== 'number' || !Number.isSafeInteger(maxAge) || maxAge < 0)) {
    return fail('PRICE_INVALID_QUERY', 'maxAge', 'maxAge must be a non-negative integer number of milliseconds')
  }
  return { quote: quote as string, base: base as string, maxAge: maxAge as number | undefined }
}
