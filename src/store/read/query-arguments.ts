import type { QueryPlan } from '../../engine/query-plan.js'
import type { QueryParams } from '../../types.js'

/**
 * Whether `ask` was given a plan rather than parameters: parameters hold
 * only strings (or arrays of them), a plan holds its query as an object.
 * Whether it really is a plan is then checked by `checkPlan`.
 */
export function isPlanShaped(request: QueryParams | QueryPlan): request is QueryPlan {
  if (request instanceof URLSearchParams) return false
  const query = (request as { readonly query?: unknown }).query
  return typeof query === 'object' && query !== null && !Array.isArray(query)
}

/** A stream's options: a bucketed form's, without `offset` and `limit`. */
export type StreamOptions<T> = Omit<T, 'offset' | 'limit'>

/** Only the range itself: a stream takes no offset or limit (a JavaScript caller may pass anything). */
export function streamOptions(options: unknown): unknown {
  if (typeof options !== 'object' || options === null) return options
  const { offset: _offset, limit: _limit, ...rest } = options as Record<string, unknown>
  return rest
}
