/**
 * fast-check arbitraries of `fields` values (docs/semantics.md, "Field
 * selection"): mostly well-formed keep and drop lists, duplicates included,
 * and now and then a malformed one.
 */
import fc from 'fast-check'
import { rarely } from './record-arbitraries.js'
import { SELECTABLE_FIELDS } from './reference-model.js'

export { SELECTABLE_FIELDS }


/** Values `fields` must refuse: empty, empty entries, unknown or miscased names, keep and drop mixed. */
export const INVALID_FIELDS = [
  '', ',', '-', 'value,', ',value', 'value,,id', 'Value', 'foo', 'value,foo', '-foo', 'value,-signature', '-signature,value', '--signature', ' value', 'value ', 'bucket', 'open',
]

const namesArb = fc.array(fc.constantFrom(...SELECTABLE_FIELDS), { minLength: 1, maxLength: 6 })

/** A `fields` value: a keep list, a drop list (the usual `-signature,-providerPublicKey` often), or rarely a malformed one. */
export const fieldsValueArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: namesArb.map((names) => names.join(',')) },
  { weight: 4, arbitrary: namesArb.map((names) => names.map((name) => `-${name}`).join(',')) },
  { weight: 2, arbitrary: fc.constant('-signature,-providerPublicKey') },
  { weight: 1, arbitrary: fc.constantFrom(...INVALID_FIELDS) },
)

/**
 * Entries with a `fields` entry added (rarely two), for a parameter
 * set from `rawEntriesArb`: placed at a random position, since order must
 * not matter.
 */
export function withFieldsArb(entries: readonly [string, string][]): fc.Arbitrary<[string, string][]> {
  return fc
    .record({ value: fieldsValueArb, again: rarely(fieldsValueArb, 12), at: fc.nat({ max: entries.length }) })
    .map(({ value, again, at }) => {
      const out: [string, string][] = [...entries]
      out.splice(at, 0, ['fields', value])
      if (again !== null) out.push(['fields', again])
      return out
    })
}
