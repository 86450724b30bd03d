import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client'
import { formOf } from '../../../engine/answer-form.js'
import type { PriceQuery } from '../../../types.js'
import type { QueryGate } from '../admission/query-gate.js'
import type { StoreSupports } from '../capabilities.js'
import type { LiveCounters } from '../live/endpoint.js'
import type { ReplicaSource } from '../live/replica.js'
import type { ReadAccess } from '../access/read-access.js'
import { registerFeedAgeMetrics } from './feed-age-metrics.js'
import { registerReplicationMetrics } from './replication-metrics.js'
import { registerReadKeyMetrics } from './read-key-metrics.js'
import { registerSignatureMetrics } from './signature-metrics.js'
import { registerStoreSizeMetrics } from './store-size-metrics.js'

/** What a handler's metrics read at scrape time. */
export interface MetricSources {
  readonly store: object
  /** The store's manifest: its write counts are read only when it keeps them. */
  readonly supports: Pick<StoreSupports, 'writeCounts'>
  readonly gate: QueryGate
  /** The live endpoints' counts of now (streams open, exports being sent). */
  readonly counters: Readonly<LiveCounters>
  /** The cluster node the store is a replica of, when there is one: its replication metrics are added. */
  readonly replica?: ReplicaSource | undefined
  /** The server's read keys, when it has them: requests per key are counted. */
  readonly access?: ReadAccess | undefined
}

/**
 * The upper bounds of the latency histogram's buckets (seconds): from a
 * light query's millisecond to the query budget and a long export.
 */
export const LATENCY_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/**
 * The `form` label of a `/prices` query: `latest` (the newest record),
 * `latest-n` (`limit`/`offset`), `history` (as of a time, or within a
 * window), `several`, `range`, `filled` (range with `fill`), `candles`,
 * `twap`. Constant strings: labelling costs no allocation.
 */
export function formLabel(query: PriceQuery): string {
  if (query.kind !== 'latest') return formOf(query)
  if (query.asOf !== undefined || query.from !== undefined || query.to !== undefined) return 'history'
  return query.limit === 1 && query.offset === 0 ? 'latest' : 'latest-n'
}

/** The `form` label of a request that is not a query with a plan. */
export const NO_FORM = 'none'

/** One (endpoint, form) pair's requests: counts by status, and the latency histogram. */
class Tally {
  readonly statuses = new Map<number, number>()
  /** Requests per bucket (not cumulative); the last is past every bound (`+Inf`). */
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1)
  count = 0
  sum = 0
}

/** A metric for prom-client's registry, read from the tallies at scrape time (see {@link HandlerMetrics.record}). */
interface TallyMetric {
  readonly name: string
  readonly help: string
  readonly type: 'counter' | 'histogram'
  readonly aggregator: 'sum'
  get(): { name: string; help: string; type: string; aggregator: 'sum'; values: { labels: Record<string, string | number>; value: number; metricName?: string }[] }
}

let processRegistry: Registry | undefined

/**
 * prom-client's default gauges whose names end in `_total`, which Prometheus
 * reserves for counters (`promtool check metrics` fails on them). Each is
 * the sum of the labelled gauge of the same name without `_total`
 * (`nodejs_active_handles{type}`, ...), which stays.
 */
export const DROPPED_DEFAULT_METRICS: readonly string[] = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/**
 * prom-client's default process and Node.js metrics, collected once per
 * process and shared by every handler's registry: each collection starts an
 * event-loop delay monitor and a GC observer that run for the life of the
 * process, so one per handler would pile up in a host that makes many.
 * Gauges named like counters are left out (see {@link DROPPED_DEFAULT_METRICS}).
 */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
    for (const name of DROPPED_DEFAULT_METRICS) processRegistry.removeSingleMetric(name)
  }
  return processRegistry
}

/**
 * The Prometheus metrics of one handler, in a registry of its own (never
 * prom-client's global one, so two handlers in one process never collide):
 *
 * - `price_store_http_requests_total{endpoint,form,status}` and
 *   `price_store_http_request_duration_seconds{endpoint,form}`, from
 *   {@link HandlerMetrics.record}: kept in plain counters per request (no
 *   label object, no string built) and turned into samples at scrape time;
 * - the gate's load (`price_store_gate_running`, `_sending`, `_queued`,
 *   `price_store_gate_refused_total`, `_timed_out_total`), the store's
 *   `price_store_records_written_total` and
 *   `price_store_last_write_timestamp_seconds`, and
 *   `price_store_stream_subscribers` and `price_store_exports_running`, all
 *   read when scraped;
 * - each feed's staleness, `price_store_feed_age_*` (see {@link registerFeedAgeMetrics}: at most
 *   100 symbols labelled), read when scraped;
 * - the store's size, `price_store_records`, `price_store_symbols` and
 *   `price_store_disk_bytes` (see {@link registerStoreSizeMetrics}), read when
 *   scraped at most every 10 s;
 * - on a store that verifies signatures, `price_store_signature_*` (see {@link registerSignatureMetrics}), read when
 *   scraped;
 * - on a replicated node, `price_store_replication_*` (see
 *   {@link registerReplicationMetrics}), read when scraped;
 * - prom-client's default process and Node.js metrics (`process_*`, `nodejs_*`),
 *   shared by every handler in the process, but for the gauges named like
 *   counters (see {@link DROPPED_DEFAULT_METRICS}).
 */
