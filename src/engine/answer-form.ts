import type { AnswerForm, PriceAnswer, PriceQuery, TypedAnswer } from '../types.js'
import { formFor } from './forms/index.js'

/**
 * The form of the answer a query gives: its kind, except that a range with
 * gap filling answers `filled` points rather than records (each form names
 * its answers, see forms/).
 */
export function formOf(query: PriceQuery): AnswerForm {
  return formFor(query).answerForm(query)
}

/**
 * Names the form of `answer`, which must be the executor's answer to
 * `query`: the executor's dispatch on the query's form is what makes the
 * pairing true, so it is asserted here once rather than checked at run time.
 */
export function typedAnswer(query: PriceQuery, answer: PriceAnswer): TypedAnswer {
  return Object.freeze({ form: formOf(query), query, answer }) as TypedAnswer
}
