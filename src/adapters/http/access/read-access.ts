import { createHash } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { ReadScope } from '../../../engine/read-scope.js'
import type { FieldSelection } from '../../../types.js'
import { httpErrorAnswer, type HttpAnswer } from '../core/answer.js'
import { checkReadKeys, type CheckedTier, type ReadKeysOptions } from './read-keys.js'
import { TokenBucket } from './token-bucket.js'

/** A reader's 403, with its message for feeds that say it in their own shape (a WebSocket `error`). */
export interface Forbidden extends HttpAnswer {
  readonly message: string
}

/** What a reader's requests came to, per reader, for `/metrics`. */
export type ReadOutcome = 'admitted' | 'throttled' | 'refused'

/**
 * One reader (a key, or anonymous readers together), as each of its
 * requests sees it: its budgets, what it may see, and its counts.
 */
export class Reader {
  readonly id: string
  /** Its field selection, applied over each request's own; none: whole records. */
  readonly fields: FieldSelection | undefined
  /** Whether it sees less than everything (a delay or a list of symbols): endpoints that cannot narrow what they answer refuse it. */
  readonly scoped: boolean
  readonly #tier: CheckedTier
  readonly #requests: TokenBucket | undefined
  readonly #cost: TokenBucket | undefined
  readonly #now: () => number
  readonly counts: Record<ReadOutcome, number> = { admitted: 0, throttled: 0, refused: 0 }

  constructor(tier: CheckedTier, now: () => number) {
    this.id = tier.id
    this.fields = tier.fields
    this.scoped = tier.delayMs !== undefined || tier.symbols !== undefined
    this.#tier = tier
    this.#now = now
    this.#requests = tier.requests === undefined ? undefined : new TokenBucket(tier.requests, tier.windowMs, now())
    this.#cost = tier.cost === undefined ? undefined : new TokenBucket(tier.cost, tier.windowMs, now())
  }

