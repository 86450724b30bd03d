/**
 * The keys of the meta sublevel `m`, and the only place that names them.
 * Every meta key and value is UTF-8 text (the cursor secret as base64url).
 * What each holds is in key-layout.ts.
 */
export const META_KEYS = {
  /** The database's format version (format-version.ts). */
  format: 'format',
  /** The provider the store was created for, as JSON `{ name, id, publicKey }`. */
  provider: 'provider',
  /** The newest position whose journal entry may have been trimmed, as decimal text. */
  journalFloor: 'journal-floor',
  /** The secret page cursors are signed with, made by the first page that needs one. */
  cursorSecret: 'cursor-secret',
} as const

/** A meta key as the bytes a batch written to the root database puts. */
export function metaKeyBytes(key: (typeof META_KEYS)[keyof typeof META_KEYS]): Buffer {
  return Buffer.from(key, 'utf8')
}
