import type { AbstractLevel, AbstractSnapshot, AbstractSublevel } from 'abstract-level'
import type { ScanOptions, ScanSource } from '../engine/scan-source.js'
import { symbolPrefix, symbolRange } from '../keys/key-codec.js'
import type { Provider } from '../types.js'
import { StoredRow } from './stored-row.js'

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

  async *scan(symbol: string, options: ScanOptions): AsyncGenerator<readonly StoredRow[]> {
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
