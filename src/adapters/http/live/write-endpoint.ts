import type { IncomingMessage } from 'node:http'
import { isRecordRefusal } from '../../../errors.js'
import type { PriceStoreError } from '../../../errors.js'
import type { BatchCommit } from '../../../store/price-store.js'
import type { NewPriceRecord } from '../../../types.js'
import { MAX_TIMER_MS, checkIntegerOption } from '../../../rules/options.js'
import type { StoreSupports } from '../capabilities.js'
import { failedAnswer, httpErrorAnswer, jsonAnswer, reportError, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'
import { drainRequest, readRequestBody } from '../core/request-body.js'
import { sendAnswer } from '../core/send.js'
import type { LiveEndpointHandler, LiveRequest } from './endpoint.js'
import type { ReplicaSource } from './replica.js'
import { WriteBodyError, bodyFormat, parseWriteBody, type WriteBatch } from './write-body.js'
import { WriteToken } from './write-token.js'

/**
 * Options of `POST /prices`, the write endpoint: off unless `writeToken` is
 * set (and the store can write), then open to requests carrying
 * `Authorization: Bearer <writeToken>` only.
 */
export interface WriteEndpointOptions {
  /**
   * The bearer token that allows writes (default none: `POST /prices`
   * answers 405). Printable ASCII without white space; use a long random
   * one (32 bytes, hex or base64url). It is compared in constant time and
   * never appears in answers, errors or `onError` reports.
   */
  readonly writeToken?: string
  /** Largest body taken, in bytes (default {@link DEFAULT_MAX_WRITE_BYTES}); larger gets 413 `HTTP_PAYLOAD_TOO_LARGE`. */
  readonly maxWriteBytes?: number
  /**
   * Time a write has to send its whole body, from when the endpoint gets it
   * (ms, default {@link DEFAULT_WRITE_BODY_TIMEOUT_MS}); then 408
   * `HTTP_REQUEST_TIMEOUT`, nothing written, and the connection is closed.
   */
  readonly writeBodyTimeoutMs?: number
  /**
   * Writes taken at once, receiving their body or waiting for their commit
   * (default {@link DEFAULT_MAX_QUEUED_WRITES}); more get 503 `HTTP_BUSY`
   * with `retry-after` before their body is read. With `maxWriteBytes`, it
   * bounds the memory writes hold.
   */
  readonly maxQueuedWrites?: number
}

/** Default largest `POST /prices` body: 16 MiB. */
export const DEFAULT_MAX_WRITE_BYTES = 16 * 1024 * 1024
/** Default time to receive a `POST /prices` body (ms). */
export const DEFAULT_WRITE_BODY_TIMEOUT_MS = 30_000
/** Default number of writes taken at once. */
export const DEFAULT_MAX_QUEUED_WRITES = 16

/** What the write endpoint needs from a store: `PriceStore` fits. */
export interface WritableStore {
  putMany(records: Iterable<NewPriceRecord>): Promise<number>
  /** `putMany` with the batch's own commit position (`PriceStore.putBatch`); without it the answer has no position. */
  putBatch?(records: Iterable<NewPriceRecord>): Promise<BatchCommit>
}

/**
 * The `POST /prices` handler, or `undefined` when no write token is set or
 * nothing can write (the store has no `putMany` and no `replica` is given;
 * the options are checked anyway). With a `replica`, batches are written
 * through it (through the replication log: see `ReplicaSource.putBatch`),
 * never to the store directly.
 * Checks the credentials before reading anything, then reads the body
 * (capped in size and time), parses it (a JSON array, or NDJSON) and writes
 * it as one atomic batch with the store's validation: 200
 * `{"stored", "position"}`, or a coded error and nothing written. Batches
 * commit in the order their bodies are complete. Refused bodies are thrown
 * away unread, up to a cap, then the connection is closed.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for a bad token or limit
 */
export function createWriteEndpoint(
  store: WritableStore, supports: Pick<StoreSupports, 'putMany' | 'putBatch'>, options: WriteEndpointOptions & ErrorReportOptions, replica?: ReplicaSource,
): LiveEndpointHandler | undefined {
  const limits = checkWriteOptions(options)
  if (limits === undefined || (!supports.putMany && replica === undefined)) return undefined
  const { token, maxBytes, timeoutMs, maxQueued } = limits
  const commit = replica !== undefined
    ? (records: unknown[], writeConcern: number | undefined): Promise<Partial<BatchCommit>> =>
      replica.putBatch(records as NewPriceRecord[], writeConcern === undefined ? {} : { writeConcern })
    : storeCommit(store, supports)
  let admitted = 0

  const write = async ({ req, res }: LiveRequest): Promise<void> => {
    const writeConcern = replica === undefined ? undefined : askedWriteConcern(req.headers[WRITE_CONCERN_HEADER])
    const refusal = refusalBeforeBody(req, token, maxBytes, admitted >= maxQueued) ?? (writeConcern instanceof Error ? badWriteConcern(writeConcern) : undefined)
    if (refusal !== undefined) {
      sendAnswer(res, refusal)
      drainRequest(req)
      return
    }
    admitted++
    try {
      const read = await readRequestBody(req, maxBytes, timeoutMs)
      if (read.kind === 'aborted') return // nothing written; no one to answer
      if (read.kind === 'timeout') {
        sendAnswer(res, httpErrorAnswer(408, 'HTTP_REQUEST_TIMEOUT', `the request body did not arrive within ${timeoutMs} ms; nothing was written`, { connection: 'close' }))
        return
      }
      if (read.kind === 'too-large') {
        sendAnswer(res, tooLarge(maxBytes, 'the body'))
        drainRequest(req)
        return
      }
      let batch: WriteBatch
      try {
        batch = parseWriteBody(read.bytes, bodyFormat(req.headers['content-type']) ?? 'sniff')
      } catch (err) {
        if (!(err instanceof WriteBodyError)) throw err
        sendAnswer(res, httpErrorAnswer(400, 'HTTP_INVALID_BODY', `${err.message}; nothing was written`))
        return
      }
      if (batch.records.length === 0) {
        sendAnswer(res, httpErrorAnswer(400, 'HTTP_INVALID_BODY', 'the body holds no records: send a JSON array of records or one record per line (NDJSON)'))
        return
      }
      // Called as soon as the body is complete: the store commits batches in the order they are handed over.
      const committed = await commit(batch.records, typeof writeConcern === 'number' ? writeConcern : undefined).then(
        (done) => done,
        (err: unknown) => err as Error,
      )
      if (committed instanceof Error) {
        sendAnswer(res, isRecordRefusal(committed) ? recordErrorAnswer(committed, batch) : failedAnswer(options, committed))
        return
      }
      sendAnswer(res, okAnswer(committed))
    } finally {
      admitted--
    }
  }

  return (request) => {
    // A client that leaves mid-body makes the request emit 'error'; the read above sees it as 'close'.
    request.req.on('error', () => {})
    write(request).catch((err: unknown) => {
      reportError(options, err)
      if (request.res.headersSent) request.res.destroy()
      else sendAnswer(request.res, httpErrorAnswer(500, 'HTTP_INTERNAL_ERROR', 'internal error while answering the request'))
    })
  }
}

/** How a batch is committed to the store itself: `putBatch` when it has it (the answer then has a position), else `putMany`. */
function storeCommit(store: WritableStore, supports: Pick<StoreSupports, 'putBatch'>): (records: unknown[]) => Promise<Partial<BatchCommit>> {
  const { putMany, putBatch } = store
  return (records) =>
    putBatch === undefined || !supports.putBatch ? putMany.call(store, records as NewPriceRecord[]).then((stored) => ({ stored })) : putBatch.call(store, records as NewPriceRecord[])
}

/** The checked options, or `undefined` when writes are off. */
function checkWriteOptions(options: WriteEndpointOptions) {
  const maxBytes = checkIntegerOption('maxWriteBytes', options.maxWriteBytes, DEFAULT_MAX_WRITE_BYTES, 1, 2 ** 31 - 1)
  const timeoutMs = checkIntegerOption('writeBodyTimeoutMs', options.writeBodyTimeoutMs, DEFAULT_WRITE_BODY_TIMEOUT_MS, 1, MAX_TIMER_MS)
  const maxQueued = checkIntegerOption('maxQueuedWrites', options.maxQueuedWrites, DEFAULT_MAX_QUEUED_WRITES, 1, 1_000_000)
  if (options.writeToken === undefined) return undefined
  return { token: new WriteToken(options.writeToken), maxBytes, timeoutMs, maxQueued }
}

/** The answer to a write refused on its headers alone: credentials, body type, declared size, or a full line. */
function refusalBeforeBody(req: IncomingMessage, token: WriteToken, maxBytes: number, full: boolean): HttpAnswer | undefined {
  const credentials = token.check(req.headers.authorization)
  if (credentials === 'missing') {
    return httpErrorAnswer(401, 'HTTP_UNAUTHORIZED', 'writing needs the header "Authorization: Bearer <write token>"', {
      'www-authenticate': 'Bearer realm="price-store"',
    })
  }
  if (credentials === 'wrong') return httpErrorAnswer(403, 'HTTP_FORBIDDEN', 'the bearer token does not allow writes')
  const contentType = req.headers['content-type']
  if (bodyFormat(contentType) === undefined) {
    return httpErrorAnswer(
      415,
      'HTTP_UNSUPPORTED_MEDIA_TYPE',
      `content-type ${JSON.stringify(contentType)} is not taken: send application/json (a JSON array of records) or application/x-ndjson (one record per line), in UTF-8`,
    )
  }
  const encoding = req.headers['content-encoding']
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return httpErrorAnswer(415, 'HTTP_UNSUPPORTED_MEDIA_TYPE', `content-encoding ${JSON.stringify(encoding)} is not taken: send the body uncompressed`)
  }
  const declared = Number(req.headers['content-length'])
  if (declared > maxBytes) return tooLarge(maxBytes, `the body's content-length (${declared} bytes)`)
  if (full) return httpErrorAnswer(503, 'HTTP_BUSY', 'too many writes are being received or waiting to commit; try again later', { 'retry-after': '1' })
  return undefined
}