export class HandlerMetrics {
  readonly registry = new Registry()
  /** Tallies by endpoint, then form. */
  readonly #tallies = new Map<string, Map<string, Tally>>()

  constructor(sources: MetricSources) {
    const { gate, counters, supports } = sources
    const store = sources.store as { readonly recordsWritten?: unknown; readonly lastCommitAt?: unknown }
    const registers = [this.registry]
    const gauge = (name: string, help: string, read: () => number): void => {
      new Gauge({ name, help, registers, collect() { this.set(read()) } })
    }
    const counter = (name: string, help: string, read: () => number): void => {
      new Counter({ name, help, registers, collect() { this.reset(); this.inc(read()) } })
    }
    gauge('price_store_gate_running', 'Heavy queries running against the store now.', () => gate.load().running)
    gauge('price_store_gate_sending', 'Heavy answers being sent to slow clients now, each without a slot.', () => gate.load().sending)
    gauge('price_store_gate_queued', 'Heavy queries waiting for a slot now.', () => gate.load().queued)
    counter('price_store_gate_refused_total', 'Queries refused with HTTP_BUSY.', () => gate.load().refused)
    counter('price_store_gate_timed_out_total', 'Queries answered HTTP_QUERY_TIMEOUT.', () => gate.load().timedOut)
    gauge('price_store_stream_subscribers', 'Live streams (GET /prices/stream) open now.', () => counters.streamSubscribers)
    gauge('price_store_exports_running', 'Exports (GET /prices/export) being sent now.', () => counters.exports)
    if (supports.writeCounts) {
      counter('price_store_records_written_total', 'Records committed to the store since it was opened, by every writer.', () => store.recordsWritten as number)
      gauge('price_store_last_write_timestamp_seconds', 'When the newest commit since the store was opened landed (Unix time); 0 before the first.', () =>
        typeof store.lastCommitAt === 'number' ? store.lastCommitAt / 1000 : 0)
    }
    if (sources.replica !== undefined) registerReplicationMetrics(this.registry, sources.replica)
    registerFeedAgeMetrics(this.registry, sources.store)
    registerStoreSizeMetrics(this.registry, sources.store)
    registerSignatureMetrics(this.registry, sources.store)
    if (sources.access !== undefined) registerReadKeyMetrics(this.registry, sources.access)
    this.registry.registerMetric(this.#requestsMetric() as never)
    this.registry.registerMetric(this.#latencyMetric() as never)
    const shared = processMetrics()
    for (const { name } of shared.getMetricsAsArray()) this.registry.registerMetric(shared.getSingleMetric(name) as Metric)
  }

  /** The content type of {@link HandlerMetrics.text}: Prometheus's text format 0.0.4. */
  get contentType(): string {
    return this.registry.contentType
  }

  /** Every metric in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics()
  }

  /** Counts one finished (or abandoned) request: 0 for `status` when none was sent. */
  record(endpoint: string, form: string, status: number, seconds: number): void {
    let forms = this.#tallies.get(endpoint)
    if (forms === undefined) this.#tallies.set(endpoint, (forms = new Map()))
    let tally = forms.get(form)
    if (tally === undefined) forms.set(form, (tally = new Tally()))
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1)
    tally.count++
    tally.sum += seconds
    let bucket = 0
    while (bucket < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[bucket] as number)) bucket++
    tally.buckets[bucket] = (tally.buckets[bucket] as number) + 1
  }

  /** Every (endpoint, form) tally, at scrape time. */
  *#eachTally(): Generator<[string, string, Tally]> {
    for (const [endpoint, forms] of this.#tallies) for (const [form, tally] of forms) yield [endpoint, form, tally]
  }

  #requestsMetric(): TallyMetric {
    const metric = {
      name: 'price_store_http_requests_total',
      help: 'HTTP requests answered (or abandoned: status 0), by endpoint, query form and status.',
      type: 'counter' as const,
      aggregator: 'sum' as const,
      get: () => {
        const values: ReturnType<TallyMetric['get']>['values'] = []
        for (const [endpoint, form, tally] of this.#eachTally()) {
          for (const [status, value] of tally.statuses) values.push({ labels: { endpoint, form, status }, value })
        }
        return { ...metric, values }
      },
    }
    return metric
  }

  #latencyMetric(): TallyMetric {
    const name = 'price_store_http_request_duration_seconds'
    const metric = {
      name,
      help: 'Time from a request\'s arrival to its answer\'s end (or the connection\'s close), by endpoint and query form.',
      type: 'histogram' as const,
      aggregator: 'sum' as const,
      get: () => {
        const values: ReturnType<TallyMetric['get']>['values'] = []
        for (const [endpoint, form, tally] of this.#eachTally()) {
          let cumulative = 0
          for (const [i, count] of tally.buckets.entries()) {
            cumulative += count
            const le = i < LATENCY_BUCKETS.length ? (LATENCY_BUCKETS[i] as number) : '+Inf'
            values.push({ metricName: `${name}_bucket`, labels: { le, endpoint, form }, value: cumulative })
          }
          values.push({ metricName: `${name}_sum`, labels: { endpoint, form }, value: tally.sum })
          values.push({ metricName: `${name}_count`, labels: { endpoint, form }, value: tally.count })
        }
        return { ...metric, values }
      },
    }
    return metric
  }
}
