import type { ServerResponse } from 'node:http'
import { httpErrorAnswer, reportError, type ErrorReportOptions, type HttpAnswer } from './answer.js'
import { COMPRESS_IN_TURN_BELOW, varyOnEncoding, type AnswerCompression, type ContentCoding } from './compression.js'
import { sendStreamed, type StreamSendOptions } from './streamed-body.js'

/**
 * Sends a complete answer; for HEAD, the headers GET would send (content-length included) and no body.
 * With `compression` (the answers that can be large), a 200 answer is
 * negotiated: `vary: Accept-Encoding` always, and the body in the coding the
 * request accepts when it is at least the threshold (see {@link sendNegotiated}).
 */
export function sendAnswer(res: ServerResponse, answer: HttpAnswer, head = false, compression?: AnswerCompression): void {
  // The client may have gone while the query ran; there is no one to answer.
  if (res.destroyed || res.writableEnded) return
  if (compression !== undefined && answer.status === 200) return sendNegotiated(res, answer, head, compression)
  res.writeHead(answer.status, answer.headers)
  if (head) res.end()
  else res.end(answer.body)
}

/**
 * Sends a complete 200 answer in the coding its request accepts: as it is
 * (with `vary`) when the request accepts no coding or the body is below the
 * threshold and the request does not refuse `identity`; else compressed, at
 * once when small, in zlib's thread pool when large, with the compressed
 * `content-length`. A HEAD is compressed too: its `content-length` is the
 * one GET would send. Should compressing fail, the body goes as it is.
 */
function sendNegotiated(res: ServerResponse, answer: HttpAnswer, head: boolean, compression: AnswerCompression): void {
  const { coding, identity } = compression.negotiate(res.req)
  const headers = varyOnEncoding(res, answer.headers)
  const length = answer.headers['content-length']
  const bytes = length === undefined ? Buffer.byteLength(answer.body, 'utf8') : Number(length)
  if (coding === 'identity' || (identity && bytes < compression.threshold)) {
    res.writeHead(answer.status, headers)
    if (head) res.end()
    else res.end(answer.body)
    return
  }
  const body = Buffer.from(answer.body, 'utf8')
  if (body.length < COMPRESS_IN_TURN_BELOW) {
    let compressed: Buffer
    try {
      compressed = compression.compressNow(body, coding)
    } catch {
      return sendPlain(res, answer.status, headers, body, head)
    }
    return sendCompressed(res, answer.status, headers, coding, compressed, head)
  }
  compression.compress(body, coding, (err, compressed) => {
    if (res.destroyed || res.writableEnded) return
    if (err !== null) sendPlain(res, answer.status, headers, body, head)
    else sendCompressed(res, answer.status, headers, coding, compressed, head)
  })
}

function sendCompressed(res: ServerResponse, status: number, headers: Record<string, string>, coding: ContentCoding, body: Buffer, head: boolean): void {
  headers['content-encoding'] = coding
  headers['content-length'] = String(body.length)
  res.writeHead(status, headers)
  if (head) res.end()
  else res.end(body)
}

function sendPlain(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer, head: boolean): void {
  res.writeHead(status, headers)
  if (head) res.end()
  else res.end(body)
}

/**
 * Sends an answer, piece by piece when it is a stream and `send` says how
 * (compressed as it streams when `send.compression` and the request agree);
 * a failure to send becomes {@link failRequest}.
 */
export function sendOrFail(options: ErrorReportOptions, res: ServerResponse, answer: HttpAnswer, head: boolean, send?: StreamSendOptions): void {
  try {
    if (answer.stream !== undefined && send !== undefined) sendStreamed(res, answer.status, answer.headers, answer.stream, head, send)
    else sendAnswer(res, answer, head, send?.compression)
  } catch (err) {
    answer.stream?.end()
    failRequest(options, res, err, head)
  }
}

/** Something unexpected broke: log it, and answer 500 without internals if nothing is out yet. */
export function failRequest(options: ErrorReportOptions, res: ServerResponse, err: unknown, head: boolean): void {
  reportError(options, err)
  try {
    if (res.headersSent) throw err // half an answer is out: only closing the connection is honest
    sendAnswer(res, httpErrorAnswer(500, 'HTTP_INTERNAL_ERROR', 'internal error while answering the request'), head)
  } catch {
    res.destroy()
  }
}
