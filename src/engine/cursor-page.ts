import { isPriceStoreError } from '../errors.js'
import type { CandlesQuery, CrossCandlesQuery, CrossRangeQuery, LatestQuery, PriceAnswer, PriceQuery, RangeQuery } from '../types.js'
import { compareIds } from '../rules/compare-ids.js'
import { throwIfAborted } from '../rules/abort.js'
import { abortableSource } from './abortable-source.js'
import type { PagePosition } from './cursor.js'
import { executePlan } from './execute.js'
import { selectAnswerFields } from './field-selection.js'
import { formFor, pagingOf } from './forms/index.js'
import { bucketOf, bucketStart } from './grid.js'
import { rangeTooLarge } from './kernels/paging.js'
import { forEachRow, readOf, refOf, rowsOf } from './kernels/rows.js'
import { planQuery } from './plan.js'
import type { QueryPlan } from './query-plan.js'
import type { ScanRow, ScanSource } from './scan-source.js'
import type { QueryOptions } from './typed-queries.js'
import { withValidUntil } from './valid-until.js'

/*
 * One page of a list answer, resumed after a position (docs/semantics.md,
 * "Cursors"), pure. Which queries are lists, and whether a page resumes
 * after a record or a bucket, is each form's `paging` (forms/). A page is
 * planned as a query of the same form that starts where the position
 * ends, asking one item more than the page (the probe: it says whether a
 * next page exists) and read through the store's ordinary plans, so it
 * costs what its own items cost wherever it starts:
 *
 * - latest-N: the window up to the position's timestamp, newest first; the
 *   records of that very millisecond at or above the position's id are
 *   skipped (`ties` of them are expected: the read asks for that many more);
 * - range and candles (gap-filled or not), and cross-rate ranges and
 *   candles (every bucket of the grid): the grid from the bucket after the
 *   position's. Each later bucket lies wholly inside the narrowed window,
 *   and a carried or `beforeFirst` bucket is decided by the records before
 *   it, which the narrowed query seeks as the whole one does.
 */

/** A query that can be paged: latest-N (not a directed as-of lookup), range, candles, a cross-rate range or candles. */
export type PageableQuery = LatestQuery | BucketedQuery

/** The pageable forms answering one item per bucket (or per bucket holding records), oldest first. */
type BucketedQuery = RangeQuery | CandlesQuery | CrossRangeQuery | CrossCandlesQuery

/** Whether `query` is a list answer that cursors page: its form's row says. */
export function isPageable(query: PriceQuery): query is PageableQuery {
  return pagingOf(query) !== undefined
}

/** The kind of position a query's pages end at: its form's row says. */
export function positionKindOf(query: PageableQuery): PagePosition['kind'] {
  // A pageable query's form has `paging` (isPageable).
  return formFor(query).paging!.resumesAfter
}

/** Whether `query`'s pages resume after a record (latest-N, newest first) rather than after a bucket. */
function pagesByRecord(query: PageableQuery): query is LatestQuery {
  return positionKindOf(query) === 'record'
}

/** What running a page plan gives: the page and where the next starts (absent on the last page), or `retry`. */
export type PageOutcome =
  | { readonly retry?: undefined; readonly answer: PriceAnswer; readonly next?: PagePosition }
  /** More records than expected share the position's millisecond: plan again with a larger `slack`. */
  | { readonly retry: true }

/**
 * The plan of the page after `position` (the first page without one):
 * the narrowed query with one more item than the page, and for latest-N
 * `ties + slack` more to skip. `maxRangePoints` is the store's; the plan
 * allows one more for the probe (see {@link runPage} for the refusal).
 */
export function planPage(query: PageableQuery, position: PagePosition | undefined, maxRangePoints: number, slack = 0): QueryPlan {
  return planQuery(narrowed(query, position, slack), query.limit === undefined ? maxRangePoints : maxRangePoints + 1)
}

function narrowed(query: PageableQuery, position: PagePosition | undefined, slack: number): PriceQuery {
  // `fields` and `validUntil` are applied after the page is cut: the cut reads ids, timestamps and buckets.
  const { fields: _fields, validUntil: _validUntil, ...rest } = query as PageableQuery & { readonly validUntil?: true }
  if (pagesByRecord(query)) {
    const skip = position?.kind === 'record' ? position.ties + slack : 0
    const to = position?.kind === 'record' ? { to: position.timestamp } : {}
    return Object.freeze({ ...rest, ...to, offset: 0, limit: query.limit + 1 + skip })
  }
  const from = position?.kind === 'bucket' ? { from: Math.max(query.from, position.bucket + query.interval) } : {}
  return Object.freeze({ ...rest, ...from, offset: 0, ...(query.limit === undefined ? {} : { limit: query.limit + 1 }) })
}

/**
 * Runs a plan of {@link planPage} over a source: the page of `query`
 * after `position`, and the position of its last item when more follow.
 * @throws PriceStoreError as the form's own answer (`PRICE_RANGE_TOO_LARGE` with the count the page would have had)
 */
export async function runPage(
  query: PageableQuery, position: PagePosition | undefined, plan: QueryPlan, source: ScanSource, options: QueryOptions = {},
): Promise<PageOutcome> {
  const outcome = pagesByRecord(query)
    ? await latestPage(query, position, plan, options.signal === undefined ? source : abortableSource(source, options.signal), options.signal)
    : await bucketPage(query, plan, source, options)
  if (outcome.retry === true) return outcome
  // A page's last record gets its true successor, read from the store, not the probe item.
  const answer = 'validUntil' in query && query.validUntil === true
    ? (await withValidUntil(outcome.answer, query, options.signal === undefined ? source : abortableSource(source, options.signal))) as PriceAnswer
    : outcome.answer
  if (query.fields === undefined) return answer === outcome.answer ? outcome : { ...outcome, answer }
  return { ...outcome, answer: selectAnswerFields(answer, query, query.fields) as PriceAnswer }
}

