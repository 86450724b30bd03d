import { failedAnswer, reportError, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'
import { sendAnswer } from '../core/send.js'
import type { HandlerMetrics } from '../observe/metrics.js'
import type { LiveEndpointHandler, LiveRequest } from './endpoint.js'

/**
 * `GET /metrics`: the handler's metrics (see {@link HandlerMetrics}) in the
 * Prometheus text format, read at the time of the scrape. Never goes
 * through the query gate; `cache-control: no-store`.
 */
export function createMetricsEndpoint(metrics: HandlerMetrics, options: ErrorReportOptions): LiveEndpointHandler {
  return (request) => serveMetrics(metrics, options, request)
}

function serveMetrics(metrics: HandlerMetrics, options: ErrorReportOptions, { req, res, head, compression }: LiveRequest): void {
  req.resume() // a body means nothing here
  metrics
    .text()
    .then(
      (text): HttpAnswer => ({
        status: 200,
        headers: { 'content-type': metrics.contentType, 'content-length': String(Buffer.byteLength(text, 'utf8')), 'cache-control': 'no-store' },
        body: text,
      }),
      (err: unknown) => failedAnswer(options, err),
    )
    .then((answer) => sendAnswer(res, answer, head, compression))
    .catch((err: unknown) => {
      reportError(options, err)
      res.destroy()
    })
}
