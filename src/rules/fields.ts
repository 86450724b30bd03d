import { describeValue } from '../errors.js'
import type { FieldSelection } from '../types.js'
import { fail } from './query-errors.js'

/**
 * The record fields a `fields` selection may name: a record's known fields,
 * the provider key joined on read, the range form's `minutes`, and the EVM
 * signatures a RedStone record may carry. Fields a
 * writer added beyond these cannot be named (a typo must not pass as an
 * extra): a `drop` selection keeps them, a `keep` selection leaves them out.
 */
export const RECORD_FIELDS = Object.freeze([
  'id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp', 'providerPublicKey', 'minutes',
  // RedStone's EVM signatures, which a record may carry besides (or instead of) `signature`.
  'liteEvmSignature', 'evmSignature',
] as const)

const KNOWN_FIELDS: ReadonlySet<string> = new Set(RECORD_FIELDS)

/**
 * Reads a `fields` value: comma-separated record field names, either all
 * bare (keep only these) or all prefixed with `-` (leave these out). A name
 * given twice counts once, as in `symbols`.
 * @param parameter the name errors give (`fields`, or a CLI flag)
 * @throws PriceStoreError `PRICE_INVALID_QUERY` for a non-string, an empty value or entry, an unknown field, or keep and drop mixed
 * @example
 * parseFieldSelection('fields', '-signature,-providerPublicKey') // => { mode: 'drop', names: ['signature', 'providerPublicKey'] }
 */
export function parseFieldSelection(parameter: string, value: unknown): FieldSelection {
  if (typeof value !== 'string') throw fail('PRICE_INVALID_QUERY', parameter, `${parameter} must be a string (got ${describeValue(value)})`)
  if (value === '') {
    throw fail('PRICE_INVALID_QUERY', parameter, `${parameter} must name at least one record field, e.g. ${parameter}=symbol,value,timestamp or ${parameter}=-signature,-providerPublicKey (got "")`)
  }
  const names = new Set<string>()
  let mode: FieldSelection['mode'] | undefined
  for (const entry of value.split(',')) {
    const dropped = entry.startsWith('-')
    const name = dropped ? entry.slice(1) : entry
    if (!KNOWN_FIELDS.has(name)) {
      const problem = name === '' ? 'an empty entry' : `unknown record field ${describeValue(name)}`
      throw fail('PRICE_INVALID_QUERY', parameter, `${problem} in ${parameter}=${describeValue(value)}: ${parameter} takes ${RECORD_FIELDS.join(', ')}, each optionally prefixed with "-"`)
    }
    const entryMode = dropped ? 'drop' : 'keep'
    if (mode !== undefined && mode !== entryMode) {
      throw fail('PRICE_INVALID_QUERY', parameter, `${parameter} either keeps the fields it names or leaves out the fields it names with "-", not both (got ${describeValue(value)})`)
    }
    mode = entryMode
    names.add(name)
  }
  return Object.freeze({ mode: mode as FieldSelection['mode'], names: Object.freeze([...names]) })
}
