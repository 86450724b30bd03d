/**
 * `GET /prices/quality`: the object `store.quality()` resolves with, for
 * the parameters `symbols` (comma-separated) or `symbol`, `fromTimestamp`
 * and `toTimestamp` (required), `interval`, `origin`, `gapThreshold`, `now`,
 * `sources` and `moves` (see docs/http.md). Unknown parameters are ignored,
 * as on `/prices`; bad ones answer 400 with the library's code. A report
 * endpoint (see report-endpoint.ts): not through the query gate, at most
 * {@link MAX_QUALITY_REPORTS} at once, aborted when its client leaves.
 */
import { qualityOptionsOf } from '../../../engine/quality/quality-query.js'
import type { QualityOptions, QualityReport } from '../../../store/services/quality.js'
import type { ErrorReportOptions } from '../core/answer.js'
import type { LiveEndpointHandler } from './endpoint.js'
import { createReportEndpoint } from './report-endpoint.js'

/** What `GET /prices/quality` needs of a store: `PriceStore.quality`. */
export interface QualitySource {
  quality(options: QualityOptions): Promise<QualityReport>
}

/**
 * Reports made at once by one handler; another request meanwhile is answered 503 `HTTP_BUSY` (a report of a
 * week of 100 symbols reads every chunk of that week, so two at a time already hold both cores).
 */
export const MAX_QUALITY_REPORTS = 2

/** The endpoint over `store`. */
export function createQualityEndpoint(store: QualitySource, options: ErrorReportOptions): LiveEndpointHandler {
  return createReportEndpoint({
    name: 'quality reports',
    maxAtOnce: MAX_QUALITY_REPORTS,
    make: (params, signal) => store.quality({ ...qualityOptionsOf(params), signal }),
  }, options)
}
