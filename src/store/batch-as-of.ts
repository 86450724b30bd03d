/**
 * Batch as-of: many symbols at many times in one call,
 * answered from one view of the store (one snapshot and the open area) by the
 * engine's batch walk (engine/forms/batch.ts), the view walking each symbol's
 * hours once (read/in-force.ts). Semantics: docs/semantics.md, "Batch as-of".
 * With `pageSize` or `cursor`, one page of it (engine/batch-page.ts), its
 * cursor signed with the store's cursor secret as `/prices` cursors are
 * (read/cursor-pages.ts).
 */
import { asksPage, batchBinding, batchPageOf, batchPageSize, type BatchAsOfPage, type BatchAsOfPageOptions } from '../engine/batch-page.js'
import { readCursor } from '../engine/cursor.js'
import { runBatch, toBatchQuery, type BatchAsOfAnswer, type BatchAsOfOptions } from '../engine/forms/batch.js'
import { scopedSource } from '../engine/read-scope.js'
import type { ScanSource } from '../engine/scan-source.js'
import { readOptionsOf } from '../engine/typed-queries.js'
import { throwIfAborted } from '../rules/abort.js'
import { fail } from '../rules/query-errors.js'
import type { StoreParts } from './lifecycle/store-parts.js'
import { checkedPosition, signedCursor } from './read/cursor-signing.js'
import type { ReadView } from './read/read-view.js'

export type { BatchAsOfAnswer, BatchAsOfEntry, BatchAsOfOptions, BatchTimeGrid } from '../engine/forms/batch.js'
export type { BatchAsOfPage, BatchAsOfPageOptions } from '../engine/batch-page.js'
export { MAX_BATCH_ENTRIES, MAX_BATCH_TIMES } from '../engine/forms/batch.js'

/**
 * Checks the batch (nothing is read when it is refused), then answers it from one view; with `pageSize` or
 * `cursor`, the page the cursor names and the next page's cursor.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` naming the parameter (`cursor` for a cursor that is malformed, not
 *   this store's, altered or made for another batch), `PRICE_INVALID_SYMBOL`, `PRICE_NOT_OPEN`, `PRICE_ABORTED`
 */
export function answerBatchAsOf(parts: StoreParts, options: BatchAsOfPageOptions): Promise<BatchAsOfPage>
export function answerBatchAsOf(parts: StoreParts, options: BatchAsOfOptions): Promise<BatchAsOfAnswer>
export async function answerBatchAsOf(parts: StoreParts, options: BatchAsOfOptions): Promise<BatchAsOfAnswer | BatchAsOfPage> {
  const { reader } = parts
  const query = toBatchQuery(options, parts.options.limits)
  const { signal, scope } = readOptionsOf(options)
  const scoped = (view: ReadView): ScanSource => (scope === undefined ? view : scopedSource(view, scope))
  if (!asksPage(options)) {
    throwIfAborted(signal)
    return reader.read('answer the batch', (view) => runBatch(query, scoped(view), signal))
  }
  const { pageSize, cursor } = options as { readonly pageSize?: unknown; readonly cursor?: unknown }
  const size = batchPageSize(pageSize)
  if (cursor !== undefined && typeof cursor !== 'string') throw fail('PRICE_INVALID_QUERY', 'cursor', 'cursor must be a string: the next of the page before, or empty for the first page')
  const binding = batchBinding(query)
  parts.life.assertOpen()
  const token = cursor === undefined ? undefined : readCursor(cursor)
  const position = token === undefined ? undefined : await checkedPosition(parts, token, binding, 'time', ANOTHER_BATCH)
  throwIfAborted(signal)
  const page = batchPageOf(query, position, size)
  const answer = await reader.read('answer the batch page', (view) => runBatch(page.query, scoped(view), signal))
  if (page.next === undefined) return { answer }
  return { answer, next: await signedCursor(parts, page.next, binding) }
}

/** How a cursor of another batch is refused. */
const ANOTHER_BATCH = 'another batch (or another query): resume with the symbols, times, direction and tolerance of its first page (only the page size may change)'
