/**
 * Pages of a batch as-of answer (docs/semantics.md,
 * "Batch as-of pages"), pure: which times a page holds and where the next
 * one starts. Pages are time-major: a page is every symbol at the next run
 * of `pageSize` times (ascending), so each symbol's entries stay one
 * contiguous, ascending run per page and a page has the answer's shape
 * (keyed by symbol, then time). The store signs the position
 * (store/batch-as-of.ts) as it signs `/prices` cursors.
 */
import { fail } from '../rules/query-errors.js'
import type { PagePosition } from './cursor.js'
import type { BatchAsOfAnswer, BatchAsOfOptions, BatchQuery } from './forms/batch.js'

/** Times per page when `cursor` is given without `pageSize`. */
export const DEFAULT_BATCH_PAGE_TIMES = 100

/**
 * Options of `PriceStore.batchAsOf` asking for a page: the batch's options, and `pageSize` (times per page)
 * or `cursor` (the `next` of the page before, or `''` for the first page), or both.
 */
export type BatchAsOfPageOptions = BatchAsOfOptions & (
  | { readonly pageSize: number; readonly cursor?: string }
  | { readonly pageSize?: number; readonly cursor: string }
)

/** One page of a batch as-of answer, and the cursor of the next page (absent on the last). */
export interface BatchAsOfPage {
  /** Every symbol at the page's times: the unpaged answer's entries at those times, keyed as it is. */
  readonly answer: BatchAsOfAnswer
  /** Pass it back as `cursor`, the other options unchanged (`pageSize` may change), for the next page. */
  readonly next?: string
}

/** Whether batch options ask for a page (`pageSize` or `cursor` given). */
export function asksPage(options: unknown): boolean {
  const o = options as { readonly pageSize?: unknown; readonly cursor?: unknown } | null | undefined
  return typeof o === 'object' && o !== null && (o.pageSize !== undefined || o.cursor !== undefined)
}

/**
 * The page size asked (times per page), checked.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` naming `parameter` (`pageSize`; `limit` over HTTP)
 */
export function batchPageSize(pageSize: unknown, parameter = 'pageSize'): number {
  if (pageSize === undefined) return DEFAULT_BATCH_PAGE_TIMES
  if (!Number.isSafeInteger(pageSize) || (pageSize as number) <= 0) throw fail('PRICE_INVALID_QUERY', parameter, `${parameter} must be a positive integer (times per page)`)
  return pageSize as number
}

/**
 * What a batch cursor is bound to: a 32-bit FNV-1a hash of what selects the
 * batch's entries (symbols in order, the sorted times, a grid being its
 * times, direction, tolerance), not of the page size. The store's tag covers
 * it, so it only tells batches apart.
 */
export function batchBinding(query: BatchQuery): number {
  const text = JSON.stringify(['batch', query.symbols, query.times, query.direction, query.tolerance ?? null])
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash
}

/**
 * The batch narrowed to one page: the first `pageSize` times after
 * `position` (from the first time without one), and the position of the next
 * page, absent when these are the last times.
 */
export function batchPageOf(query: BatchQuery, position: PagePosition | undefined, pageSize: number): { readonly query: BatchQuery; readonly next?: PagePosition } {
  const { times } = query
  const after = position?.kind === 'time' ? position.time : undefined
  const start = after === undefined ? 0 : firstAfter(times, after)
  const end = Math.min(times.length, start + pageSize)
  const page = Object.freeze({ ...query, times: Object.freeze(times.slice(start, end)) })
  return end < times.length ? { query: page, next: { kind: 'time', time: times[end - 1] as number } } : { query: page }
}

/** The index of the first time after `time` in ascending `times`. */
function firstAfter(times: readonly number[], time: number): number {
  let lo = 0
  let hi = times.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((times[mid] as number) <= time) lo = mid + 1
    else hi = mid
  }
  return lo
}
