import { PriceStoreError, describeValue } from '../../../errors.js'
import { parseFieldSelection } from '../../../rules/fields.js'
import { checkSymbol } from '../../../engine/parse-query.js'
import type { FieldSelection } from '../../../types.js'

/*
 * The read keys a server meters its readers with (`serve --read-keys FILE`,
 * or the handler's `readKeys` option): who may read, how much, how late and
 * what. The file holds no key, only each key's SHA-256, so it can be
 * shown and copied without giving reading away.
 */

/** How much a reader may do per window: requests, and the cost of its queries (in records, as the query gate weighs them). */
export interface ReadKeyLimit {
  /** Requests per window (a token bucket of this size, refilled over the window). */
  readonly requests?: number
  /** Query cost per window: records read and returned, as `PriceStore.cost` weighs them (a bucket that may go into debt by one query). */
  readonly cost?: number
  /** The window, in seconds (default 1). */
  readonly perSeconds?: number
}

/** What one tier of readers may see and do: a key's, or anonymous readers'. */
export interface ReadTier {
  readonly limit?: ReadKeyLimit
  /** Records younger than this many seconds do not exist for these readers, on every form, the stream and the WebSocket included. */
  readonly delaySeconds?: number
  /** Only these symbols exist for these readers; naming another is refused 403. */
  readonly symbols?: readonly string[]
  /** A field selection applied over the request's own (`/prices`'s `fields` syntax), e.g. `-signature,-liteEvmSignature,-evmSignature`. */
  readonly fields?: string
}

/** One read key: its id (named in metrics and the access log, never the key) and the SHA-256 of the key, in hex. */
export interface ReadKeyEntry extends ReadTier {
  readonly id: string
  readonly sha256: string
}

/** The handler's `readKeys` option, and the JSON of `serve --read-keys FILE`. */
export interface ReadKeysOptions {
  readonly keys: readonly ReadKeyEntry[]
  /** Readers without a key: `open` (default: no limit, no delay), `closed` (401), or a tier of their own. */
  readonly anonymous?: 'open' | 'closed' | ReadTier
}

/** A tier checked: its limit as numbers, its selection and symbols parsed. */
export interface CheckedTier {
  readonly id: string
  readonly requests?: number
  readonly cost?: number
  readonly windowMs: number
  readonly delayMs?: number
  readonly symbols?: ReadonlySet<string>
  readonly fields?: FieldSelection
}

/** The ids of readers without a key in metrics and the access log. */
export const ANONYMOUS_ID = 'anonymous'

/** Most keys in one file: each is a label value of the metrics, which must stay bounded. */
export const MAX_READ_KEYS = 1000

const ID = /^[A-Za-z0-9_.-]{1,64}$/
const SHA256 = /^[0-9a-f]{64}$/

/**
 * The read keys checked, by SHA-256, with anonymous readers' tier
 * (`closed` when they may not read).
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the field (`readKeys.keys[2].sha256`, ...); no message quotes a key's digest
 */
