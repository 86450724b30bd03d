import { createHash, timingSafeEqual } from 'node:crypto'
import { PriceStoreError } from '../../../errors.js'

/** What is wrong with a write token, without quoting it; `undefined` for a good one. */
export function writeTokenProblem(token: unknown): string | undefined {
  if (typeof token !== 'string') return `must be a string (got ${token === null ? 'null' : typeof token})`
  if (token.length === 0) return 'must not be empty'
  // A bearer token travels in a header: printable ASCII with no white space, or it could never be sent as given.
  if (!/^[\x21-\x7e]+$/.test(token)) return `must hold printable ASCII characters only, with no white space or control characters (got ${token.length} characters, some of them not)`
  return undefined
}

/**
 * Checks `Authorization: Bearer <token>` headers against the write token.
 * Only SHA-256 digests are compared, with `timingSafeEqual`: equal lengths
 * whatever was sent, so the time taken tells nothing of the token. The
 * token itself is not kept.
 */
export class WriteToken {
  readonly #digest: Buffer

  /** @throws PriceStoreError `PRICE_INVALID_OPTIONS` for an empty token or one with white space, control or non-ASCII characters (the message never quotes it) */
  constructor(token: unknown) {
    const problem = writeTokenProblem(token)
    if (problem !== undefined) {
      throw new PriceStoreError('PRICE_INVALID_OPTIONS', `option writeToken ${problem}`, { details: { field: 'writeToken' } })
    }
    this.#digest = digest(token as string)
  }

  /** `missing` for no usable bearer credentials (401), `wrong` for another token (403), `ok` for the write token. */
  check(authorization: string | undefined): 'ok' | 'missing' | 'wrong' {
    // RFC 6750 §2.1: the scheme is case-insensitive. Any printable token is taken, as configured tokens may be (not only token68).
    const match = authorization === undefined ? null : /^Bearer +([\x21-\x7e]+) *$/i.exec(authorization)
    if (match === null) return 'missing'
    return timingSafeEqual(digest(match[1] as string), this.#digest) ? 'ok' : 'wrong'
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}
