import { describeValue } from '../errors.js'
import type { AsOf, AsOfDirection, Fill } from '../types.js'
import { fail } from '../rules/query-errors.js'

/** The directions an as-of lookup accepts. */
export const DIRECTIONS: readonly AsOfDirection[] = ['before', 'after', 'nearest']

/**
 * How the parameters are named where a rule is broken: HTTP says
 * `fromTimestamp`, the typed methods say `from`.
 */
export interface ParameterNames {
  readonly from: string
  readonly to: string
}

/** What the as-of rule needs to know about the rest of the query. */
export interface AsOfContext {
  readonly from: number | undefined
  readonly to: number | undefined
  /** `limit` as given (absent: undefined). */
  readonly limit: number | undefined
  readonly offset: number
}

/**
 * The as-of lookup a `direction` and `tolerance` ask for: `undefined` for
 * RedStone's own meaning (no direction, or `before`, and no tolerance), so
 * those queries keep their plain shape. Both need the as-of time and look
 * up one record.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` naming the parameter
 */
export function toAsOf(direction: AsOfDirection | undefined, tolerance: number | undefined, context: AsOfContext, names: ParameterNames): AsOf | undefined {
  if (direction === undefined && tolerance === undefined) return undefined
  const given = direction === undefined ? 'tolerance' : 'direction'
  if (context.to === undefined) {
    throw fail('PRICE_INVALID_QUERY', given, `${given} needs ${names.to}, the as-of time it looks around`)
  }
  if (context.from !== undefined) {
    throw fail('PRICE_INVALID_QUERY', given, `${given} looks up one record around ${names.to}; leave out ${names.from} (got ${names.from}=${context.from})`)
  }
  if ((context.limit !== undefined && context.limit !== 1) || context.offset !== 0) {
    throw fail('PRICE_INVALID_QUERY', given, `${given} looks up one record: leave out limit and offset (got limit=${describeValue(context.limit)}, offset=${context.offset})`)
  }
  if ((direction ?? 'before') === 'before' && tolerance === undefined) return undefined
  return Object.freeze({ direction: direction ?? 'before', ...(tolerance === undefined ? {} : { tolerance }) })
}

/**
 * Gap filling as asked: `undefined` without `fill`.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for `maxAge` without `fill`
 */
export function toFill(fill: 'prev' | 'none' | undefined, maxAge: number | undefined): Fill | undefined {
  if (fill === 'none' && maxAge !== undefined) {
    throw fail('PRICE_INVALID_QUERY', 'maxAge', `maxAge bounds carried records: fill=none carries none (got maxAge=${maxAge} with fill=none)`)
  }
  if (fill === undefined) {
    if (maxAge !== undefined) throw fail('PRICE_INVALID_QUERY', 'maxAge', `maxAge bounds gap filling: give it with fill=prev (got maxAge=${maxAge} without fill)`)
    return undefined
  }
  return Object.freeze({ mode: fill, ...(maxAge === undefined ? {} : { maxAge }) })
}

/**
 * Checks a value against a list of words.
 * @throws PriceStoreError with `code`, naming the parameter and the words allowed
 */
export function checkChoice<T extends string>(parameter: string, value: unknown, choices: readonly T[], code: 'PRICE_INVALID_QUERY'): T {
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw fail(code, parameter, `${parameter} must be ${choices.map((choice) => JSON.stringify(choice)).join(' or ')} (got ${describeValue(value)})`)
  }
  return value as T
}
