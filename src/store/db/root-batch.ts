import type { AbstractLevel } from 'abstract-level'

/** The bytes a sublevel puts before each of its keys in the root database. */
export function prefixOf(sublevel: { prefixKey(key: Uint8Array, format: 'view'): Uint8Array }): Uint8Array {
  return sublevel.prefixKey(new Uint8Array(0), 'view')
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

  /** Writes every operation atomically; `sync` is classic-level's fsync switch, ignored elsewhere. */
  async write(db: AbstractLevel<any, any, any>, sync: boolean): Promise<void> {
    if (sync) await db.batch(this.#operations, { sync } as object)
    else await db.batch(this.#operations)
  }
}

/** `key` with `prefix` before it: a key of the root database. */
export function prefixed(prefix: Uint8Array, key: Uint8Array): Uint8Array {
  const full = new Uint8Array(prefix.length + key.length)
  full.set(prefix, 0)
  full.set(key, prefix.length)
  return full
}
