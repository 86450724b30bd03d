/** How the chart writes a symbol's prices: as many decimals as its `pricescale` has zeros. */
export interface PriceFormat {
  /** `10 ** precision`: UDF's `pricescale` of the symbol. */
  readonly pricescale: number
  /** Decimals shown. */
  readonly precision: number
  /** The smallest step of the price axis: `1 / pricescale`. */
  readonly minMove: number
}

/**
 * The format for a `pricescale` (what `/udf/symbols` answers: about six
 * significant digits at the symbol's price), or, when the server did not
 * answer one, the same rule applied to `price` here (the server's
 * `priceScale`): BTC at 67,000 gets 2 decimals, USDC at 1.0001 gets 5,
 * a token at 0.0001234 gets 9.
 */
export function priceFormat(pricescale: number | undefined, price: number): PriceFormat {
  const scale = pricescale !== undefined && Number.isFinite(pricescale) && pricescale >= 1 ? pricescale : scaleOf(price)
  const precision = Math.max(0, Math.round(Math.log10(scale)))
  return { pricescale: 10 ** precision, precision, minMove: 1 / 10 ** precision }
}

function scaleOf(price: number): number {
  if (!Number.isFinite(price) || price === 0) return 100
  const magnitude = Math.floor(Math.log10(Math.abs(price)))
  return 10 ** Math.min(12, Math.max(2, 5 - magnitude))
}
