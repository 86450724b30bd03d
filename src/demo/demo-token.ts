import type { NewPriceRecord } from '../types.js'

/** One demo token: its starting price, daily volatility and the exchanges quoting it. */
export interface DemoToken {
  readonly symbol: string
  /** Price at the start of the data set (USD). */
  readonly price: number
  /** Standard deviation of the daily log return (0.03 = 3 %). */
  readonly dailyVolatility: number
  /** Exchanges in `source` (3 to 6). */
  readonly exchanges: readonly string[]
  /** Stablecoins are pulled back to their peg instead of drifting. */
  readonly peg?: number
}

/** A demo price record, shaped like RedStone's: the fields in RedStone's order. */
export interface DemoRecord extends NewPriceRecord {
  readonly source: Readonly<Record<string, number>>
}
