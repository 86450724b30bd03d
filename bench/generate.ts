/**
 * A deterministic, seeded generator of realistic price records (issue 4):
 * 100 symbols, one record per symbol every 10 s, time-major (every symbol's
 * record of one tick, then the next tick), with RedStone-like field sizes:
 * a 344-character base64 signature, a UUID id, a 43-character permawebTx,
 * a version string and a `source` object of 3–6 exchange prices.
 *
 * The same seed and shape always give byte-identical records, so the store,
 * the SQLite baseline and a rerun on another machine all load the same data.
 */
import type { NewPriceRecord, Provider } from '../src/index.js'

/** Bump when the generated records change, so cached data sets are rebuilt. */
export const GENERATOR_VERSION = 1
export const DEFAULT_SEED = 0x5eed_2026
/** 2026-01-01T00:00:00Z: every generated timestamp is a multiple of {@link STEP_MS} from here. */
export const START_TIMESTAMP = Date.UTC(2026, 0, 1)
export const STEP_MS = 10_000
export const DAY_MS = 86_400_000
export const HOUR_MS = 3_600_000

/** 100 symbols, including the awkward-but-valid shapes of SPEC §1 (`stETH`, `USDC.e`, `BTC-USD`, `1INCH`). */
export const SYMBOLS: readonly string[] = Object.freeze([
  'BTC', 'ETH', 'USDT', 'BNB', 'SOL', 'XRP', 'USDC', 'ADA', 'DOGE', 'TRX',
  'AVAX', 'DOT', 'LINK', 'MATIC', 'TON', 'SHIB', 'LTC', 'BCH', 'UNI', 'ATOM',
  'XLM', 'ETC', 'XMR', 'OKB', 'FIL', 'HBAR', 'APT', 'ARB', 'VET', 'NEAR',
  'QNT', 'MKR', 'AAVE', 'GRT', 'ALGO', 'OP', 'SAND', 'EOS', 'EGLD', 'XTZ',
  'THETA', 'AXS', 'IMX', 'STX', 'FTM', 'MANA', 'NEO', 'KAVA', 'CRV', 'SNX',
  'RUNE', 'LDO', 'CFX', 'FLOW', 'CHZ', 'ZEC', 'KCS', 'MINA', 'DASH', 'GMX',
  'BAT', 'ENJ', '1INCH', 'COMP', 'ZIL', 'LRC', 'YFI', 'SUSHI', 'CELO', 'QTUM',
  'ANKR', 'RVN', 'ICX', 'ONT', 'WAVES', 'IOTA', 'BAL', 'GLMR', 'KSM', 'DYDX',
  'stETH', 'wstETH', 'rETH', 'cbETH', 'USDC.e', 'WBTC', 'DAI', 'FRAX', 'TUSD', 'LUSD',
  'BTC-USD', 'ETH-USD', 'sAVAX', 'PEPE', 'BLUR', 'SUI', 'SEI', 'TIA', 'JUP', 'WLD',
])

const EXCHANGES = [
  'binance', 'coinbasepro', 'kraken', 'bitfinex', 'bitstamp', 'huobipro', 'okex', 'kucoin',
  'gateio', 'bybit', 'gemini', 'mexc', 'bitget', 'uniswap', 'curve', 'sushiswap',
] as const
const VERSIONS = ['0.4', '0.4.1', '0.5.0'] as const

/** A small, fast, seedable PRNG (sfc32), good enough for benchmark data. */
export class Random {
  #a: number
  #b: number
  #c: number
  #d: number

  constructor(seed: number) {
    this.#a = 0x9e3779b9
    this.#b = 0x243f6a88
    this.#c = 0xb7e15162
    this.#d = seed >>> 0
    for (let i = 0; i < 15; i++) this.nextUint32()
  }

  nextUint32(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0
    this.#d = (this.#d + 1) | 0
    this.#a = this.#b ^ (this.#b >>> 9)
    this.#b = (this.#c + (this.#c << 3)) | 0
    this.#c = (this.#c << 21) | (this.#c >>> 11)
    this.#c = (this.#c + t) | 0
    return t >>> 0
  }

  /** A float in [0, 1). */
  next(): number {
    return this.nextUint32() / 4_294_967_296
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n)
  }

  /** Fills `buffer` with random bytes; its length must be a multiple of 4 and it must be 4-byte aligned. */
  fill(buffer: Buffer): Buffer {
    const words = new Uint32Array(buffer.buffer, buffer.byteOffset, buffer.byteLength >>> 2)
    for (let i = 0; i < words.length; i++) words[i] = this.nextUint32()
    return buffer
  }

  /** Fisher–Yates shuffle of a copy. */
  shuffled<T>(items: readonly T[]): T[] {
    const out = [...items]
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1)
      const held = out[i] as T
      out[i] = out[j] as T
      out[j] = held
    }
    return out
  }
}

