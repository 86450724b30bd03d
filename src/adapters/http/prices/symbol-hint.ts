/*
 * `symbol=ETH/BTC` names a stored symbol (`/` is legal in one), so when none
 * is stored the answer stays RedStone's `[]`, byte for byte; a header says
 * what was probably meant: `x-price-store-hint`, which no RedStone client
 * reads, so none can break.
 */
import type { PriceAnswer } from '../../../types.js'
import type { HttpAnswer } from '../core/answer.js'

/** The header holding the hint. */
export const HINT_HEADER = 'x-price-store-hint'

/** A store that lists its symbols (`PriceStore.symbols`). */
interface SymbolLister {
  symbols(): Promise<readonly string[]>
}

/** The `quote` and `base` a request's single `symbol=Q/B` may have meant, when it names one. */
export function slashPairOf(params: URLSearchParams): { readonly symbol: string; readonly quote: string; readonly base: string } | undefined {
  const symbols = params.getAll('symbol')
  if (symbols.length !== 1 || params.has('symbols') || params.has('quote') || params.has('base')) return undefined
  const symbol = symbols[0] as string
  const parts = symbol.split('/')
  // Header values are ASCII here: a symbol outside printable ASCII gets no hint rather than a mangled one.
  if (parts.length !== 2 || parts.some((part) => part === '') || !/^[\x21-\x7e]+$/.test(symbol)) return undefined
  return { symbol, quote: parts[0] as string, base: parts[1] as string }
}

/**
 * `answer` with the hint header when it is an empty list for `symbol=Q/B`
 * and the store holds no symbol `Q/B`; `answer` itself otherwise (and when
 * the store cannot list its symbols, or listing fails).
 */
export async function withSymbolHint(answer: HttpAnswer, result: PriceAnswer | { readonly length: number }, params: URLSearchParams, store: object): Promise<HttpAnswer> {
  const pair = slashPairOf(params)
  // Only a list answers an empty `[]` (the keyed forms answer objects).
  const empty = 'length' in result && (result as { readonly length: unknown }).length === 0
  if (pair === undefined || answer.status !== 200 || !empty) return answer
  const lister = store as Partial<SymbolLister>
  if (typeof lister.symbols !== 'function') return answer
  const stored = await lister.symbols().catch(() => undefined)
  if (stored === undefined || stored.includes(pair.symbol)) return answer
  const hint = `no symbol ${pair.symbol} is stored; for the price of ${pair.quote} in ${pair.base} ask quote=${encodeURIComponent(pair.quote)}&base=${encodeURIComponent(pair.base)}`
  return { ...answer, headers: { ...answer.headers, [HINT_HEADER]: hint } }
}