export function checkReadKeys(options: unknown): { readonly byDigest: ReadonlyMap<string, CheckedTier>; readonly anonymous: CheckedTier | 'closed' } {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalid('readKeys', `must be an object with "keys" (got ${describeValue(options)})`)
  const { keys, anonymous, ...rest } = options as Record<string, unknown>
  const unknown = Object.keys(rest)[0]
  if (unknown !== undefined) throw invalid(`readKeys.${unknown}`, 'is not an option of read keys (they take keys and anonymous)')
  if (!Array.isArray(keys)) throw invalid('readKeys.keys', `must be an array of keys (got ${describeValue(keys)})`)
  if (keys.length > MAX_READ_KEYS) throw invalid('readKeys.keys', `holds ${keys.length} keys; at most ${MAX_READ_KEYS}`)
  const byDigest = new Map<string, CheckedTier>()
  const ids = new Set<string>([ANONYMOUS_ID])
  keys.forEach((entry: unknown, index) => {
    const field = `readKeys.keys[${index}]`
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw invalid(field, `must be an object (got ${describeValue(entry)})`)
    const { id, sha256, ...tier } = entry as Record<string, unknown>
    if (typeof id !== 'string' || !ID.test(id)) throw invalid(`${field}.id`, 'must be 1 to 64 letters, digits, "_", "." or "-"')
    if (ids.has(id)) throw invalid(`${field}.id`, `"${id}" is ${id === ANONYMOUS_ID ? 'the id of readers without a key' : 'given to another key'}`)
    ids.add(id)
    if (typeof sha256 !== 'string' || !SHA256.test(sha256)) throw invalid(`${field}.sha256`, 'must be the SHA-256 of the key, 64 lower-case hex digits (e.g. `printf %s "$KEY" | sha256sum`)')
    if (byDigest.has(sha256)) throw invalid(`${field}.sha256`, 'is the digest of another key too')
    byDigest.set(sha256, checkTier(id, tier, field))
  })
  if (anonymous === undefined || anonymous === 'open') return { byDigest, anonymous: { id: ANONYMOUS_ID, windowMs: 1000 } }
  if (anonymous === 'closed') return { byDigest, anonymous }
  if (typeof anonymous !== 'object' || anonymous === null || Array.isArray(anonymous)) {
    throw invalid('readKeys.anonymous', `must be "open", "closed" or a tier such as {"limit":{"requests":20,"perSeconds":10}} (got ${describeValue(anonymous)})`)
  }
  return { byDigest, anonymous: checkTier(ANONYMOUS_ID, anonymous as Record<string, unknown>, 'readKeys.anonymous') }
}

function checkTier(id: string, tier: Record<string, unknown>, field: string): CheckedTier {
  const { limit, delaySeconds, symbols, fields, ...rest } = tier
  const unknown = Object.keys(rest)[0]
  if (unknown !== undefined) throw invalid(`${field}.${unknown}`, 'is not a setting of a read key (they take id, sha256, limit, delaySeconds, symbols and fields)')
  const checked: { -readonly [K in keyof CheckedTier]: CheckedTier[K] } = { id, windowMs: 1000 }
  if (limit !== undefined) {
    if (typeof limit !== 'object' || limit === null || Array.isArray(limit)) throw invalid(`${field}.limit`, `must be an object such as {"requests":20,"perSeconds":10} (got ${describeValue(limit)})`)
    const { requests, cost, perSeconds, ...other } = limit as Record<string, unknown>
    const extra = Object.keys(other)[0]
    if (extra !== undefined) throw invalid(`${field}.limit.${extra}`, 'is not a setting of a limit (it takes requests, cost and perSeconds)')
    if (requests !== undefined) checked.requests = positive(requests, `${field}.limit.requests`)
    if (cost !== undefined) checked.cost = positive(cost, `${field}.limit.cost`)
    if (perSeconds !== undefined) checked.windowMs = positive(perSeconds, `${field}.limit.perSeconds`) * 1000
  }
  if (delaySeconds !== undefined) {
    if (typeof delaySeconds !== 'number' || !Number.isSafeInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > 365 * 86_400) {
      throw invalid(`${field}.delaySeconds`, `must be a whole number of seconds from 0 to a year (got ${describeValue(delaySeconds)})`)
    }
    if (delaySeconds > 0) checked.delayMs = delaySeconds * 1000
  }
  if (symbols !== undefined) {
    if (!Array.isArray(symbols) || symbols.length === 0) throw invalid(`${field}.symbols`, `must be a non-empty array of symbols (got ${describeValue(symbols)})`)
    symbols.forEach((symbol: unknown, index) => checkSymbol(`${field}.symbols[${index}]`, symbol))
    checked.symbols = new Set(symbols as string[])
  }
  if (fields !== undefined) {
    try {
      checked.fields = parseFieldSelection(`${field}.fields`, fields)
    } catch (err) {
      throw invalid(`${field}.fields`, (err as Error).message)
    }
  }
  return checked
}

function positive(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1e12) throw invalid(field, `must be a number above 0 (got ${describeValue(value)})`)
  return value
}

function invalid(field: string, problem: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_OPTIONS', `option ${field} ${problem}`, { details: { field } })
}
