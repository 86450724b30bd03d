import type { AnswerForm, PriceAnswer, PriceQuery, TypedAnswer } from '../types.js'

/**
 * The form of the answer a query gives: its kind, except that a range with
 * gap filling answers `filled` points rather than records.
 */
export function formOf(query: PriceQuery): AnswerForm {
  return query.kind === 'range' && query.fill !== undefined ? 'filled' : query.kind
}

/**
 * Names the form of `answer`, which must be the executor's answer to
 * `query`: the executor's switch on the query is what makes the pairing
 * true, so it is asserted here once rather than checked at run time.
 */
export function typedAnswer(query: PriceQuery, answer: PriceAnswer): TypedAnswer {
  return Object.freeze({ form: formOf(query), query, answer }) as TypedAnswer
}
