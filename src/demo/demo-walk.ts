import type { DemoRecord, DemoToken } from './demo-token.js'
import { demoLiteSignature } from './demo-key.js'
import { createRandom, type Random } from './demo-random.js'

/** Options of a {@link DemoWalk}. */
export interface DemoWalkOptions {
  /** The `provider` field of every record. */
  readonly providerId: string
  /** Same seed (and same calls), same records. */
  readonly seed: string
  /** The tokens, in the order each moment lists them. */
  readonly tokens: readonly DemoToken[]
  /** Time between two moments (ms): it sets how far a price moves in one step. */
  readonly stepMs: number
  /** Each token's price to go on from, by symbol (default the token's own `price`). */
  readonly start?: ReadonlyMap<string, number>
  /**
   * Sign each record with the published demo key (a `liteEvmSignature`, no
   * Arweave `signature`; default true), or give it a random 344-character
   * `signature` instead, for volume where signatures do not matter (signing
   * costs ~70 µs a record). Either way the walk draws the same numbers, so
   * ids, values and timestamps are the same.
   */
  readonly signed?: boolean
}

const DAY_MS = 86_400_000

/**
 * A seeded random walk of the demo tokens' prices, one moment at a time:
 * each moment moves every token's price by a log-normal step (stablecoins
 * are pulled back to their peg) and makes its record, quoted by the
 * token's exchanges, as one fetch of a RedStone node would, signed with the
 * published demo key (demo-key.ts). It makes both
 * the demo data set ({@link generateDemoRecords}) and the live demo's
 * records, which go on from the prices a store holds.
 */
export class DemoWalk {
  readonly #options: DemoWalkOptions
  readonly #random: Random
  readonly #bytes = new Uint8Array(256)
  readonly #prices: number[]
  readonly #sigmas: number[]

  constructor(options: DemoWalkOptions) {
    this.#options = options
    this.#random = createRandom(options.seed)
    this.#prices = options.tokens.map((token) => options.start?.get(token.symbol) ?? token.price)
    const stepsPerDay = DAY_MS / options.stepMs
    this.#sigmas = options.tokens.map((token) => token.dailyVolatility / Math.sqrt(stepsPerDay))
  }

  /** A float in [0, 1) from the walk's own generator (where a moment lands after its mark). */
  nextFraction(): number {
    return this.#random.next()
  }

  /** Each token's price now, by symbol. */
  prices(): Map<string, number> {
    return new Map(this.#options.tokens.map((token, i) => [token.symbol, this.#prices[i] as number]))
  }

  /** The next moment: every token's next price as a record at `timestamp`, all sharing one `permawebTx`. */
  moment(timestamp: number): DemoRecord[] {
    const { tokens, providerId } = this.#options
    const random = this.#random
    const permawebTx = this.#randomBase64(32, 'base64url')
    const records: DemoRecord[] = []
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i] as DemoToken
      let price = (this.#prices[i] as number) * Math.exp((this.#sigmas[i] as number) * random.normal())
      // Stablecoins wander around their peg instead of away from it.
      if (token.peg !== undefined) price = token.peg + (price - token.peg) * 0.98
      this.#prices[i] = price
      const source: Record<string, number> = {}
      const quotes: number[] = []
      for (const exchange of token.exchanges) {
        const quote = round(price * (1 + 0.0004 * random.normal()))
        source[exchange] = quote
        quotes.push(quote)
      }
      const id = this.#uuid()
      const value = round(median(quotes))
      // Drawn even when signed, so a signed and an unsigned walk of one seed make the same records.
      const randomSignature = this.#randomBase64(256, 'base64')
      records.push(
        this.#options.signed === false
          ? { id, symbol: token.symbol, provider: providerId, value, signature: randomSignature, permawebTx, version: '0.4', source, timestamp }
          : { id, symbol: token.symbol, provider: providerId, value, liteEvmSignature: demoLiteSignature({ symbol: token.symbol, value, timestamp }), permawebTx, version: '0.4', source, timestamp },
      )
    }
    return records
  }

  #randomBase64(length: number, encoding: 'base64' | 'base64url'): string {
    this.#random.fill(this.#bytes, length)
    return Buffer.from(this.#bytes.buffer, 0, length).toString(encoding)
  }

  #uuid(): string {
    const bytes = this.#bytes
    this.#random.fill(bytes, 16)
    bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40 // version 4
    bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80 // RFC 4122 variant
    const hex = Buffer.from(bytes.buffer, 0, 16).toString('hex')
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  }
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