/** The header a write through a replicated node names its own write concern with (`ReplicaSource.putBatch`). */
export const WRITE_CONCERN_HEADER = 'x-write-concern'

/** The write concern a request asks for: `undefined` when it names none, an Error when the header is not one. */
function askedWriteConcern(header: string | string[] | undefined): number | undefined | Error {
  if (header === undefined) return undefined
  const text = (typeof header === 'string' ? header : header.join(',')).trim()
  return /^[0-9]{1,2}$/.test(text) && Number(text) <= 16 ? Number(text) : new Error(`header ${WRITE_CONCERN_HEADER} must be a whole number of nodes from 0 to 16 (got ${JSON.stringify(text.slice(0, 40))}); nothing was written`)
}

function badWriteConcern(err: Error): HttpAnswer {
  return httpErrorAnswer(400, 'HTTP_INVALID_WRITE_CONCERN', err.message)
}

function tooLarge(maxBytes: number, what: string): HttpAnswer {
  return httpErrorAnswer(413, 'HTTP_PAYLOAD_TOO_LARGE', `${what} is over the limit of ${maxBytes} bytes per write; send smaller batches. Nothing was written`)
}

/** 400 for a bad record: the library's message (record index, field, value), with the NDJSON line, and the same facts as fields. */
function recordErrorAnswer(err: PriceStoreError, batch: WriteBatch): HttpAnswer {
  const { index, field } = err.details
  const line = index === undefined ? undefined : batch.lines?.[index]
  const message = `${line === undefined ? err.message : err.message.replace(/^record (\d+)/, `record $1 (line ${line})`)}; nothing was written`
  return jsonAnswer(400, { error: { code: err.code, message, ...(index === undefined ? {} : { index }), ...(field === undefined ? {} : { field }), ...(line === undefined ? {} : { line }) } })
}

function okAnswer(commit: Partial<BatchCommit>): HttpAnswer {
  return jsonAnswer(200, commit.position === undefined ? { stored: commit.stored } : { stored: commit.stored, position: commit.position })
}
