import type { QueryOptions } from '../../../engine/typed-queries.js'
import type { StoreStats } from '../../../store/services/stats.js'
import { failedAnswer, reportError, type ErrorReportOptions } from '../core/answer.js'
import { noStoreAnswer } from '../core/no-store-answer.js'
import { sendAnswer } from '../core/send.js'
import type { LiveEndpointHandler, LiveRequest } from './endpoint.js'
import { clusterStatsOf, type ReplicaSource } from './replica.js'

/** What `GET /stats` needs of a store: `PriceStore.stats`. */
export interface StatsSource {
  stats(options?: QueryOptions): Promise<StoreStats>
}

/**
 * `GET /stats`: the store's statistics as JSON, exactly the object
 * `store.stats()` resolves with (records and symbols, each symbol's count
 * and first and last timestamp, the records not sealed yet, the bytes on
 * disk, the format version and the provider), from one snapshot. It reads
 * no record (sealed hours are counted from their index entries), so it does
 * not go through the query gate. `cache-control: no-store`: the numbers are
 * those of now. On a replicated node, a `cluster` member is added: the
 * stream, the replication state, the position applied, and the stream's
 * position and the lag when known (see {@link clusterStatsOf}).
 */
export function createStatsEndpoint(store: StatsSource, options: ErrorReportOptions, replica?: ReplicaSource): LiveEndpointHandler {
  return (request) => serveStats(store, options, replica, request)
}

function serveStats(store: StatsSource, options: ErrorReportOptions, replica: ReplicaSource | undefined, { req, res, head, compression }: LiveRequest): void {
  req.resume() // a body means nothing here
  let stats: Promise<StoreStats>
  try {
    stats = Promise.resolve(store.stats())
  } catch (err) {
    stats = Promise.reject(err)
  }
  stats
    .then(
      (value) => noStoreAnswer(200, replica === undefined ? value : { ...value, cluster: clusterStatsOf(replica.replication()) }),
      (err: unknown) => failedAnswer(options, err),
    )
    .then((answer) => sendAnswer(res, answer, head, compression))
    .catch((err: unknown) => {
      reportError(options, err)
      res.destroy()
    })
}
