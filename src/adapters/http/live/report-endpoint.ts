/**
 * The shape of the report endpoints (`GET /prices/quality`,
 * `GET /prices/verify`): parameters read into a store call, the report it
 * resolves with sent as JSON (`cache-control: no-store`), a bounded number
 * made at once (another request meanwhile: 503 `HTTP_BUSY`), and a client
 * that leaves aborts its report. Bad parameters answer 400 with the
 * library's code, as `/prices` does. They do not go through the query gate:
 * a report reads a span of the store's history, like an export.
 */
import { busyAnswer, failedAnswer, reportError, type ErrorReportOptions } from '../core/answer.js'
import { noStoreAnswer } from '../core/no-store-answer.js'
import { sendAnswer } from '../core/send.js'
import type { LiveEndpointHandler, LiveRequest } from './endpoint.js'

/** One kind of report: its name (for the busy answer), how many at once, and how it is made. */
export interface ReportKind {
  /** e.g. `quality reports`. */
  readonly name: string
  readonly maxAtOnce: number
  /**
   * Makes the report for the request's parameters, stopping when `signal` aborts.
   * @throws PriceStoreError (synchronously or by rejecting) for bad parameters
   */
  make(params: URLSearchParams, signal: AbortSignal): Promise<unknown>
}

/** A handler answering each request with one report of `kind`. */
export function createReportEndpoint(kind: ReportKind, options: ErrorReportOptions): LiveEndpointHandler {
  let running = 0
  return ({ req, res, params, head, compression }: LiveRequest): void => {
    req.resume() // a body means nothing here
    if (running >= kind.maxAtOnce) {
      sendAnswer(res, busyAnswer(`${kind.maxAtOnce} ${kind.name} are being made: try again shortly`), head)
      return
    }
    const gone = new AbortController()
    res.once('close', () => gone.abort())
    running++
    void sendReport(() => kind.make(params, gone.signal), options, { res, head, compression }).finally(() => running--)
  }
}

/**
 * Sends what `make` resolves with as a JSON answer (`cache-control:
 * no-store`), its coded error as the error answer (thrown or rejected),
 * to a client still there. Never rejects: a failure to send is reported
 * and the connection cut.
 */
export function sendReport(make: () => Promise<unknown>, options: ErrorReportOptions, { res, head, compression }: Pick<LiveRequest, 'res' | 'head' | 'compression'>): Promise<void> {
  let report: Promise<unknown>
  try {
    report = Promise.resolve(make())
  } catch (err) {
    report = Promise.reject(err)
  }
  return report
    .then(
      (value) => noStoreAnswer(200, value),
      (err: unknown) => failedAnswer(options, err),
    )
    .then((answer) => {
      if (!res.destroyed) sendAnswer(res, answer, head, compression)
    })
    .catch((err: unknown) => {
      reportError(options, err)
      res.destroy()
    })
}
