/**
 * `negotiateEncoding` (issue 23): RFC 9110 §12.5.3 cases by hand, then
 * property-tested against a small reference written from the RFC's text
 * (a different parse: one regular expression per member).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { negotiateEncoding, type ContentCoding, type Negotiated } from '../../../src/adapters/http/core/compression.js'

const OFFERED: readonly ContentCoding[] = ['br', 'gzip']

describe('negotiateEncoding', () => {
  it.each([
    [undefined, 'identity', true],
    ['', 'identity', true],
    ['gzip', 'gzip', true],
    ['GZIP', 'gzip', true],
    ['x-gzip', 'gzip', true],
    ['gzip, deflate', 'gzip', true],
    ['gzip, deflate, br', 'br', true],
    ['gzip, deflate, br, zstd', 'br', true],
    ['br;q=0.5, gzip', 'gzip', true],
    ['br;q=0.5, gzip;q=0.5', 'identity', true],
    ['br;q=0.5, gzip;q=0.5, identity;q=0.5', 'br', true],
    ['br; q=1.000, gzip ;Q=0.9', 'br', true],
    ['*', 'br', true],
    ['*;q=0.1, gzip;q=0.5', 'gzip', true],
    ['gzip;q=0', 'identity', true],
    ['gzip;q=0.5, identity', 'identity', true],
    ['gzip, identity;q=0', 'gzip', false],
    ['gzip, *;q=0', 'gzip', false],
    ['identity;q=0', 'identity', true],
    ['*;q=0', 'identity', true],
    ['deflate, compress', 'identity', true],
    ['gzip;q=1.5', 'identity', true],
    ['gzip;q=0.1234', 'identity', true],
    ['gzip;q=', 'identity', true],
    ['gzip;q=0, gzip', 'identity', true],
    ['br;level=3', 'br', true],
    [' , ,gzip,, ', 'gzip', true],
  ] as const)('%j gives %s (identity acceptable: %s)', (header, coding, identity) => {
    expect(negotiateEncoding(header, OFFERED)).toEqual({ coding, identity })
  })

  it('zstd is chosen only when offered', () => {
    expect(negotiateEncoding('zstd', OFFERED).coding).toBe('identity')
    expect(negotiateEncoding('zstd, gzip', ['br', 'zstd', 'gzip']).coding).toBe('zstd')
  })
})

/** The RFC's rules, parsed another way: a member is `token *( OWS ";" OWS param )`, its weight the last `q` parameter. */
function reference(header: string | undefined, offered: readonly ContentCoding[]): Negotiated {
  if (header === undefined) return { coding: 'identity', identity: true }
  const listed: { name: string; q: number }[] = []
  for (const member of header.split(',')) {
    const match = /^[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*((?:;[^;]*)*)$/.exec(member)
    if (match === null) continue
    let name = match[1]!.toLowerCase()
    if (name === 'x-gzip') name = 'gzip'
    let q: number | undefined = 1
    for (const parameter of match[2]!.split(';').slice(1)) {
      const [key = '', ...rest] = parameter.split('=')
      if (key.trim().toLowerCase() !== 'q') continue
      const value = rest.length === 0 ? '' : rest.join('=').trim()
      q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) && q !== undefined ? parseFloat(value) : undefined
    }
    if (q !== undefined) listed.push({ name, q })
  }
  const weightOf = (name: string, fallback: number): number => listed.find((entry) => entry.name === name)?.q ?? listed.find((entry) => entry.name === '*')?.q ?? fallback
  const candidates = [...offered.map((coding) => ({ coding: coding as Negotiated['coding'], q: weightOf(coding, 0) })), { coding: 'identity' as const, q: weightOf('identity', 1) }]
  const best = candidates.filter((candidate) => candidate.q > 0).sort((a, b) => b.q - a.q)[0] // stable: the server's order breaks ties
  if (best === undefined || best.coding === 'identity') return { coding: 'identity', identity: true }
  return { coding: best.coding, identity: weightOf('identity', 1) > 0 }
}

const NAMES = ['br', 'BR', 'gzip', 'GZip', 'x-gzip', 'zstd', 'deflate', 'identity', 'IDENTITY', '*', 'compress', 'a b', '', 'gz;ip']
const WEIGHTS = ['0', '0.0', '0.5', '0.001', '0.25', '1', '1.0', '1.000', '0.', '1.5', '0.1234', 'x', '', '-1', '1.001']
const member = fc.record({
  name: fc.constantFrom(...NAMES),
  weight: fc.option(fc.constantFrom(...WEIGHTS), { nil: undefined }),
  other: fc.boolean(),
  space: fc.constantFrom('', ' ', '\t', '  '),
  key: fc.constantFrom('q', 'Q'),
})
const header = fc.array(member, { maxLength: 6 }).map((members) =>
  members
    .map(({ name, weight, other, space, key }) => `${space}${name}${other ? `${space};level=2` : ''}${weight === undefined ? '' : `${space};${space}${key}=${weight}`}`)
    .join(','),
)

describe('negotiateEncoding, property-tested', () => {
  it('agrees with the reference, with and without zstd offered', () => {
    fc.assert(
      fc.property(fc.option(header, { nil: undefined }), fc.constantFrom<readonly ContentCoding[]>(['br', 'gzip'], ['br', 'zstd', 'gzip'], ['gzip']), (value, offered) => {
        expect(negotiateEncoding(value, offered)).toEqual(reference(value, offered))
      }),
      { numRuns: 2_000, seed: 23 },
    )
  })

  it('never picks a coding that is not offered, nor one the client weighs 0', () => {
    fc.assert(
      fc.property(header, (value) => {
        const { coding } = negotiateEncoding(value, OFFERED)
        expect(['br', 'gzip', 'identity']).toContain(coding)
        if (coding !== 'identity') expect(reference(value, OFFERED).coding).toBe(coding)
      }),
      { numRuns: 500, seed: 7 },
    )
  })
})
