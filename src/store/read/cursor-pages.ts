/**
 * Pages of list answers resumed by cursor (`store.page`, and `GET /prices`
 * with `cursor`; docs/semantics.md, "Cursors"). The engine plans and cuts a
 * page (engine/cursor-page.ts) and lays out a cursor's bytes
 * (engine/cursor.ts); this room signs them with the store's secret and
 * checks a cursor given back before anything is read.
 */
import { queryBinding, readCursor, type PagePosition } from '../../engine/cursor.js'
import { isPageable, planPage, positionKindOf, runPage, type PageableQuery, type PageOutcome } from '../../engine/cursor-page.js'
import { parsePageQuery, valuesOf } from '../../engine/parse-query.js'
import type { QueryOptions } from '../../engine/typed-queries.js'
import { fail } from '../../rules/query-errors.js'
import type { PriceAnswer, QueryParams } from '../../types.js'
import type { StoreParts } from '../lifecycle/store-parts.js'
import { checkedPosition, signedCursor } from './cursor-signing.js'

/** One page of a list answer: its items, and the cursor of the next page (absent on the last). */
export interface PricePage {
  /** The page: the answer the same parameters give without `cursor`, from the position on, at most `limit` items. */
  readonly answer: PriceAnswer
  /** Pass it back as the `cursor` parameter, the other parameters unchanged (`limit` and `fields` may change), for the next page. */
  readonly next?: string
}

/** How a cursor given with other parameters is refused. */
const OTHER_PARAMETERS = 'other parameters: resume with the parameters of its first page (only limit and fields may change)'

/** The reads a page makes at most: each retry doubles what it reads (many records of one millisecond), which ends. */
const MAX_ATTEMPTS = 32

/**
 * The page of a `GET /prices` parameter set that `cursor` names (its empty
 * value, or none, the first page), and the next page's cursor.
 * @throws PriceStoreError as `store.query`; `PRICE_INVALID_QUERY` (parameter `cursor`) for a cursor that is
 *   malformed, not signed by this store, altered, made for other parameters, or given with `offset` or to a form
 *   that is not a list (several, TWAP, as-of with a direction)
 */
export async function answerPage(parts: StoreParts, params: QueryParams, options: QueryOptions): Promise<PricePage> {
  parts.life.assertOpen()
  const query = parsePageQuery(params, parts.options)
  if (!isPageable(query)) throw fail('PRICE_INVALID_QUERY', 'cursor', `the ${query.kind} form is not a list: only latest-N, history, range and candles answers (cross-rate ones too) are paged`)
  const [text] = valuesOf(params, 'cursor')
  const token = typeof text === 'string' ? readCursor(text) : undefined
  const binding = queryBinding(query)
  const position = token === undefined ? undefined : await checkedPosition(parts, token, binding, positionKindOf(query), OTHER_PARAMETERS)
  const outcome = await pageOutcome(parts, query, position, options)
  if (outcome.next === undefined) return { answer: outcome.answer }
  return { answer: outcome.answer, next: await signedCursor(parts, outcome.next, binding) }
}

/** Runs the page's plan through the store's reader (hot tails or a view), planning again with more slack while ties overflow it. */
async function pageOutcome(
  parts: StoreParts, query: PageableQuery, position: PagePosition | undefined, options: QueryOptions,
): Promise<Exclude<PageOutcome, { retry: true }>> {
  const { reader } = parts
  const cap = parts.options.limits.maxRangePoints
  let slack = 0
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const plan = planPage(query, position, cap, slack)
    const outcome = await reader.answer(plan, options, (made, source, opts) => runPage(query, position, made, source, opts))
    if (outcome.retry !== true) return outcome
    slack = Math.max(8, slack * 2)
  }
  // Not reached: each attempt reads twice as many records of one millisecond as the one before.
  throw fail('PRICE_INVALID_QUERY', 'cursor', 'too many records share the cursor\'s millisecond')
}
