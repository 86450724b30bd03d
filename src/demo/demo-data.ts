/**
 * A deterministic, realistic demo data set: price records for 20 tokens,
 * each with a `liteEvmSignature` by the published demo key (demo-key.ts), one record per token every 10 s.
 * The same options always give the same records, byte for byte (a seeded PRNG, no `Math.random`, no clock).
 */

import type { DemoRecord, DemoToken } from './demo-token.js'
import { DemoWalk } from './demo-walk.js'

export type { DemoRecord, DemoToken } from './demo-token.js'
export { DEMO_KEY_TEXT, DEMO_PRIVATE_KEY, DEMO_SIGNER } from './demo-key.js'

/** The demo tokens: prices and volatilities as of mid-2024, symbols with the case RedStone uses. */
export const DEMO_TOKENS: readonly DemoToken[] = Object.freeze([
  { symbol: 'BTC', price: 67_500, dailyVolatility: 0.03, exchanges: ['binance', 'coinbasepro', 'kraken', 'bitfinex', 'bitstamp', 'okex'] },
  { symbol: 'ETH', price: 3_780, dailyVolatility: 0.035, exchanges: ['binance', 'coinbasepro', 'kraken', 'bitfinex', 'okex'] },
  { symbol: 'AR', price: 37.2, dailyVolatility: 0.06, exchanges: ['binance', 'huobi', 'gateio', 'kucoin'] },
  { symbol: 'stETH', price: 3_776, dailyVolatility: 0.035, exchanges: ['curve', 'uniswap', 'balancer'] },
  { symbol: 'USDC.e', price: 1, dailyVolatility: 0.004, peg: 1, exchanges: ['traderjoe', 'pangolin', 'curve'] },
  { symbol: 'USDT', price: 1, dailyVolatility: 0.003, peg: 1, exchanges: ['kraken', 'coinbasepro', 'bitstamp', 'bitfinex'] },
  { symbol: 'USDC', price: 1, dailyVolatility: 0.002, peg: 1, exchanges: ['binance', 'coinbasepro', 'kraken', 'uniswap'] },
  { symbol: 'DAI', price: 1, dailyVolatility: 0.004, peg: 1, exchanges: ['coinbasepro', 'kraken', 'uniswap', 'curve'] },
  { symbol: 'BNB', price: 601, dailyVolatility: 0.035, exchanges: ['binance', 'kucoin', 'gateio', 'okex', 'huobi'] },
  { symbol: 'SOL', price: 166, dailyVolatility: 0.05, exchanges: ['binance', 'coinbasepro', 'kraken', 'okex', 'bybit'] },
  { symbol: 'ADA', price: 0.452, dailyVolatility: 0.045, exchanges: ['binance', 'kraken', 'kucoin', 'bitfinex'] },
  { symbol: 'XRP', price: 0.521, dailyVolatility: 0.04, exchanges: ['binance', 'kraken', 'bitstamp', 'bitfinex', 'okex'] },
  { symbol: 'DOT', price: 7.04, dailyVolatility: 0.045, exchanges: ['binance', 'kraken', 'kucoin', 'okex'] },
  { symbol: 'AVAX', price: 35.9, dailyVolatility: 0.05, exchanges: ['binance', 'coinbasepro', 'kraken', 'traderjoe'] },
  { symbol: 'LINK', price: 17.6, dailyVolatility: 0.045, exchanges: ['binance', 'coinbasepro', 'kraken', 'uniswap', 'okex'] },
  { symbol: 'MATIC', price: 0.719, dailyVolatility: 0.045, exchanges: ['binance', 'coinbasepro', 'kucoin', 'quickswap'] },
  { symbol: 'DOGE', price: 0.161, dailyVolatility: 0.05, exchanges: ['binance', 'kraken', 'bitfinex', 'okex', 'huobi', 'kucoin'] },
  { symbol: 'LTC', price: 83.1, dailyVolatility: 0.035, exchanges: ['binance', 'coinbasepro', 'kraken', 'bitstamp'] },
  { symbol: 'UNI', price: 10.3, dailyVolatility: 0.05, exchanges: ['binance', 'coinbasepro', 'uniswap'] },
  { symbol: 'ATOM', price: 8.47, dailyVolatility: 0.045, exchanges: ['binance', 'kraken', 'kucoin', 'okex'] },
] satisfies DemoToken[])

/** Where the demo data ends unless told otherwise: a fixed instant, so the data set is reproducible. */
export const DEMO_END = Date.UTC(2024, 5, 1) // 2024-06-01T00:00:00.000Z

/** Options of {@link generateDemoRecords}. */
export interface DemoOptions {
  /** The `provider` field of every record: the id of the store's provider. */
  readonly providerId: string
  /** Records fall in `[end - durationMs, end)` (default {@link DEMO_END}). */
  readonly end?: number
  /** Length of the data set in ms (default 2 days). */
  readonly durationMs?: number
  /** Time between two records of one token in ms (default 10 s). */
  readonly stepMs?: number
  /** Same seed, same records (default `'price-store-demo'`). */
  readonly seed?: string
  /** The tokens (default {@link DEMO_TOKENS}). */
  readonly tokens?: readonly DemoToken[]
  /** Sign with the demo key (default true); false gives random Arweave-looking signatures, same records otherwise. */
  readonly signed?: boolean
}

const DAY_MS = 86_400_000

/** How many records {@link generateDemoRecords} yields for these options. */
export function countDemoRecords(options: DemoOptions): number {
  return tickCount(options) * (options.tokens ?? DEMO_TOKENS).length
}

/**
 * Yields the demo records lazily, time-major (every token's record for one
 * moment, then the next moment), oldest first. All tokens of one moment share
 * its timestamp and `permawebTx`, as one fetch of a RedStone node does.
 *
 * @example
 * for (const record of generateDemoRecords({ providerId: store.provider.id, durationMs: 3_600_000 })) ...
 */
export function* generateDemoRecords(options: DemoOptions): Generator<DemoRecord, void, undefined> {
  const tokens = options.tokens ?? DEMO_TOKENS
  const stepMs = options.stepMs ?? 10_000
  const ticks = tickCount(options)
  const start = (options.end ?? DEMO_END) - ticks * stepMs
  const walk = new DemoWalk({
    providerId: options.providerId,
    seed: options.seed ?? 'price-store-demo',
    tokens,
    stepMs,
    ...(options.signed === undefined ? {} : { signed: options.signed }),
  })
  for (let tick = 0; tick < ticks; tick++) {
    // A node's fetch lands a little after the 10 s mark; never past the next one.
    const timestamp = start + tick * stepMs + Math.floor(walk.nextFraction() * Math.min(1000, stepMs))
    yield* walk.moment(timestamp)
  }
}

function tickCount(options: DemoOptions): number {
  const stepMs = options.stepMs ?? 10_000
  if (!Number.isSafeInteger(stepMs) || stepMs < 1) throw new RangeError(`stepMs must be a whole number >= 1 (got ${stepMs})`)
  const durationMs = options.durationMs ?? 2 * DAY_MS
  if (!Number.isSafeInteger(durationMs) || durationMs < 0) {
    throw new RangeError(`durationMs must be a whole number >= 0 (got ${durationMs})`)
  }
  const end = options.end ?? DEMO_END
  const ticks = Math.floor(durationMs / stepMs)
  if (!Number.isSafeInteger(end) || end - ticks * stepMs < 0) {
    throw new RangeError(`end must be a time after the start of the data set (got ${end})`)
  }
  return ticks
}
