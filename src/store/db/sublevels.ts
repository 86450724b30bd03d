/**
 * The store's sublevels, opened in one place from the names in
 * `keys/sublevels.ts`: every one with byte keys and values (the meta
 * sublevel's UTF-8 keys and values are encoded per call, see
 * `lifecycle/format.ts`, which leaves the same bytes on disk).
 */
import type { AbstractLevel, AbstractSublevel } from 'abstract-level'
import { SUBLEVELS, type SublevelName } from '../../keys/sublevels.js'
import { prefixOf } from './root-batch.js'

/** A sublevel whose keys and values are raw bytes. */
export type BytesSublevel = AbstractSublevel<AbstractLevel<any, any, any>, any, Uint8Array, Uint8Array>

/** Every sublevel of a store, by name. */
export type StoreSublevels = { readonly [name in SublevelName]: BytesSublevel }

/** Each sublevel's key prefix in the root database, for writing batches there directly. */
export type SublevelPrefixes = { readonly [name in SublevelName]: Uint8Array }

/**
 * Creates every sublevel of `db` (a database must then be opened, and
 * {@link openSublevels} called, before use).
 * @throws Error when the database cannot hold binary keys (abstract-level refuses the encoding)
 */
export function createSublevels(db: AbstractLevel<any, any, any>): StoreSublevels {
  const bytes = (name: string): BytesSublevel =>
    db.sublevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' }) as unknown as BytesSublevel
  return {
    log: bytes(SUBLEVELS.log), chunks: bytes(SUBLEVELS.chunks), heads: bytes(SUBLEVELS.heads),
    symbols: bytes(SUBLEVELS.symbols), journal: bytes(SUBLEVELS.journal), meta: bytes(SUBLEVELS.meta),
    verdicts: bytes(SUBLEVELS.verdicts),
  }
}

/** Opens every sublevel: closing a database closes its sublevels too, and reopening it does not reopen them. */
export async function openSublevels(levels: StoreSublevels): Promise<void> {
  await Promise.all(Object.values(levels).map((sublevel) => sublevel.open()))
}

/** Each sublevel's key prefix in the root database. */
export function prefixesOf(levels: StoreSublevels): SublevelPrefixes {
  const { log, chunks, heads, symbols, journal, meta, verdicts } = levels
  return {
    log: prefixOf(log), chunks: prefixOf(chunks), heads: prefixOf(heads), symbols: prefixOf(symbols),
    journal: prefixOf(journal), meta: prefixOf(meta), verdicts: prefixOf(verdicts),
  }
}
