import { PriceStoreError, describeValue, type PriceStoreErrorCode } from '../../../errors.js'
import { symbolProblem } from '../../../rules/text-rules.js'

/**
 * Parameter rules of the UDF endpoints, the same as `GET /prices`'s: a
 * parameter given twice is an error, numbers are plain decimal integers,
 * symbols follow the record rules. Errors are `PriceStoreError`s, so they
 * are answered like every other client error.
 */
export class UdfParams {
  readonly #params: URLSearchParams

  constructor(params: URLSearchParams, known: readonly string[]) {
    this.#params = params
    for (const name of known) {
      const values = params.getAll(name)
      if (values.length > 1) {
        throw udfError('PRICE_INVALID_QUERY', name, `parameter ${name} must be given at most once (got ${values.map(describeValue).join(', ')})`)
      }
    }
  }

  /** The parameter's text, or `undefined` when it is absent. */
  text(name: string): string | undefined {
    return this.#params.get(name) ?? undefined
  }

  /** A parameter that must be present. */
  required(name: string): string {
    const value = this.#params.get(name)
    if (value === null) throw udfError('PRICE_INVALID_QUERY', name, `parameter ${name} is required`)
    return value
  }

  /** A symbol that must be present and follow the record rules. */
  symbol(name = 'symbol'): string {
    const value = this.required(name)
    const problem = symbolProblem(value)
    if (problem !== undefined) throw udfError('PRICE_INVALID_SYMBOL', name, `${name} ${problem} (got ${describeValue(value)})`)
    return value
  }

  /** A whole number from `min` to `max`, or `undefined` when absent. */
  integer(name: string, code: PriceStoreErrorCode, min: number, max: number): number | undefined {
    const value = this.#params.get(name)
    if (value === null) return undefined
    // Leading zeros are allowed, as in /prices; 17 digits or more can only be out of range.
    const digits = /^[0-9]+$/.test(value) ? value.replace(/^0+(?=.)/, '') : undefined
    if (digits === undefined) throw udfError(code, name, `${name} must be a plain decimal integer (got ${describeValue(value)})`)
    const number = digits.length > 16 ? Number.POSITIVE_INFINITY : Number(digits)
    if (number < min || number > max) throw udfError(code, name, `${name} must be from ${min} to ${max} (got ${describeValue(value)})`)
    return number
  }
}

/** A client error naming the UDF parameter at fault. */
export function udfError(code: PriceStoreErrorCode, parameter: string, message: string): PriceStoreError {
  return new PriceStoreError(code, message, { details: { parameter } })
}
