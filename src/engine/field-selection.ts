import type { FieldSelection, PriceAnswer, PriceQuery } from '../types.js'
import { DeferredAnswer, type DeferredItem } from './deferred-answer.js'
import { formFor } from './forms/index.js'
import type { SelectFields } from './kernels/select-fields.js'

export type { SelectFields } from './kernels/select-fields.js'

/**
 * The function that applies a selection to one record: it keeps the
 * record's keys the selection keeps, in the record's order, so a selected
 * answer is the whole answer with the other keys taken out. A record
 * reference (`RecordRef`: `id`, `timestamp`, `value`) is selected the same
 * way.
 */
export function fieldSelector(selection: FieldSelection, keepValidUntil = false): SelectFields {
  const named: ReadonlySet<string> = new Set(selection.names)
  const keep = selection.mode === 'keep'
  return <T extends object>(record: T): T => {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(record)) {
      // `validUntil`, when asked, is not a record field: no selection names or drops it (docs/semantics.md, "Validity windows").
      if (named.has(key) !== keep && !(keepValidUntil && key === 'validUntil')) continue
      const value = (record as Record<string, unknown>)[key]
      // An extra field named __proto__ (kept by a drop selection) must stay a key, not become the prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
      else out[key] = value
    }
    return out as T
  }
}

/**
 * An answer (or a deferred one) to `query` with the selection applied to
 * every record in it, as the query's form selects (its `selectFields`, see
 * forms/): the records of the latest, several and range forms, the `record`
 * of each gap-filled or counted point, and the record references of candles
 * (`open`, `high`, `low`, `close`) and TWAPs (`first`, `last`). What is not
 * a record (a bucket, a count, an average) stays; a form without
 * `selectFields` (cross rates, whose parser refuses `fields`) is given back
 * unchanged. Pure: the answer given is not changed.
 */
export function selectAnswerFields(answer: PriceAnswer | DeferredAnswer, query: PriceQuery, selection: FieldSelection): PriceAnswer | DeferredAnswer {
  const select = fieldSelector(selection, 'validUntil' in query && query.validUntil === true)
  if (answer instanceof DeferredAnswer) return answer.mapItems(select as (item: DeferredItem) => DeferredItem)
  const form = formFor(query)
  return form.selectFields === undefined ? answer : form.selectFields(answer, query, select)
}
