import type { IncomingMessage, ServerResponse } from 'node:http'
import { describeValue } from '../../../errors.js'
import { toExactJson } from '../../../rules/exact-json.js'
import { fail } from '../../../rules/query-errors.js'
import { errorParts, jsonAnswer, reportError, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'
import type { CheckedReplicaOptions, ReplicaSource } from './replica.js'

/*
 * "Read at least position P" (read-your-writes across nodes): a
 * client that wrote through one node and reads from another names the
 * position its write answered, and the read is served only once this node
 * has applied it. Checked before a query is admitted to the query gate, so
 * a waiting read holds no slot.
 */

/** The query parameter naming the least position a read must see. */
export const MIN_POSITION_PARAMETER = 'minPosition'
/** The header naming it, for clients that would rather not touch the query (either works; with both, the larger). */
export const MIN_POSITION_HEADER = 'x-min-position'

/** A read refused by its position floor: a bad `minPosition` (400) or one not reached (503), before it is put in a body. */
export interface FloorRefusal {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly headers: Readonly<Record<string, string>>
  /** For `HTTP_POSITION_NOT_REACHED`: the position this node has applied. */
  readonly position?: number
  /** For `HTTP_POSITION_NOT_REACHED`: the position the read asked for. */
  readonly minPosition?: number
}

const RETRY_AFTER: Readonly<Record<string, string>> = { 'retry-after': '1' }

/** A store's position, when it has one (a `PriceStore` has). */
interface Positioned {
  readonly position?: unknown
}

/**
 * The position floor of one handler's reads: whether a read asked for
 * `minPosition` (or `x-min-position`), and whether this node has applied
 * that position, waiting for it up to `minPositionWaitMs` on a replicated
 * node. The node's position is the replica's applied position, else the
 * store's (`0` for a store that has none).
 */
export class PositionFloor {
  readonly #store: Positioned
  readonly #replica: ReplicaSource | undefined
  readonly #waitMs: number
  readonly #options: ErrorReportOptions

  constructor(store: object, replication: CheckedReplicaOptions, options: ErrorReportOptions) {
    this.#store = store as Positioned
    this.#replica = replication.replica
    this.#waitMs = replication.minPositionWaitMs
    this.#options = options
  }

  /**
   * Checks the floor a read asks for, and takes `minPosition` out of
   * `params` so the endpoint's own parsing sees the parameters it knows
   * (`/prices/export` refuses any other). `undefined` when the read may go
   * on now: it asked for no floor (the usual case, answered without
   * allocating), or this node has applied it. Otherwise the refusal, or a
   * promise of the outcome of the wait (`undefined` once the position is
   * applied); the wait ends early when the client leaves (`res` closes).
   * Never throws or rejects.
   */
  check(req: IncomingMessage, res: ServerResponse, params: URLSearchParams): FloorRefusal | Promise<FloorRefusal | undefined> | undefined {
    const header = req.headers[MIN_POSITION_HEADER]
    if (header === undefined && !params.has(MIN_POSITION_PARAMETER)) return undefined
    let wanted: number
    try {
      wanted = askedPosition(params.getAll(MIN_POSITION_PARAMETER), header)
    } catch (err) {
      return refusalOf(err)
    } finally {
      params.delete(MIN_POSITION_PARAMETER)
    }
    const position = this.#position()
    if (position >= wanted) return undefined
    const replica = this.#replica
    if (replica === undefined || this.#waitMs === 0) return this.#notReached(position, wanted, false)
    const gone = new AbortController()
    const leave = (): void => gone.abort()
    if (res.closed) gone.abort()
    else res.once('close', leave)
    let waited: Promise<boolean>
    try {
      waited = Promise.resolve(replica.waitForPosition(wanted, this.#waitMs, gone.signal))
    } catch (err) {
      waited = Promise.reject(err)
    }
    return waited
      .then(
        (reached) => (reached ? undefined : this.#notReached(this.#position(), wanted, true)),
        (err: unknown) => {
          reportError(this.#options, err)
          return refusalOf(err)
        },
      )
      .finally(() => res.off('close', leave))
  }

  #position(): number {
    if (this.#replica !== undefined) return this.#replica.replication().position
    const position = this.#store.position
    return typeof position === 'number' ? position : 0
  }

  #notReached(position: number, minPosition: number, waited: boolean): FloorRefusal {
    const within = waited ? ` within ${this.#waitMs} ms` : ''
    const message = `this node has applied position ${position}, below the minPosition ${minPosition} asked for, and did not reach it${within}; retry later or on another node`
    return { status: 503, code: 'HTTP_POSITION_NOT_REACHED', message, headers: RETRY_AFTER, position, minPosition }
  }
}

/**
 * The least position a read asks for: the `minPosition` parameter and the
 * `x-min-position` header, each a non-negative safe integer in plain
 * decimal, given at most once; with both, the larger.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` naming the parameter or header
 */
export function askedPosition(values: readonly string[], header: string | readonly string[] | undefined): number {
  if (values.length > 1) {
    throw fail('PRICE_INVALID_QUERY', MIN_POSITION_PARAMETER, `parameter ${MIN_POSITION_PARAMETER} must be given at most once (got ${values.map(describeValue).join(', ')})`)
  }
  let wanted = 0
  const [value] = values
  if (value !== undefined) wanted = parsePosition(MIN_POSITION_PARAMETER, `parameter ${MIN_POSITION_PARAMETER}`, value)
  if (header !== undefined) {
    const text = typeof header === 'string' ? header : header.join(', ')
    wanted = Math.max(wanted, parsePosition(MIN_POSITION_HEADER, `header ${MIN_POSITION_HEADER}`, text.trim()))
  }
  return wanted
}

function parsePosition(name: string, what: string, text: string): number {
  // Leading zeros are allowed, as in /prices; 17 digits or more can only be out of range.
  const digits = /^[0-9]+$/.test(text) ? text.replace(/^0+(?=.)/, '') : undefined
  const position = digits === undefined || digits.length > 16 ? Number.NaN : Number(digits)
  if (!Number.isSafeInteger(position)) {
    throw fail('PRICE_INVALID_QUERY', name, `${what} must be a commit position: a whole number from 0 to ${Number.MAX_SAFE_INTEGER} (got ${describeValue(text)})`)
  }
  return position
}

function refusalOf(err: unknown): FloorRefusal {
  return errorParts(err)
}

/**
 * The answer to a refused read: the usual `{ error: { code, message } }`,
 * with `position` and `minPosition` in it for `HTTP_POSITION_NOT_REACHED`,
 * and UDF's `s: "error"` and `errmsg` beside it for a UDF endpoint.
 */
export function floorAnswer(refusal: FloorRefusal, udf: boolean): HttpAnswer {
  const { status, code, message, headers, position, minPosition } = refusal
  const error = { code, message, ...(position === undefined ? {} : { position }), ...(minPosition === undefined ? {} : { minPosition }) }
  if (!udf) return jsonAnswer(status, { error }, headers)
  const body = toExactJson({ s: 'error', errmsg: message, error })
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body, 'utf8')), ...headers },
    body,
  }
}
