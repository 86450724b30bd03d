import type { PriceQuery } from '../../types.js'
import { candles } from './candles.js'
import { cross } from './cross.js'
import { crossCandles } from './cross-candles.js'
import { crossRange } from './cross-range.js'
import { crossTwap } from './cross-twap.js'
import { latest } from './latest.js'
import type { FormPaging, QueryForm } from './query-form.js'
import { range } from './range.js'
import { several } from './several.js'
import { twap } from './twap.js'

export type { FormPaging, QueryForm } from './query-form.js'

/** The query of kind `K`. */
type QueryOfKind<K extends PriceQuery['kind']> = Extract<PriceQuery, { readonly kind: K }>

/**
 * Every query form, keyed by the query's `kind`: the one place the engine
 * tells the forms apart (the parser and the typed options build the
 * queries; plan, cost, execute, the answer's name, field selection, cursor
 * paging and the parser's cursor rule look their form up here). A new form
 * is one file beside this one and one row here.
 */
export const FORMS: { readonly [K in PriceQuery['kind']]: QueryForm<QueryOfKind<K>> } = Object.freeze({
  latest,
  several,
  range,
  candles,
  twap,
  cross,
  crossRange,
  crossCandles,
  crossTwap,
})

/** The form of `query`: one property read of {@link FORMS}. */
export function formFor(query: PriceQuery): QueryForm<PriceQuery> {
  return FORMS[query.kind] as QueryForm<PriceQuery>
}

/** How cursors page `query`: its form's paging when the query is a list, else `undefined`. */
export function pagingOf(query: PriceQuery): FormPaging<PriceQuery> | undefined {
  const paging = formFor(query).paging
  return paging === undefined || paging.lists?.(query) === false ? undefined : paging
}
