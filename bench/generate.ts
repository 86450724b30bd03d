/**
 * A deterministic, seeded generator of realistic price records (issue 4):
 * 100 symbols, one record per symbol every 10 s, time-major (every symbol's
 * record of one tick, then the next tick), shaped like RedStone's legacy
 * records (issue 20): a 684-character base64 signature (RSA-4096, the size
 * of the provider's key), a UUID id, a 43-character permawebTx, a version
 * string and a `source` object of 5–30 exchanges per symbol. As in captured
 * API answers, most source values are unrounded doubles (an exchange's
 * price converted through a USDT rate: `30376.005633250003`), some are
 * rounded to the exchange's tick, and a failed fetch is the string
 * `"error"` (redstone-node's `VALUE_FOR_FAILED_FETCHER`).
 *
 * The same seed and shape always give byte-identical records, so the store,
 * the SQLite baseline and a rerun on another machine all load the same data.
 */
import type { NewPriceRecord, Provider } from '../src/index.js'

/** Bump when the generated records change, so cached data sets are rebuilt. */
export const GENERATOR_VERSION = 2
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

/** Source names as captured RedStone answers spell them (ccxt ids plus aggregators). */
const EXCHANGES = [
  'ascendex', 'band', 'bequant', 'binance', 'binanceus', 'binanceusdm', 'bitcoincom', 'bitfinex2',
  'bittrex', 'btcturk', 'cex', 'coinbaseprime', 'coinbasepro', 'coingecko', 'currencycom', 'hitbtc',
  'hollaex', 'huobipro', 'kaiko', 'kraken', 'kucoin', 'lbank', 'oceanex', 'okx', 'probit',
  'bitstamp', 'gateio', 'bybit', 'gemini', 'mexc', 'bitget', 'uniswap', 'curve', 'sushiswap', 'coinmarketcap',
] as const
/** Sources per symbol: 5..30, as in captured answers (a major token has about 25). */
const MIN_SOURCES = 5
const MAX_SOURCES = 30
/** Share of source entries that are a failed fetch (`"error"`). */
const FAILED_FETCH_SHARE = 0.02
/** What a failed fetch leaves in `source` (redstone-node's VALUE_FOR_FAILED_FETCHER). */
export const FAILED_FETCH_VALUE = 'error'
/** 512 bytes (RSA-4096) in base64: 684 characters. */
export const SIGNATURE_BYTES = 512
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
  readonly source: Record<string, number | string>
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

/** One source of a symbol: its name, its offset from the market, and whether it reports rounded prices. */
interface SourceState {
  readonly name: string
  /** A lasting premium or discount (most near 0; a few, like a USD-only venue, further off). */
  readonly bias: number
  /** Rounding factor of an exchange that reports its tick price; 0 for an unrounded (converted) price. */
  readonly tick: number
}

/** A symbol's state in a generated history: its price walk and its sources. */
export interface SymbolState {
  readonly symbol: string
  price: number
  /** Rounding factor: about 9 significant digits at the symbol's price level. */
  readonly scale: number
  readonly sources: readonly SourceState[]
}

/** A symbol's starting state: a price level, and 5..30 sources with their offsets and roundings. */
export function newSymbolState(random: Random, symbol: string): SymbolState {
  const price = 10 ** (random.next() * 9 - 4) // 0.0001 .. 100,000
  const scale = 10 ** (8 - Math.floor(Math.log10(price)))
  const count = MIN_SOURCES + random.int(MAX_SOURCES - MIN_SOURCES + 1)
  const sources = random.shuffled(EXCHANGES).slice(0, count).map((name): SourceState => {
    const far = random.next() < 0.1
    const bias = (random.next() - 0.5) * (far ? 0.1 : 0.002)
    const tick = random.next() < 0.4 ? 10 ** (4 - Math.floor(Math.log10(price)) + random.int(3)) : 0
    return { name, bias, tick }
  })
  return { symbol, price, scale, sources }
}

/** Reusable scratch buffers of a record factory (own, aligned memory: filled as 32-bit words). */
export interface RecordScratch {
  readonly id: Buffer
  readonly signature: Buffer
  readonly tx: Buffer
}

export function newRecordScratch(): RecordScratch {
  return { id: Buffer.from(new ArrayBuffer(16)), signature: Buffer.from(new ArrayBuffer(SIGNATURE_BYTES)), tx: Buffer.from(new ArrayBuffer(32)) }
}

/** A random version-4 UUID. */
export function randomUuid(random: Random, scratch: RecordScratch): string {
  const idBytes = random.fill(scratch.id)
  idBytes[6] = ((idBytes[6] as number) & 0x0f) | 0x40
  idBytes[8] = ((idBytes[8] as number) & 0x3f) | 0x80
  const hex = idBytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * The next record of a symbol at `timestamp`: its price walks a step, each
 * source reports it (with its offset and rounding) or failed. `id` keeps a
 * given id (a correction rewrites a stored record); otherwise a fresh UUID.
 */
export function nextRecord(random: Random, state: SymbolState, timestamp: number, scratch: RecordScratch, provider: string, id?: string): GeneratedRecord {
  state.price *= 1 + (random.next() - 0.5) * 0.002
  const { price, scale } = state
  const source: Record<string, number | string> = {}
  for (const s of state.sources) {
    if (random.next() < FAILED_FETCH_SHARE) {
      source[s.name] = FAILED_FETCH_VALUE
      continue
    }
    const quoted = price * (1 + s.bias + (random.next() - 0.5) * 0.001)
    source[s.name] = s.tick === 0 ? quoted : Math.round(quoted * s.tick) / s.tick
  }
  return {
    id: id ?? randomUuid(random, scratch),
    symbol: state.symbol,
    provider,
    value: Math.round(price * scale) / scale,
    signature: random.fill(scratch.signature).toString('base64'),
    permawebTx: random.fill(scratch.tx).toString('base64url'),
    version: VERSIONS[random.int(VERSIONS.length)] as string,
    source,
    timestamp,
  }
}

/**
 * Yields the data set in time-major batches of `batchSize` records.
 * Records are fresh objects; a consumer may keep or drop them.
 */
export function* generateBatches(shape: DataShape, batchSize: number, seed = DEFAULT_SEED): Generator<GeneratedRecord[]> {
  const random = new Random(seed)
  const states = shape.symbols.map((symbol) => newSymbolState(random, symbol))
  const scratch = newRecordScratch()
  let batch: GeneratedRecord[] = []
  for (let tick = 0; tick < shape.ticks; tick++) {
    const timestamp = shape.from + tick * STEP_MS
    for (const state of states) {
      batch.push(nextRecord(random, state, timestamp, scratch, BENCH_PROVIDER.id))
      if (batch.length === batchSize) {
        yield batch
        batch = []
      }
    }
  }
  if (batch.length > 0) yield batch
}
