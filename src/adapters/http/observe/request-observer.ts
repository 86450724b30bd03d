import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { QueryPlan } from '../../../engine/query-plan.js'
import { reportError, type ErrorReportOptions } from '../core/answer.js'
import { isoTime, type AccessLogEntry, type ObservationOptions } from './access-log.js'
import { NO_FORM, formLabel, type HandlerMetrics } from './metrics.js'

/**
 * What the handler tells observation of the requests it serves, as fastify
 * attaches hooks to its routes: routing calls `onRequest` once a request is
 * routed, and knows nothing of what is done with it (metrics, access log).
 * The end of the request (`onResponse`) is watched from its response.
 */
export interface RequestHooks {
  /**
   * A request the handler serves has arrived: `target` is its request target
   * as compared (see `basePath`), `endpoint` what answers it (the access
   * log's names). Returns its trace, told what is learnt of it later.
   */
  onRequest(req: IncomingMessage, res: ServerResponse, arrivedAt: number, target: string, endpoint: string): RequestTrace
}

/** One request being observed, told what is learnt of it while it is answered. */
export interface RequestTrace {
  /** Its query is compiled: labels it with the query's form. */
  planned(plan: QueryPlan): void
  /** Its reader is known: the access log names its read key's id. */
  readBy(id: string): void
}

/**
 * The hooks for the handler's metrics and access log, or `undefined` when
 * both are off: then a request costs nothing to observe. When on: one
 * object and one shared listener per request, nothing else.
 */
export function createRequestHooks(metrics: HandlerMetrics | undefined, options: ObservationOptions & ErrorReportOptions): RequestHooks | undefined {
  return metrics === undefined && options.accessLog === undefined ? undefined : new RequestObserver(metrics, options)
}

/** Where the observation of a response is kept, for the one `close` listener all responses share. */
const OBSERVED = Symbol('observed request')

/** One request watched from its arrival to its response's `close` (answer ended, or connection gone). */
class ObservedRequest implements RequestTrace {
  /** The query's form label, once its plan is made. */
  form: string | undefined = undefined
  /** The id of its read key (`anonymous` for none), when the server has read keys. */
  reader: string | undefined = undefined

  constructor(
    readonly observer: RequestObserver,
    readonly req: IncomingMessage,
    readonly arrivedAt: number,
    readonly target: string,
    readonly endpoint: string,
    /** The connection's bytes written before this answer (a keep-alive connection carries several). */
    readonly bytesBefore: number,
  ) {}

  planned(plan: QueryPlan): void {
    this.form = formLabel(plan.query)
  }

  readBy(id: string): void {
    this.reader = id
  }
}

/** Watches requests for the handler's metrics and access log (see {@link createRequestHooks}). */
class RequestObserver implements RequestHooks {
  constructor(
    readonly metrics: HandlerMetrics | undefined,
    readonly options: ObservationOptions & ErrorReportOptions,
  ) {}

  onRequest(req: IncomingMessage, res: ServerResponse, arrivedAt: number, target: string, endpoint: string): ObservedRequest {
    // The socket's count sums its queued writes (an array built per read): only the access log needs it.
    const bytesBefore = this.options.accessLog === undefined ? 0 : (req.socket?.bytesWritten ?? 0)
    const observed = new ObservedRequest(this, req, arrivedAt, target, endpoint, bytesBefore)
    ;(res as ServerResponse & { [OBSERVED]?: ObservedRequest })[OBSERVED] = observed
    res.on('close', closeObserved)
    return observed
  }

  /** The request's answer has ended or its connection closed: counts it, and logs it. */
  onResponse(observed: ObservedRequest, res: ServerResponse): void {
    const durationMs = performance.now() - observed.arrivedAt
    const status = res.headersSent ? res.statusCode : 0
    const form = observed.form
    this.metrics?.record(observed.endpoint, form ?? NO_FORM, status, durationMs / 1000)
    const accessLog = this.options.accessLog
    if (accessLog === undefined) return
    try {
      accessLog(accessLogEntry(observed, res, status, durationMs))
    } catch (err) {
      reportError(this.options, err)
    }
  }
}

/** The `close` listener of every observed response (`this` is the response): one function for all, no closure per request. */
function closeObserved(this: ServerResponse): void {
  const observed = (this as ServerResponse & { [OBSERVED]?: ObservedRequest })[OBSERVED]
  observed?.observer.onResponse(observed, this)
}

function accessLogEntry(observed: ObservedRequest, res: ServerResponse, status: number, durationMs: number): AccessLogEntry {
  const { req, target } = observed
  const question = target.indexOf('?')
  const socket = req.socket
  // One literal of fixed shape (absent fields are undefined, which JSON leaves out): no spread per request.
  return {
    time: isoTime(Math.floor(performance.timeOrigin + observed.arrivedAt)),
    method: req.method ?? '',
    path: question < 0 ? target : target.slice(0, question),
    query: question < 0 ? '' : withoutCredentials(target.slice(question + 1)),
    endpoint: observed.endpoint,
    form: observed.form,
    reader: observed.reader,
    status,
    bytes: socket === undefined || socket === null ? 0 : Math.max(0, (socket.bytesWritten ?? observed.bytesBefore) - observed.bytesBefore),
    durationMs: Math.round(durationMs * 1000) / 1000,
    remoteAddress: socket?.remoteAddress,
    aborted: res.writableFinished ? undefined : true,
  }
}

/** Parameter names that look like credentials: a key sent in a query string (which the server never reads) is not logged either. */
const CREDENTIAL_PARAMETER = /(^|&)((?:x[-_])?api[-_]?key|key|token|access[-_]?token|auth|authorization)=[^&]*/gi

/** `query` with the value of every credential-like parameter replaced by `REDACTED`. */
export function withoutCredentials(query: string): string {
  return query.replace(CREDENTIAL_PARAMETER, '$1$2=REDACTED')
}
