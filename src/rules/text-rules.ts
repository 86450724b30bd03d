/**
 * The text rules shared by record ingest and query parameters (SPEC §1).
 * Lengths count Unicode code points; lone surrogates are refused because they
 * have no UTF-8 form, so they could not be stored and read back unchanged.
 */

const CONTROL = /\p{Cc}/u
const SYMBOL_FORBIDDEN = /[\s,\p{Cc}]/u

/** Why `value` is not a valid symbol, or `undefined` when it is. */
export function symbolProblem(value: unknown): string | undefined {
  return textProblem(value, 64) ?? (SYMBOL_FORBIDDEN.test(value as string)
    ? 'must not contain whitespace, commas or control characters'
    : undefined)
}

/** Why `value` is not a valid record id, or `undefined` when it is. */
export function idProblem(value: unknown): string | undefined {
  // Most ids are short printable ASCII (UUIDs): one pass proves every rule at once.
  if (typeof value === 'string' && value.length > 0 && value.length <= 128 && isPrintableAscii(value)) return undefined
  return textProblem(value, 128) ?? (CONTROL.test(value as string) ? 'must not contain control characters' : undefined)
}

function textProblem(value: unknown, maxLength: number): string | undefined {
  if (typeof value !== 'string') return 'must be a string'
  if (value.length === 0) return 'must not be empty'
  if (!value.isWellFormed()) return 'must be well-formed Unicode (no lone surrogates)'
  // Cheap upper bound first: code points never outnumber UTF-16 units.
  if (value.length > maxLength && countCodePoints(value) > maxLength) {
    return `must be at most ${maxLength} characters`
  }
  return undefined
}

function isPrintableAscii(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if (code < 0x20 || code > 0x7e) return false
  }
  return true
}

function countCodePoints(value: string): number {
  let count = 0
  for (const _ of value) count++
  return count
}
