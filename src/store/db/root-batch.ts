import type { AbstractLevel } from 'abstract-level'

/** The bytes a sublevel puts before each of its keys in the root database. */
export function prefixOf(sublevel: { prefixKey(key: Uint8Array, format: 'view', local?: boolean): Uint8Array }): Uint8Array {
  return sublevel.prefixKey(new Uint8Array(0), 'view')
}

/**
 * The bytes a sublevel puts before each of its keys in its parent (the
 * store's database): {@link prefixOf} without the prefix of a store opened
 * on a sublevel, for a copy whose database is a root of its own.
 */
export function ownPrefixOf(sublevel: { prefixKey(key: Uint8Array, format: 'view', local?: boolean): Uint8Array }): Uint8Array {
  return sublevel.prefixKey(new Uint8Array(0), 'view', true)
}

type RootOperation =
  | { readonly type: 'put'; readonly key: Uint8Array; readonly value: Uint8Array; readonly keyEncoding: 'view'; readonly valueEncoding: 'view' }
  | { readonly type: 'del'; readonly key: Uint8Array; readonly keyEncoding: 'view' }

/**
 * A batch of operations written straight to the root database with keys
 * that already carry their sublevel's prefix. abstract-level clones,
 * re-encodes and re-prefixes every operation that names a sublevel; byte
 * keys under the root skip most of it. Encodings sit on each operation and
 * the batch gets no options object unless it must fsync: measured, that
 * halves abstract-level's per-operation work again.
 */
export class RootBatch {
  readonly #operations: RootOperation[] = []

  get length(): number {
    return this.#operations.length
  }

  put(prefix: Uint8Array, key: Uint8Array, value: Uint8Array): void {
    this.#operations.push({ type: 'put', key: prefixed(prefix, key), value, keyEncoding: 'view', valueEncoding: 'view' })
  }

  del(prefix: Uint8Array, key: Uint8Array): void {
    this.#operations.push({ type: 'del', key: prefixed(prefix, key), keyEncoding: 'view' })
  }

  /**
   * Writes every operation atomically into the root database of `db` (the store's database, itself a sublevel
   * when the store was opened on one); `sync` is classic-level's fsync switch, ignored elsewhere.
   */
  async write(db: AbstractLevel<any, any, any>, sync: boolean): Promise<void> {
    const root = rootOf(db)
    if (sync) await root.batch(this.#operations, { sync } as object)
    else await root.batch(this.#operations)
  }
}

/**
 * The root database of `db`: `db` itself, or the root of a sublevel. The keys
 * of {@link prefixOf} are keys of the root: a sublevel would prefix them again.
 */
export function rootOf(db: AbstractLevel<any, any, any>): AbstractLevel<any, any, any> {
  return (db as { readonly db?: AbstractLevel<any, any, any> }).db ?? db
}

/** `key` with `prefix` before it: a key of the root database. */
export function prefixed(prefix: Uint8Array, key: Uint8Array): Uint8Array {
  const full = new Uint8Array(prefix.length + key.length)
  full.set(prefix, 0)
  full.set(key, prefix.length)
  return full
}
