import { isPriceStoreError } from '../../../errors.js'
import type { StoreSupports } from '../capabilities.js'
import { reportError, type ErrorReportOptions } from '../core/answer.js'
import { noStoreAnswer } from '../core/no-store-answer.js'
import { sendAnswer } from '../core/send.js'
import type { LiveEndpointHandler, LiveRequest } from './endpoint.js'
import { replicationProblem, type ReplicaSource, type ReplicationBounds, type ReplicationStatus } from './replica.js'

/** Time the read of a health check may take before the store counts as not answering (ms). */
export const HEALTH_READ_TIMEOUT_MS = 1_000

/** What a health check reads of a store, when it has it (a `PriceStore` has all). */
interface HealthSource {
  readonly status?: unknown
  readonly position?: unknown
  symbols?(): Promise<readonly string[]>
  latest?(symbol: string, options: { limit: number }): Promise<unknown>
}

/** The body of `GET /health`. */
export interface HealthReport {
  /** `ok` (200) or `unavailable` (503). */
  readonly status: 'ok' | 'unavailable'
  /** The store's own status (`opening`, `open`, `closing`, `closed`), when it has one. */
  readonly store?: string
  /** The store's newest commit position, when it has one. */
  readonly position?: number
  /** Why the store is unavailable. */
  readonly reason?: string
  /** On a replicated node (a handler given `replica`): where its replication stands, as the node reports it. */
  readonly replication?: ReplicationStatus
}

/** What a health check reads of a replicated node: the node, and the largest lag and staleness it accepts (`Infinity` for none). */
export interface HealthReplication extends ReplicationBounds {
  readonly replica: ReplicaSource
}

/**
 * `GET /health`: 200 `{"status":"ok",...}` when the store is open and
 * answers a cheap read (the newest record of its first symbol) within
 * {@link HEALTH_READ_TIMEOUT_MS}; 503 `{"status":"unavailable",...}` when it
 * is not open (opening, closing, closed), the read fails or takes longer.
 * A store with no `status` or no `latest` (a stub, a proxy) is checked on
 * what it has. On a replicated node, the report holds its `replication`
 * status too, and is 503 as well when replication failed or stopped, or the
 * node lags the log by more than `maxLag` or has not heard from it for more
 * than `maxStalenessMs` (see {@link replicationProblem}).
 * Never goes through the query gate: a busy server is still a live one.
 * `cache-control: no-store`.
 */
export function createHealthEndpoint(
  store: object, supports: Pick<StoreSupports, 'healthRead'>, options: ErrorReportOptions, replication?: HealthReplication,
): LiveEndpointHandler {
  const source = store as HealthSource
  const reads = supports.healthRead
  return (request) => void serveHealth(source, reads, options, replication, request)
}

async function serveHealth(
  store: HealthSource, reads: boolean, options: ErrorReportOptions, replication: HealthReplication | undefined, { req, res, head }: LiveRequest,
): Promise<void> {
  req.resume() // a body means nothing here
  let report: HealthReport
  try {
    report = await checkHealth(store, reads, options)
    if (replication !== undefined) report = withReplication(report, replication)
  } catch (err) {
    reportError(options, err)
    report = { status: 'unavailable', reason: 'the health check failed' }
  }
  sendAnswer(res, noStoreAnswer(report.status === 'ok' ? 200 : 503, report), head)
}

/** The report with the node's replication status in it; unavailable when the node is unfit to serve reads (and the store was fine). */
function withReplication(report: HealthReport, { replica, ...bounds }: HealthReplication): HealthReport {
  const status = replica.replication()
  const problem = report.status === 'ok' ? replicationProblem(status, bounds) : undefined
  if (problem === undefined) return { ...report, replication: status }
  // `position` goes, as in every unavailable report; the replication status still holds it.
  return { status: 'unavailable', ...(report.store === undefined ? {} : { store: report.store }), reason: problem, replication: status }
}

async function checkHealth(store: HealthSource, reads: boolean, options: ErrorReportOptions): Promise<HealthReport> {
  const status = typeof store.status === 'string' ? store.status : undefined
  const named = status === undefined ? {} : { store: status }
  if (status !== undefined && status !== 'open') return { status: 'unavailable', ...named, reason: `the store is ${status}` }
  const failure = await (reads ? probe(store) : undefined)
  if (failure !== undefined) {
    if (failure.err !== undefined && !isPriceStoreError(failure.err, 'PRICE_NOT_OPEN')) reportError(options, failure.err)
    return { status: 'unavailable', ...named, reason: failure.reason }
  }
  // Read after the probe: the store may have closed meanwhile.
  const now = typeof store.status === 'string' ? store.status : undefined
  if (now !== undefined && now !== 'open') return { status: 'unavailable', store: now, reason: `the store is ${now}` }
  return { status: 'ok', ...named, ...(typeof store.position === 'number' ? { position: store.position } : {}) }
}

/** Reads the newest record of the store's first symbol (it has `symbols` and `latest`); what went wrong, or `undefined` when it answered in time. */
function probe(store: HealthSource): Promise<{ reason: string; err?: unknown } | undefined> {
  const symbols = store.symbols as NonNullable<HealthSource['symbols']>
  const latest = store.latest as NonNullable<HealthSource['latest']>
  return new Promise((resolve) => {
    const late = setTimeout(() => resolve({ reason: `the store did not answer a read within ${HEALTH_READ_TIMEOUT_MS} ms` }), HEALTH_READ_TIMEOUT_MS)
    late.unref()
    const read = async (): Promise<void> => {
      const [first] = await symbols.call(store)
      if (first !== undefined) await latest.call(store, first, { limit: 1 })
    }
    read().then(
      () => {
        clearTimeout(late)
        resolve(undefined)
      },
      (err: unknown) => {
        clearTimeout(late)
        resolve({ reason: `a read failed${isPriceStoreError(err) ? ` (${err.code})` : ''}`, err })
      },
    )
  })
}