function makeProvider(): Provider {
  const random = new Random(0x0badc0de)
  // RedStone's provider public key is a 4096-bit RSA modulus: 512 bytes, 683 base64url characters.
  return Object.freeze({
    name: 'redstone',
    id: 'I-5rWUehEv-MjdK9gFw09RxfSLQX9DIHxG614Wf8qo0',
    publicKey: random.fill(Buffer.from(new ArrayBuffer(512))).toString('base64url'),
  })
}

/** The provider every generated record is signed by. */
export const BENCH_PROVIDER: Provider = makeProvider()

/** A generated record, in the field order the store returns. */
export interface GeneratedRecord extends NewPriceRecord {
  readonly source: Record<string, number>
}

/** The time span and size of a data set of `days` days. */
export interface DataShape {
  readonly days: number
  readonly symbols: readonly string[]
  readonly ticks: number
  readonly records: number
  /** First and last timestamps (both inclusive). */
  readonly from: number
  readonly to: number
}

export function dataShape(days: number, symbolCount = SYMBOLS.length): DataShape {
  const ticks = Math.round((days * DAY_MS) / STEP_MS)
  if (ticks < 1) throw new Error(`a data set needs at least one tick (days=${days})`)
  return Object.freeze({
    days,
    symbols: SYMBOLS.slice(0, symbolCount),
    ticks,
    records: ticks * symbolCount,
    from: START_TIMESTAMP,
    to: START_TIMESTAMP + (ticks - 1) * STEP_MS,
  })
}

/** Generated ticks (one record per symbol each) with a timestamp in [lo, hi]. */
export function ticksIn(shape: DataShape, lo: number, hi: number): number {
  const first = Math.ceil((Math.max(lo, shape.from) - shape.from) / STEP_MS)
  const last = Math.floor((Math.min(hi, shape.to) - shape.from) / STEP_MS)
  return Math.max(0, last - first + 1)
}

/**
 * Records of one symbol a range of [from, to] at `interval` answers: one per
 * non-empty epoch-aligned bucket. A bucket at least one tick wide always
 * holds a tick; a narrower one holds at most one.
 */
export function recordsInRange(shape: DataShape, from: number, to: number, interval: number): number {
  const ticks = ticksIn(shape, from, to)
  if (ticks === 0 || interval < STEP_MS) return ticks
  const first = shape.from + Math.ceil((Math.max(from, shape.from) - shape.from) / STEP_MS) * STEP_MS
  const last = first + (ticks - 1) * STEP_MS
  return Math.floor(last / interval) - Math.floor(first / interval) + 1
}

interface SymbolState {
  readonly symbol: string
  price: number
  /** Rounding factor: about 9 significant digits at the symbol's price level. */
  readonly scale: number
  readonly exchanges: readonly string[]
}

/**
 * Yields the data set in time-major batches of `batchSize` records.
 * Records are fresh objects; a consumer may keep or drop them.
 */
export function* generateBatches(shape: DataShape, batchSize: number, seed = DEFAULT_SEED): Generator<GeneratedRecord[]> {
  const random = new Random(seed)
  const states: SymbolState[] = shape.symbols.map((symbol) => {
    const price = 10 ** (random.next() * 9 - 4) // 0.0001 .. 100,000
    return {
      symbol,
      price,
      scale: 10 ** (8 - Math.floor(Math.log10(price))),
      exchanges: random.shuffled(EXCHANGES).slice(0, 6),
    }
  })
  // Own (aligned) memory, not the shared pool, so they can be filled as 32-bit words.
  const idBytes = Buffer.from(new ArrayBuffer(16))
  const signatureBytes = Buffer.from(new ArrayBuffer(260)) // 258 used: 344 base64 characters
  const txBytes = Buffer.from(new ArrayBuffer(32)) // 43 base64url characters
  let batch: GeneratedRecord[] = []
  for (let tick = 0; tick < shape.ticks; tick++) {
    const timestamp = shape.from + tick * STEP_MS
    for (const state of states) {
      state.price *= 1 + (random.next() - 0.5) * 0.002
      const scale = state.scale
      const source: Record<string, number> = {}
      const sourceCount = 3 + random.int(4)
      for (let i = 0; i < sourceCount; i++) {
        source[state.exchanges[i] as string] = Math.round(state.price * (1 + (random.next() - 0.5) * 0.001) * scale) / scale
      }
      random.fill(idBytes)
      idBytes[6] = ((idBytes[6] as number) & 0x0f) | 0x40
      idBytes[8] = ((idBytes[8] as number) & 0x3f) | 0x80
      const hex = idBytes.toString('hex')
      batch.push({
        id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
        symbol: state.symbol,
        provider: BENCH_PROVIDER.id,
        value: Math.round(state.price * scale) / scale,
        signature: random.fill(signatureBytes).toString('base64', 0, 258),
        permawebTx: random.fill(txBytes).toString('base64url'),
        version: VERSIONS[random.int(VERSIONS.length)] as string,
        source,
        timestamp,
      })
      if (batch.length === batchSize) {
        yield batch
        batch = []
      }
    }
  }
  if (batch.length > 0) yield batch
}
