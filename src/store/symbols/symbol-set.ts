/**
 * The symbol set: every symbol with a record, the one owner of both its
 * copies, the symbol index on disk (sublevel `s`, written and read here only)
 * and the set in memory. A batch stages the symbols it introduces into its
 * own write and adds them after its commit; a prune step stages the removal
 * of the symbols it leaves empty and removes them after its commit. Both
 * happen in the store's synchronous memory step, so readers see a symbol
 * with its first record and lose it with its last.
 */
import { compareIds } from '../../rules/compare-ids.js'
import { symbolKey } from '../../keys/key-layout.js'
import type { RootBatch } from '../db/root-batch.js'
import type { BytesSublevel } from '../db/sublevels.js'

const EMPTY = Buffer.alloc(0)

/** Every symbol with at least one record, on disk and in memory. */
export class SymbolSet {
  readonly #level: BytesSublevel
  readonly #prefix: Uint8Array
  readonly #known = new Set<string>()
  #list: readonly string[] = []

  constructor(level: BytesSublevel, prefix: Uint8Array) {
    this.#level = level
    this.#prefix = prefix
  }

  /** Every symbol, in UTF-8 byte order, as of the last commit (a new array after each change: views hold it as it was). */
  get list(): readonly string[] {
    return this.#list
  }

  /** Whether `symbol` has a record, as of the last commit. */
  has(symbol: string): boolean {
    return this.#known.has(symbol)
  }

  /** Reads the symbol index when the store opens (the database may have changed while it was closed). */
  async load(): Promise<void> {
    this.#known.clear()
    for (const key of await this.#level.keys().all()) this.#known.add(Buffer.from(key).toString('utf8'))
    this.#list = [...this.#known].sort(compareIds)
  }

  /** Puts `symbols`, new to the index, into `batch`, for {@link SymbolSet.add} after the commit. */
  stageNew(batch: RootBatch, symbols: ReadonlySet<string>): void {
    for (const symbol of symbols) batch.put(this.#prefix, symbolKey(symbol), EMPTY)
  }

  /** Puts the removal of `symbols` from the index into `batch`, for {@link SymbolSet.remove} after the commit. */
  stageRemoval(batch: RootBatch, symbols: readonly string[]): void {
    for (const symbol of symbols) batch.del(this.#prefix, symbolKey(symbol))
  }

  /** Takes in the symbols a committed batch introduced. */
  add(symbols: ReadonlySet<string>): void {
    if (symbols.size === 0) return
    for (const symbol of symbols) this.#known.add(symbol)
    this.#list = [...this.#known].sort(compareIds)
  }

  /** Takes out the symbols a committed prune step left without records. */
  remove(symbols: readonly string[]): void {
    if (symbols.length === 0) return
    for (const symbol of symbols) this.#known.delete(symbol)
    this.#list = [...this.#known].sort(compareIds)
  }
}
