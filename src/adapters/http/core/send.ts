import type { ServerResponse } from 'node:http'
import { httpErrorAnswer, reportError, type ErrorReportOptions, type HttpAnswer } from './answer.js'
import { sendStreamed, type StreamSendOptions } from './streamed-body.js'

/** Sends a complete answer; for HEAD, the headers GET would send (content-length included) and no body. */
export function sendAnswer(res: ServerResponse, answer: HttpAnswer, head = false): void {
  // The client may have gone while the query ran; there is no one to answer.
  if (res.destroyed || res.writableEnded) return
  res.writeHead(answer.status, answer.headers)
  if (head) res.end()
  else res.end(answer.body)
}

/**
 * Sends an answer, piece by piece when it is a stream and `send` says how;
 * a failure to send becomes {@link failRequest}.
 */
export function sendOrFail(options: ErrorReportOptions, res: ServerResponse, answer: HttpAnswer, head: boolean, send?: StreamSendOptions): void {
  try {
    if (answer.stream !== undefined && send !== undefined) sendStreamed(res, answer.status, answer.headers, answer.stream, head, send)
    else sendAnswer(res, answer, head)
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