/** Newest first, skipping the position's record and the ones of its millisecond before it. */
async function latestPage(query: LatestQuery, position: PagePosition | undefined, plan: QueryPlan, source: ScanSource, signal: AbortSignal | undefined): Promise<PageOutcome> {
  if (signal !== undefined) throwIfAborted(signal)
  const read = readOf(plan, 'main')
  const after = position?.kind === 'record' ? position : undefined
  const kept: ScanRow[] = []
  let scanned = 0
  // Rows of the same millisecond seen so far (skipped or kept), for the next position's `ties`.
  let tieTimestamp = Number.NaN
  let tieCount = 0
  let lastTies = 0
  await forEachRow(rowsOf(source, query.symbol, read), (row) => {
    scanned++
    if (row.timestamp !== tieTimestamp) tieTimestamp = row.timestamp, tieCount = 0
    tieCount++
    if (after === undefined || row.timestamp !== after.timestamp || compareIds(refOf(row).id, after.id) < 0) {
      kept.push(row)
      if (kept.length === query.limit) lastTies = tieCount
    }
    return kept.length <= query.limit
  })
  // The read stopped at its limit before the page and its probe were found: more ties than the position expected.
  if (kept.length <= query.limit && scanned === read.limit) return { retry: true }
  const page = kept.slice(0, query.limit)
  const answer = page.map((row) => row.record())
  const last = page[page.length - 1]
  if (kept.length <= query.limit || last === undefined) return { answer }
  return { answer, next: { kind: 'record', timestamp: last.timestamp, id: refOf(last).id, ties: lastTies } }
}

type BucketItem = { readonly bucket?: number; readonly timestamp?: number }

async function answerOf(plan: QueryPlan, source: ScanSource, options: QueryOptions): Promise<BucketItem[]> {
  return (await executePlan(plan, source, options)) as BucketItem[]
}

/** How much wider each window is than the one before at least (see {@link inGrowingWindows}). */
const WINDOW_GROWTH = 4
/** How much wider the window after one that held nothing is: nothing was learnt of the data's density. */
const EMPTY_WINDOW_GROWTH = 16
/** The margin over the width the density seen so far predicts, so that a slightly sparser stretch still fits. */
const DENSITY_MARGIN = 1.25

/**
 * The narrowed query's first `limit + 1` items, read over windows that
 * start at its `from` and end on a bucket's last millisecond, `limit + 1`
 * buckets wide and then wider, until one holds them or reaches `to`: as wide
 * as the density of the window before predicts (with a margin), at least
 * {@link WINDOW_GROWTH} times wider ({@link EMPTY_WINDOW_GROWTH} after an
 * empty one), so sparse data under fine buckets (10-s records, 1-ms
 * buckets) takes two or three reads, not eight. Each bucket inside such a window is
 * answered exactly as in the whole window (it lies wholly inside it), so a
 * page near the end of a long range reads about its own records, not the
 * rest of the range (which a source may read at once). Only while the page
 * and its probe fit the cap: a window's refusal would then name another count.
 */
async function inGrowingWindows(plan: QueryPlan, limit: number, source: ScanSource, options: QueryOptions): Promise<BucketItem[]> {
  const query = plan.query as BucketedQuery
  const first = bucketOf(query, query.from)
  for (let width = limit + 1; ;) {
    const end = bucketStart(query, first + width) - 1
    if (!(end < query.to)) return answerOf(plan, source, options)
    const items = await answerOf(planQuery(Object.freeze({ ...query, to: end }), plan.maxRangePoints), source, options)
    if (items.length > limit) return items
    const predicted = items.length === 0 ? width * EMPTY_WINDOW_GROWTH : Math.ceil((width * (limit + 1) * DENSITY_MARGIN) / items.length)
    width = Math.max(width * WINDOW_GROWTH, predicted)
  }
}

/** The bucketed forms: the narrowed query's answer, cut to the page; the probe item says whether more follow. */
async function bucketPage(query: BucketedQuery, plan: QueryPlan, source: ScanSource, options: QueryOptions): Promise<PageOutcome> {
  const cap = plan.maxRangePoints - (query.limit === undefined ? 0 : 1)
  // A position on the grid's last bucket leaves nothing (the probe said more followed, but a prune may have taken it).
  if ((plan.query as RangeQuery).from > query.to) return { answer: [] }
  let items: { readonly bucket?: number; readonly timestamp?: number }[]
  try {
    items = query.limit !== undefined && query.limit <= cap ? await inGrowingWindows(plan, query.limit, source, options) : await answerOf(plan, source, options)
  } catch (err) {
    // The probe's plan allows one item more than the cap: the refusal names the page's own count, as the unpaged answer's does.
    if (isPriceStoreError(err) && err.code === 'PRICE_RANGE_TOO_LARGE' && query.limit !== undefined) {
      throw rangeTooLarge(Math.min(err.details?.count ?? 0, query.limit), cap, false)
    }
    throw err
  }
  if (query.limit === undefined || items.length <= query.limit) {
    if (items.length > cap) throw rangeTooLarge(items.length, cap, false)
    return { answer: items as PriceAnswer }
  }
  const page = items.slice(0, query.limit)
  if (page.length > cap) throw rangeTooLarge(page.length, cap, false)
  const last = page[page.length - 1]!
  const bucket = last.bucket ?? bucketStart(query, bucketOf(query, last.timestamp as number))
  return { answer: page as PriceAnswer, next: { kind: 'bucket', bucket } }
}
