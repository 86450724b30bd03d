/**
 * A deterministic, realistic demo data set: signed-looking price records for
 * 20 tokens, one record per token every 10 s. The same options always give
 * the same records, byte for byte (a seeded PRNG, no `Math.random`, no clock).
 */

/** One demo token: its starting price, daily volatility and the exchanges quoting it. */
import type { NewPriceRecord } from '../types.js'
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
}

/** A demo price record, shaped like RedStone's: the fields in RedStone's order. */
export interface DemoRecord extends NewPriceRecord {
  readonly source: Readonly<Record<string, number>>
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
  const random = createRandom(options.seed ?? 'price-store-demo')
  const bytes = new Uint8Array(256)
  const randomBase64 = (length: number, encoding: 'base64' | 'base64url'): string => {
    random.fill(bytes, length)
    return Buffer.from(bytes.buffer, 0, length).toString(encoding)
  }
  const stepsPerDay = DAY_MS / stepMs
  const prices = tokens.map((token) => token.price)

  for (let tick = 0; tick < ticks; tick++) {
    // A node's fetch lands a little after the 10 s mark; never past the next one.
    const timestamp = start + tick * stepMs + Math.floor(random.next() * Math.min(1000, stepMs))
    const permawebTx = randomBase64(32, 'base64url')
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i] as DemoToken
      const sigma = token.dailyVolatility / Math.sqrt(stepsPerDay)
      let price = (prices[i] as number) * Math.exp(sigma * random.normal())
      // Stablecoins wander around their peg instead of away from it.
      if (token.peg !== undefined) price = token.peg + (price - token.peg) * 0.98
      prices[i] = price
      const source: Record<string, number> = {}
      const quotes: number[] = []
      for (const exchange of token.exchanges) {
        const quote = round(price * (1 + 0.0004 * random.normal()))
        source[exchange] = quote
        quotes.push(quote)
      }
      yield {
        id: uuid(random, bytes),
        symbol: token.symbol,
        provider: options.providerId,
        value: round(median(quotes)),
        signature: randomBase64(256, 'base64'),
        permawebTx,
        version: '0.4',
        source,
        timestamp,
      }
    }
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

/** Eight significant digits, like an exchange quote. */
function round(value: number): number {
  return Number(value.toPrecision(8))
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

function uuid(random: Random, bytes: Uint8Array): string {
  random.fill(bytes, 16)
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40 // version 4
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80 // RFC 4122 variant
  const hex = Buffer.from(bytes.buffer, 0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

interface Random {
  /** A float in [0, 1). */
  next(): number
  /** A standard normal deviate. */
  normal(): number
  /** Fills the first `length` bytes of `bytes`. */
  fill(bytes: Uint8Array, length: number): void
}

/**
 * sfc32 (Chris Doty-Humphrey's Small Fast Counter, 128-bit state), seeded
 * from the string through cyrb128: fast, well distributed, and the same on
 * every platform, which is all a demo needs (not for cryptography).
 */
function createRandom(seed: string): Random {
  let [a, b, c, d] = cyrb128(seed)
  const nextUint32 = (): number => {
    a |= 0
    b |= 0
    c |= 0
    d |= 0
    const t = (((a + b) | 0) + d) | 0
    d = (d + 1) | 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) | 0
    c = (c << 21) | (c >>> 11)
    c = (c + t) | 0
    return t >>> 0
  }
  for (let i = 0; i < 15; i++) nextUint32() // mix the seed in before use
  const next = (): number => nextUint32() / 4_294_967_296
  return {
    next,
    normal() {
      // Box-Muller; 1 - u keeps the logarithm away from 0.
      const u = 1 - next()
      const v = next()
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
    },
    fill(bytes, length) {
      for (let i = 0; i < length; i += 4) {
        const word = nextUint32()
        bytes[i] = word & 0xff
        if (i + 1 < length) bytes[i + 1] = (word >>> 8) & 0xff
        if (i + 2 < length) bytes[i + 2] = (word >>> 16) & 0xff
        if (i + 3 < length) bytes[i + 3] = word >>> 24
      }
    },
  }
}

function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703
  let h2 = 3144134277
  let h3 = 1013904242
  let h4 = 2773480762
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i)
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067)
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233)
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213)
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044597)
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067)
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233)
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213)
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044597)
  h1 ^= h2 ^ h3 ^ h4
  h2 ^= h1
  h3 ^= h1
  h4 ^= h1
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0]
}
