import type { QueryOptions } from '../../../engine/query-options.js'
import { isResumeRefusal } from '../../../engine/cursor.js'
import type { QueryPlan } from '../../../engine/query-plan.js'
import type { PriceAnswer, QueryParams } from '../../../types.js'
import { fail } from '../../../rules/query-errors.js'
import { failedAnswer, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'

/*
 * `GET /prices` with `cursor` (docs/http.md, "Pages and cursors"): the page
 * comes from the store's `page`, and the next page's cursor travels in
 * headers, so every form's body stays the one it is without a cursor:
 * `x-next-cursor: C` and an RFC 8288 `link: <?...&cursor=C>; rel="next"`
 * (a relative reference: the same path, these parameters), both absent on
 * the last page. The request was compiled and weighed by the gate first
 * (as without a cursor), so a bad request never reaches `page`.
 */

/** The header holding the next page's cursor. */
export const NEXT_CURSOR_HEADER = 'x-next-cursor'

/** A store that answers pages (`PriceStore.page`). */
export interface PagedQueryable {
  page(params: QueryParams, options?: QueryOptions): Promise<{ readonly answer: PriceAnswer; readonly next?: string }>
}

/**
 * The parameters of a request, with `paginate=true` and no `cursor` read as
 * the first page (`cursor=`): a walk can start without an empty parameter.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (parameter `paginate`) for a value other than `true`, or a repeated one
 */
export function withFirstPage(params: URLSearchParams): URLSearchParams {
  const values = params.getAll('paginate')
  if (values.length === 0) return params
  if (values.length > 1 || values[0] !== 'true') {
    throw fail('PRICE_INVALID_QUERY', 'paginate', `paginate must be given once, as paginate=true (got ${values.map((value) => JSON.stringify(value)).join(', ')})`)
  }
  if (params.has('cursor')) return params
  const first = new URLSearchParams(params)
  first.set('cursor', '')
  return first
}

/** Whether a request asks for a page and the store answers pages. */
export function wantsPage(store: object, params: URLSearchParams): boolean {
  return typeof (store as Partial<PagedQueryable>).page === 'function' && params.has('cursor')
}

/**
 * The plan the gate weighs a request by. With a non-empty `cursor` the
 * store's `plan` refuses (only `page` resumes), after every other rule: that
 * refusal alone is planned again as the first page (`cursor=`), the unpaged
 * query's plan; any other error (a malformed cursor included) stays the
 * request's own, as `store.query` gives it.
 */
export function planOfRequest(store: object, plan: (params: QueryParams) => QueryPlan, params: URLSearchParams): QueryPlan {
  try {
    return plan(params)
  } catch (err) {
    if (!isResumeRefusal(err) || !wantsPage(store, params)) throw err
    const first = new URLSearchParams(params)
    first.set('cursor', '')
    return plan(first)
  }
}

/**
 * Answers a page request: `prices` turns the page's answer into the 200
 * answer, as for any query; the next cursor is added to its headers. Never rejects.
 */
export function answerPage<O extends ErrorReportOptions>(
  store: PagedQueryable, params: URLSearchParams, options: O,
  prices: (answer: PriceAnswer, options: O) => HttpAnswer | Promise<HttpAnswer>, read?: QueryOptions,
): Promise<HttpAnswer> {
  let page: Promise<{ readonly answer: PriceAnswer; readonly next?: string }>
  try {
    page = Promise.resolve(read === undefined ? store.page(params) : store.page(params, read))
  } catch (err) {
    return Promise.resolve(failedAnswer(options, err))
  }
  return page.then(
    async ({ answer, next }) => withNext(await prices(answer, options), next, params),
    (err: unknown) => failedAnswer(options, err),
  )
}

/**
 * A 200 answer with the next page's headers: `x-next-cursor`, and with the request's `params` (a GET) a `link` to
 * the next page (the same parameters, this cursor); the last page (no `next`) and any other answer (a failed
 * serialisation) as they are. `/prices/batch` pages use it too.
 */
export function withNext(answer: HttpAnswer, next: string | undefined, params: URLSearchParams | undefined): HttpAnswer {
  if (next === undefined || answer.status !== 200) return answer
  const headers: Record<string, string> = { ...answer.headers, [NEXT_CURSOR_HEADER]: next }
  if (params !== undefined) {
    const following = new URLSearchParams(params)
    following.set('cursor', next)
    headers['link'] = `<?${following.toString()}>; rel="next"`
  }
  return { ...answer, headers }
}
