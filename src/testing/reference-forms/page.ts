/**
 * The reference model of cursor paging (docs/semantics.md, "Cursors"), by
 * its definition: a page is the whole answer's items after the position of
 * the page before, the first `limit` of them, and the position of its last
 * item when more follow. The model knows positions, not cursors: a cursor's
 * bytes and signature are the store's (the tests pass the last item of the
 * page before). Part of the model: shares no code with src/engine or src/store.
 */
import type { PriceRecord } from '../../types.js'
import { compareUtf8 } from '../reference-model.js'

/** Where a page ends: a record (latest-N, newest first) or the first ms of a bucket (range, candles). */
export type ReferencePosition =
  | { readonly timestamp: number; readonly id: string }
  | { readonly bucket: number }

/** The grid of a bucketed answer, for the bucket of a range's record; `origin` as given (any integer). */
export interface ReferencePageGrid {
  readonly interval: number
  readonly origin?: number
}

/** A page of the model: its items, and the position of its last item when another page follows. */
export interface ReferencePage<T> {
  readonly items: readonly T[]
  readonly last?: ReferencePosition
}

/**
 * The page of `answer` (the whole, unpaged answer of a list form, in its
 * order) after `after`, `limit` items at most (all without a limit).
 * `grid` is the bucketed forms' grid, absent for latest-N.
 */
export function referencePage<T>(answer: readonly T[], after: ReferencePosition | undefined, limit: number | undefined, grid?: ReferencePageGrid): ReferencePage<T> {
  const position = (item: T): ReferencePosition => positionOf(item, grid)
  const rest = after === undefined ? [...answer] : answer.filter((item) => comesAfter(position(item), after))
  const items = limit === undefined ? rest : rest.slice(0, limit)
  const lastItem = items[items.length - 1]
  return rest.length > items.length && lastItem !== undefined ? { items, last: position(lastItem) } : { items }
}

/** Every page of `answer`, one after another, as a client paging with `limit` reads them. */
export function referencePages<T>(answer: readonly T[], limit: number | undefined, grid?: ReferencePageGrid): ReferencePage<T>[] {
  const pages: ReferencePage<T>[] = []
  let after: ReferencePosition | undefined
  do {
    const page = referencePage(answer, after, limit, grid)
    pages.push(page)
    after = page.last
  } while (after !== undefined)
  return pages
}

/** The position of an item: its bucket's first ms on a grid, else its record's (timestamp, id). */
export function positionOf(item: unknown, grid?: ReferencePageGrid): ReferencePosition {
  const it = item as { readonly bucket?: number } & Partial<PriceRecord>
  if (grid === undefined) return { timestamp: it.timestamp as number, id: it.id as string }
  if (it.bucket !== undefined) return { bucket: it.bucket }
  const origin = grid.origin ?? 0
  return { bucket: origin + Math.floor(((it.timestamp as number) - origin) / grid.interval) * grid.interval }
}

/** Whether `item` comes after `after` in its answer: older (latest-N, newest first), or a later bucket. */
function comesAfter(item: ReferencePosition, after: ReferencePosition): boolean {
  if ('bucket' in item && 'bucket' in after) return item.bucket > after.bucket
  if ('timestamp' in item && 'timestamp' in after) return item.timestamp < after.timestamp || (item.timestamp === after.timestamp && compareUtf8(item.id, after.id) < 0)
  throw new Error('a record position and a bucket position do not compare')
}
