/**
 * The secret a store signs its page cursors with (docs/semantics.md,
 * "Cursors"): 32 random bytes kept in the meta sublevel under
 * `cursor-secret`, made by the first page that needs one, so a store
 * written before cursors existed gets one the first time it is paged and
 * keeps it across restarts. A backup copies the meta sublevel, so a copy
 * (and a replica seeded from it) accepts the cursors of its original; a
 * store made apart does not, unless both are given the same `cursorSecret`
 * option (replicas behind one balancer): that one is used instead, and the
 * stored one is neither read nor made.
 */
import { randomBytes } from 'node:crypto'
import { PriceStoreError } from '../../errors.js'
import { META_KEYS, metaKeyBytes } from '../../keys/meta-keys.js'
import type { BytesSublevel } from '../db/sublevels.js'

const SECRET_KEY = metaKeyBytes(META_KEYS.cursorSecret)
const SECRET_BYTES = 32

/** One load (or creation) per meta sublevel: two first pages at once must not make two secrets, the later overwriting the earlier. */
const secrets = new WeakMap<BytesSublevel, Promise<Uint8Array>>()

/**
 * The store's cursor secret, read once (and written once when the store has none yet).
 * @throws the storage error of the read or write (the next call tries again)
 */
export function cursorSecret(meta: BytesSublevel, configured?: Uint8Array): Promise<Uint8Array> {
  if (configured !== undefined) return Promise.resolve(configured)
  let secret = secrets.get(meta)
  if (secret === undefined) {
    secret = loadOrCreate(meta)
    secrets.set(meta, secret)
    secret.catch(() => secrets.delete(meta))
  }
  return secret
}

async function loadOrCreate(meta: BytesSublevel): Promise<Uint8Array> {
  const stored = (await meta.get(SECRET_KEY)) as Uint8Array | undefined
  // Kept as base64url text, as every meta value is text.
  const decoded = stored === undefined ? undefined : Buffer.from(Buffer.from(stored).toString('utf8'), 'base64url')
  if (decoded !== undefined && decoded.length === SECRET_BYTES) return decoded
  const secret = randomBytes(SECRET_BYTES)
  await meta.put(SECRET_KEY, Buffer.from(secret.toString('base64url'), 'utf8'))
  return secret
}

/** Fewer distinct bytes than this is a repeated pattern (`aaaa…`), not a random secret, whatever its length. */
const MIN_DISTINCT_BYTES = 8

/**
 * The `cursorSecret` store option, checked and copied: `{}` when absent, else `{ cursorSecret }` (its bytes;
 * a string's UTF-8). The message never quotes the value.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (field `cursorSecret`) for another type, fewer than 32 bytes,
 *   or fewer than 8 distinct bytes
 */
export function configuredCursorSecret(value: unknown): { readonly cursorSecret?: Uint8Array } {
  if (value === undefined) return {}
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value instanceof Uint8Array ? Buffer.from(value) : undefined
  const refuse = (rule: string) => new PriceStoreError('PRICE_INVALID_OPTIONS', `option cursorSecret ${rule}`, { details: { field: 'cursorSecret' } })
  if (bytes === undefined) throw refuse(`must be a string or a Buffer (got ${value === null ? 'null' : typeof value})`)
  if (bytes.length < SECRET_BYTES) throw refuse(`must hold at least ${SECRET_BYTES} random bytes (got ${bytes.length}); e.g. openssl rand -base64 48`)
  if (new Set(bytes).size < MIN_DISTINCT_BYTES) throw refuse(`must be random (got a repeated pattern of ${new Set(bytes).size} distinct bytes); e.g. openssl rand -base64 48`)
  return { cursorSecret: bytes }
}
