import type { AbstractLevel, AbstractSnapshot, AbstractSublevel } from 'abstract-level'
import type { ScanOptions, ScanRow, ScanSource } from '../engine/scan-source.js'
import { readTimestamp, symbolPrefix, symbolRange } from '../keys/key-codec.js'
import { decodeValue } from '../keys/value-codec.js'
import type { PriceRecord, Provider } from '../types.js'

/** A sublevel whose keys and values are raw bytes. */
export type BytesSublevel = AbstractSublevel<AbstractLevel<any, any, any>, any, Uint8Array, Uint8Array>
/** A sublevel whose keys are symbols (UTF-8) and whose values are unused. */
export type SymbolSublevel = AbstractSublevel<AbstractLevel<any, any, any>, any, string, string>

// One round trip to LevelDB's thread pool costs 30-190 µs, so fetch many entries per call.
const SCAN_BATCH = 4096
const SCAN_READ_AHEAD_BYTES = 4 * 1024 * 1024

/**
 * The store's side of the engine's port: scans of key ranges, optionally
 * pinned to a snapshot so several reads share one view of the data.
 */
export class LevelScanSource implements ScanSource {
  readonly #prices: BytesSublevel
  readonly #symbols: SymbolSublevel
  readonly #provider: Provider
  readonly #snapshot: AbstractSnapshot | undefined

  constructor(prices: BytesSublevel, symbols: SymbolSublevel, provider: Provider, snapshot?: AbstractSnapshot) {
    this.#prices = prices
    this.#symbols = symbols
    this.#provider = provider
    this.#snapshot = snapshot
  }

  async *scan(symbol: string, options: ScanOptions): AsyncGenerator<readonly ScanRow[]> {
    const prefixLength = symbolPrefix(symbol).length
    const iteratorOptions = {
      ...symbolRange(symbol, options.from, options.to),
      reverse: options.reverse,
      limit: options.limit ?? -1,
      // classic-level's read-ahead; other implementations ignore it.
      highWaterMarkBytes: SCAN_READ_AHEAD_BYTES,
      ...(this.#snapshot === undefined ? {} : { snapshot: this.#snapshot }),
    }
    const iterator = this.#prices.iterator(iteratorOptions)
    try {
      const batchSize = Math.min(options.limit ?? SCAN_BATCH, SCAN_BATCH)
      for (;;) {
        const entries = await iterator.nextv(batchSize)
        if (entries.length === 0) return
        yield entries.map(([key, value]) => new StoredRow(key, value, symbol, prefixLength, this.#provider))
      }
    } finally {
      await iterator.close()
    }
  }

  async symbols(): Promise<readonly string[]> {
    return this.#symbols.keys(this.#snapshot === undefined ? {} : { snapshot: this.#snapshot }).all()
  }
}

/** A row whose record is decoded only when asked for. */
class StoredRow implements ScanRow {
  readonly timestamp: number
  readonly #key: Uint8Array
  readonly #value: Uint8Array
  readonly #symbol: string
  readonly #prefixLength: number
  readonly #provider: Provider

  constructor(key: Uint8Array, value: Uint8Array, symbol: string, prefixLength: number, provider: Provider) {
    this.timestamp = readTimestamp(key, prefixLength)
    this.#key = key
    this.#value = value
    this.#symbol = symbol
    this.#prefixLength = prefixLength
    this.#provider = provider
  }

  record(): PriceRecord {
    const idStart = this.#prefixLength + 8
    const id = Buffer.from(this.#key.buffer, this.#key.byteOffset + idStart, this.#key.byteLength - idStart).toString('utf8')
    return decodeValue(this.#key, this.#value, { symbol: this.#symbol, timestamp: this.timestamp, id }, this.#provider)
  }
}
