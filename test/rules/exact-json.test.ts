import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toExactJson } from '../../src/rules/exact-json.js'

describe('toExactJson', () => {
  it('is JSON.stringify when there is no -0', () => {
    fc.assert(
      fc.property(fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown), fc.constantFrom(0, 2), (value, indent) => {
        expect(toExactJson(value, indent)).toBe(JSON.stringify(value, null, indent))
      }),
    )
  })

  it('writes -0 as -0 anywhere, and JSON.parse reads every value back', () => {
    const withNegativeZero = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.constant(-0),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.string(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value')),
        fc.dictionary(fc.string(), tie('value')),
      ),
    })).value
    fc.assert(
      fc.property(withNegativeZero, fc.constantFrom(0, 2), (value, indent) => {
        const text = toExactJson(value, indent)
        expect(JSON.parse(text)).toEqual(value) // toEqual tells -0 from 0
        expect(JSON.stringify(JSON.parse(text), null, indent)).toBe(JSON.stringify(value, null, indent))
      }),
    )
  })

  it('keeps JSON.stringify rules on the -0 path: undefined members dropped, toJSON used, __proto__ kept', () => {
    const value = JSON.parse('{"__proto__": -1}') as Record<string, unknown>
    value.v = -0
    value.u = undefined
    value.d = new Date(0)
    value.a = [undefined, -0]
    expect(toExactJson(value)).toBe('{"__proto__":-1,"v":-0,"d":"1970-01-01T00:00:00.000Z","a":[null,-0]}')
  })
})
