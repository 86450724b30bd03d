import type { AbstractBatchOptions, AbstractLevel } from 'abstract-level'

/** The bytes a sublevel puts before each of its keys in the root database. */
export function prefixOf(sublevel: { prefixKey(key: Uint8Array, format: 'view'): Uint8Array }): Uint8Array {
  return sublevel.prefixKey(new Uint8Array(0), 'view')
}

/**
 * A batch of puts written straight to the root database with keys that
 * already carry their sublevel's prefix. abstract-level clones, re-encodes and
 * re-prefixes every operation that names a sublevel, which cost more than
 * LevelDB's own write on bulk ingest; byte keys under the root skip all of it.
 */
export class RootBatch {
  readonly #operations: { type: 'put'; key: Uint8Array; value: Uint8Array }[] = []

  put(prefix: Uint8Array, key: Uint8Array, value: Uint8Array): void {
    const full = new Uint8Array(prefix.length + key.length)
    full.set(prefix, 0)
    full.set(key, prefix.length)
    this.#operations.push({ type: 'put', key: full, value })
  }

  /** Writes every put atomically; `sync` is classic-level's fsync switch, ignored elsewhere. */
  async write(db: AbstractLevel<any, any, any>, sync: boolean): Promise<void> {
    const options: AbstractBatchOptions<Uint8Array, Uint8Array> & { sync: boolean } = { keyEncoding: 'view', valueEncoding: 'view', sync }
    await db.batch(this.#operations, options)
  }
}
