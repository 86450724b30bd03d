/**
 * Matches any number within `tolerance` of `value`: an asymmetric matcher,
 * so vitest's and jest's `toEqual` accept it in place of a number. The model
 * computes a TWAP exactly; a store rounds along the way, so the two agree
 * within a few units in the last place, not bit for bit.
 */
export class NearNumber {
  readonly $$typeof = Symbol.for('jest.asymmetricMatcher')
  constructor(
    readonly value: number,
    readonly tolerance: number,
  ) {}

  asymmetricMatch(actual: unknown): boolean {
    return typeof actual === 'number' && Math.abs(actual - this.value) <= this.tolerance
  }

  toString(): string {
    return `NearNumber(${this.value} ± ${this.tolerance})`
  }

  toAsymmetricMatcher(): string {
    return this.toString()
  }
}