  /** What one of its reads may see now: records up to now minus its delay, of its symbols; `undefined` for everything. */
  scope(): ReadScope | undefined {
    const { delayMs, symbols } = this.#tier
    if (delayMs === undefined && symbols === undefined) return undefined
    return { ...(delayMs === undefined ? {} : { notAfter: this.#now() - delayMs }), ...(symbols === undefined ? {} : { symbols }) }
  }

  /** Its delay in ms (0 for none): a live feed holds each commit until its newest record is this old. */
  get delayMs(): number {
    return this.#tier.delayMs ?? 0
  }

  /** The symbols it may read; `undefined` for all. */
  get symbols(): readonly string[] | undefined {
    return this.#tier.symbols === undefined ? undefined : [...this.#tier.symbols]
  }

  /** Whether it may read `symbol`. */
  mayRead(symbol: string): boolean {
    return this.#tier.symbols === undefined || this.#tier.symbols.has(symbol)
  }

  /** Takes one request from its request budget: `undefined` when taken, else its 429. */
  takeRequest(): HttpAnswer | undefined {
    return this.#take(this.#requests, 1, 'requests')
  }

  /** Takes a query's cost from its cost budget (see `TokenBucket`): `undefined` when taken, else its 429. */
  spend(cost: number): HttpAnswer | undefined {
    // A cost the store could not bound (a store without `cost`) is infinite: it takes the whole budget, and a window's debt.
    return this.#take(this.#cost, cost, 'query cost')
  }

  /** A 403 for a request outside its scope, counted. */
  forbid(message: string): Forbidden {
    this.counts.refused++
    return { ...httpErrorAnswer(403, 'HTTP_FORBIDDEN', message), message }
  }

  #take(bucket: TokenBucket | undefined, amount: number, what: string): HttpAnswer | undefined {
    const waitMs = bucket === undefined ? 0 : bucket.take(amount, this.#now())
    if (waitMs === 0) return undefined
    this.counts.throttled++
    const seconds = Math.ceil(waitMs / 1000)
    return httpErrorAnswer(429, 'HTTP_RATE_LIMITED', `this reader is over its ${what} budget; retry in ${seconds} s`, { 'retry-after': String(seconds) })
  }
}

/** Each `readKeys` option's access (see {@link ReadAccess.of}). */
const SHARED = new WeakMap<object, ReadAccess>()

/** The header names a key may come in (besides `Authorization: Bearer`). */
const KEY_HEADER = 'x-api-key'
const BEARER = /^Bearer +([\x21-\x7e]+) *$/i

/**
 * A server's read keys: who a request's reader is, from
 * `Authorization: Bearer <key>` or `x-api-key: <key>`. Keys are known only
 * by their SHA-256; no answer, log line or metric holds a key or its digest.
 */
export class ReadAccess {
  readonly #byDigest: ReadonlyMap<string, Reader>
  readonly #anonymous: Reader | undefined
  readonly #unknown = { refused: 0 }

  /**
   * The read access of a server's `readKeys` option: one per options object,
   * so the handler and the WebSocket endpoint built from the same options
   * share each reader's budgets.
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for bad read keys (see `checkReadKeys`)
   */
  static of(options: ReadKeysOptions): ReadAccess {
    const known = SHARED.get(options)
    if (known !== undefined) return known
    const access = new ReadAccess(options)
    // A non-object is refused by the constructor above: only objects reach the cache.
    SHARED.set(options, access)
    return access
  }

  /** @throws PriceStoreError `PRICE_INVALID_OPTIONS` for bad read keys (see `checkReadKeys`) */
  constructor(options: unknown, now: () => number = Date.now) {
    const { byDigest, anonymous } = checkReadKeys(options)
    this.#byDigest = new Map([...byDigest].map(([digest, tier]) => [digest, new Reader(tier, now)]))
    this.#anonymous = anonymous === 'closed' ? undefined : new Reader(anonymous, now)
  }

  /** Every reader, anonymous ones first when they may read, for metrics. */
  readers(): Reader[] {
    return [...(this.#anonymous === undefined ? [] : [this.#anonymous]), ...this.#byDigest.values()]
  }

  /** Requests refused for a key that is not known, or for no key where one is needed. */
  get unknownRefused(): number {
    return this.#unknown.refused
  }

  /**
   * The reader of `req` with one request taken from its budget (counted
   * admitted by {@link admitReader}), or the answer refusing it: 401 for an unknown key (or none, when anonymous
   * readers may not read), 429 with `retry-after` when over its budget.
   */
  admit(req: IncomingMessage): Reader | HttpAnswer {
    const key = keyOf(req)
    const reader = key === undefined ? this.#anonymous : this.#byDigest.get(createHash('sha256').update(key, 'utf8').digest('hex'))
    if (reader === undefined) {
      this.#unknown.refused++
      const message = key === undefined
        ? 'reading this server needs a key: send "Authorization: Bearer <key>" or "x-api-key: <key>"'
        : 'the key sent is not one of this server\'s read keys'
      return httpErrorAnswer(401, 'HTTP_UNAUTHORIZED', message, { 'www-authenticate': 'Bearer realm="price-store"' })
    }
    return reader.takeRequest() ?? reader
  }
}

/** The key a request carries: `x-api-key`, else a bearer token; `undefined` for none. */
function keyOf(req: IncomingMessage): string | undefined {
  const header = req.headers[KEY_HEADER]
  if (typeof header === 'string' && header !== '') return header
  const authorization = req.headers.authorization
  const match = authorization === undefined ? null : BEARER.exec(authorization)
  return match === null ? undefined : (match[1] as string)
}

/**
 * Admits the reader of a request for an endpoint metered as `readers` (see
 * `RouteRow.readers`): its reader, or the answer refusing it (401, 429, or
 * 403 for a reader with a scope at an endpoint that answers from every record).
 */
export function admitReader(access: ReadAccess, readers: 'scoped' | 'catalogue' | 'whole', req: IncomingMessage, path: string): Reader | HttpAnswer {
  const admitted = access.admit(req)
  if (!(admitted instanceof Reader)) return admitted
  if (readers === 'whole' && admitted.scoped) return admitted.forbid(`${path} answers from every record, and this reader sees only some (a delay or a list of symbols)`)
  admitted.counts.admitted++
  return admitted
}
