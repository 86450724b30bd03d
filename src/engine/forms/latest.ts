import type { LatestQuery, PriceRecord } from '../../types.js'
import { DeferredAnswer } from '../deferred-answer.js'
import { NOT_NOW, lookup, lookupNow, lookupReads } from '../kernels/lookup.js'
import { forEachRow, readOf, rowsOf } from '../kernels/rows.js'
import { selectRecords } from '../kernels/select-fields.js'
import type { PlanOf } from '../query-plan.js'
import type { ScanRow, ScanSource } from '../scan-source.js'
import type { QueryForm } from './query-form.js'

/**
 * The latest-N form of one symbol, newest first: `limit` records after
 * skipping `offset`, in an optional window (the history form). With
 * `asOf` (an option, not a form: the same query kind and answer shape), the
 * directed or bounded as-of lookup of one record around `to`.
 */
export const latest: QueryForm<LatestQuery> = {
  answerForm: () => 'latest',
  symbols: (query) => [query.symbol],
  reads: (query) => lookupReads(query, query.offset + query.limit),
  cost: (plan) => plan.records,
  run: (plan, source) => (plan.query.asOf === undefined ? latestRecords(plan, source) : asOfRecord(plan, source)),
  selectFields: (answer, _query, select) => selectRecords(answer, select),
  // Latest-N and history are lists, resumed after the page's last record; an as-of lookup answers one record.
  paging: { resumesAfter: 'record', lists: (query) => query.asOf === undefined, notListWith: ['direction', 'tolerance'] },
  costReadsNoRecords: true,
}

/** Newest first: `limit` records after skipping `offset`, inside the optional window. */
async function latestRecords(plan: PlanOf<LatestQuery>, source: ScanSource): Promise<DeferredAnswer> {
  const { query } = plan
  const rows: ScanRow[] = []
  let toSkip = query.offset
  await forEachRow(rowsOf(source, query.symbol, readOf(plan, 'main')), (row) => {
    if (toSkip > 0) toSkip--
    else rows.push(row)
    return rows.length < query.limit
  })
  return new DeferredAnswer(rows, recordOf, false)
}

/** The directed or bounded as-of lookup of one symbol: its record, or `[]`. */
async function asOfRecord(plan: PlanOf<LatestQuery>, source: ScanSource): Promise<PriceRecord[]> {
  const { symbol } = plan.query
  const now = lookupNow(source, symbol, plan)
  const row = now === NOT_NOW ? await lookup(source, symbol, plan) : now
  return row === undefined ? [] : [row.record()]
}

/** A row as the latest-N form returns it. */
function recordOf(row: ScanRow): PriceRecord {
  return row.record()
}
