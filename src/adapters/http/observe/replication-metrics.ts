import type { Registry } from 'prom-client'
import type { ReplicaSource, ReplicationStatus } from '../live/replica.js'

/** The states of {@link ReplicationStatus.state}, in the order metrics list them. */
export const REPLICATION_STATES = ['applying', 'connecting', 'isolated', 'failed', 'stopped'] as const satisfies readonly ReplicationStatus['state'][]

/** One sample of a metric read at scrape time. */
interface Sample {
  labels: Record<string, string | number>
  value: number
}

/** A metric for prom-client's registry whose samples are computed when scraped (none at all when there is nothing to say). */
interface ScrapedMetric {
  readonly name: string
  readonly help: string
  readonly type: 'gauge' | 'counter'
  readonly aggregator: 'sum'
  get(): { name: string; help: string; type: string; aggregator: 'sum'; values: Sample[] }
}

/**
 * Registers the replication metrics of a replicated node, each read from
 * `replica.replication()` at scrape time (no I/O):
 *
 * - `price_store_replication_position`, `_stream_position` and `_lag`
 *   (gauges; the stream's position and the lag have no sample until the
 *   node knows the stream's position, rather than a made-up 0);
 * - `price_store_replication_connected` (1 while applying, else 0) and
 *   `price_store_replication_state{state}` (1 for the current state, 0 for
 *   the others, so an alert can name the state);
 * - `price_store_replication_applied_batches_total` and
 *   `_applied_records_total` (counters since the node started: their
 *   `rate()` is the apply rate).
 *
 * Custom metrics rather than prom-client's `Gauge`: a label-less `Gauge`
 * always has a sample, and a position not known yet must have none.
 */
export function registerReplicationMetrics(registry: Registry, replica: ReplicaSource): void {
  const metric = (name: string, help: string, type: 'gauge' | 'counter', read: (status: ReplicationStatus) => Sample[]): void => {
    const built: ScrapedMetric = { name, help, type, aggregator: 'sum', get: () => ({ ...built, values: read(replica.replication()) }) }
    registry.registerMetric(built as never)
  }
  const one = (value: number | undefined): Sample[] => (value === undefined || !Number.isFinite(value) ? [] : [{ labels: {}, value }])
  metric('price_store_replication_position', 'The newest position (stream sequence) applied to this node\'s store.', 'gauge', (status) => one(status.position))
  metric(
    'price_store_replication_stream_position',
    'The newest position of the replication stream this node knows of; no sample until it is known.',
    'gauge',
    (status) => one(status.streamPosition),
  )
  metric('price_store_replication_lag', 'Positions of the stream this node has not applied yet (stream position minus applied position); no sample until known.', 'gauge', (status) =>
    one(status.lag))
  metric('price_store_replication_connected', '1 while this node is connected to the stream and applying it, else 0.', 'gauge', (status) =>
    one(status.state === 'applying' ? 1 : 0))
  metric(
    'price_store_replication_state',
    'The replication state of this node: 1 for the current one (applying, connecting, isolated, failed, stopped), 0 for the others.',
    'gauge',
    (status) => REPLICATION_STATES.map((state) => ({ labels: { state }, value: status.state === state ? 1 : 0 })),
  )
  metric('price_store_replication_applied_batches_total', 'Batches (commits) applied from the stream to this node\'s store since the node started.', 'counter', (status) =>
    one(status.appliedBatches))
  metric('price_store_replication_heard_ago_seconds', 'Seconds since this node last heard from the stream (a commit delivered or a probe answered); no sample until it first did.', 'gauge', (status) =>
    one(status.heardAgoMs === undefined ? undefined : status.heardAgoMs / 1000))
  metric('price_store_replication_refused_commits_total', 'Commits of the stream this node refused to apply (undecodable, another provider, bytes not matching their id, a record refused) since it started.', 'counter', (status) =>
    one(status.refusedCommits))
  metric('price_store_replication_applied_records_total', 'Records applied from the stream to this node\'s store since the node started.', 'counter', (status) =>
    one(status.appliedRecords))
}
