/**
 * The sublevels of a store's database, and the only place that names them:
 * the store opens every one of them from this table (see
 * `store/db/sublevels.ts`). What each holds is in `key-layout.ts`.
 * Renaming one changes the bytes on disk.
 */
export const SUBLEVELS = {
  /** Log entries: the records written and not sealed yet. */
  log: 'l',
  /** Sealed chunk parts. */
  chunks: 'c',
  /** The heads index: each chunk's ten-minute heads and record count. */
  heads: 'h',
  /** The symbol index: every symbol with a record. */
  symbols: 's',
  /** The commit journal. */
  journal: 'j',
  /** The format version and the provider (UTF-8 keys and values). */
  meta: 'm',
  /** Signature verdicts of the records verified at ingest, a group per commit, symbol and hour. */
  verdicts: 'w',
} as const

/** The name of one of the store's sublevels. */
export type SublevelName = keyof typeof SUBLEVELS
