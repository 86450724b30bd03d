/**
 * The bytes a RedStone provider signed with its Arweave key, rebuilt from a
 * record as RedStone's own verifier did (redstone-api
 * src/signature-verifier.ts before it was disabled, 9c67dbd^):
 * `lodash.pick(record, [id, source, symbol, timestamp, version, value,
 * permawebTx, provider])`, then for version "3" and every version with a dot
 * ("0.4", …) `deep-sort-object` over it, then `JSON.stringify`, UTF-8.
 * (redstone-node signed `JSON.stringify(deepSortObject(price))` of exactly
 * those eight fields, so both agree for the versions it produced.)
 */

/** The fields picked, in lodash.pick's order (the order they appear in JSON when not sorted). */
const SIGNED_FIELDS = ['id', 'source', 'symbol', 'timestamp', 'version', 'value', 'permawebTx', 'provider'] as const

// deep-sort-object 1.0.2 sorts keys with `a.localeCompare(b)` in the signer's default locale.
// RedStone's nodes ran with the default ICU locale (en-US); a fixed `en` collator gives that
// order on every host whatever its LANG, where `localeCompare` without a locale would not.
const collator = new Intl.Collator('en')

/** {@link SIGNED_FIELDS} in deep-sort-object's order: the order of the sorted text's members. */
const SORTED_SIGNED_FIELDS: readonly string[] = [...SIGNED_FIELDS].sort(collator.compare)

/** The JSON text RedStone signed for `record` (see the file comment). */
export function arweaveSignedText(record: Readonly<Record<string, unknown>>): string {
  const version = record['version']
  const sorted = version === '3' || (typeof version === 'string' && version.includes('.'))
  const direct = sorted ? sortedSignedText(record) : undefined
  if (direct !== undefined) return direct
  const picked: Record<string, unknown> = {}
  // lodash.pick keeps a key when `key in object` (even if its value is undefined: JSON drops it then).
  for (const field of SIGNED_FIELDS) if (field in record) picked[field] = record[field]
  return JSON.stringify(sorted ? deepSort(picked) : picked)
}

/** What {@link simpleJson} returns for a value it leaves to the general path. */
const NOT_SIMPLE = Symbol('not simple')

/**
 * The sorted text written member by member, without the picked and sorted copies the general path makes (about
 * half of its cost; a record's signed text is built once per verification): `undefined` unless every picked
 * value is simple ({@link simpleJson}), and then exactly the general path's text.
 */
function sortedSignedText(record: Readonly<Record<string, unknown>>): string | undefined {
  let text = ''
  for (const field of SORTED_SIGNED_FIELDS) {
    if (!(field in record)) continue
    const json = simpleJson(record[field])
    if (json === NOT_SIMPLE) return undefined
    if (json !== undefined) text += `${text === '' ? '{' : ','}"${field}":${json}`
  }
  return text === '' ? '{}' : `${text}}`
}

/**
 * The JSON of `value` as JSON.stringify writes deepSort's copy of it, for the values where that is plain to see:
 * a string, a number, a boolean or null (`undefined` for undefined: the member is left out), and an object whose
 * prototype is Object.prototype, whose keys are none of the ones that make deep-sort-object or JSON treat it
 * otherwise (an array index, which JS orders first; `__proto__`; `constructor`) and whose values are simple in
 * turn, written with its keys sorted. A `toJSON` member JSON would call is a function, which is not simple.
 * {@link NOT_SIMPLE} for anything else (an array, a symbol-tagged or class object, a function, a BigInt): the
 * caller takes the general path.
 */
function simpleJson(value: unknown): string | undefined | typeof NOT_SIMPLE {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value)
    case 'undefined':
      return undefined
    case 'object':
      break
    default:
      return NOT_SIMPLE
  }
  if (value === null) return 'null'
  if (Object.getPrototypeOf(value) !== Object.prototype || Symbol.toStringTag in value) return NOT_SIMPLE
  const keys = Object.keys(value)
  for (const key of keys) if (key === '__proto__' || key === 'constructor' || ARRAY_INDEX.test(key)) return NOT_SIMPLE
  let text = ''
  for (const key of sortedKeys(keys)) {
    const json = simpleJson((value as Record<string, unknown>)[key])
    if (json === NOT_SIMPLE) return NOT_SIMPLE
    if (json !== undefined) text += `${text === '' ? '{' : ','}${JSON.stringify(key)}:${json}`
  }
  return text === '' ? '{}' : `${text}}`
}

/**
 * A key JS orders before the others: an array index, a canonical integer below 2³² − 1. A few larger integers
 * match too, which only sends their objects the general way.
 */
const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/

/**
 * deep-sort-object 1.0.2: arrays mapped, plain objects rebuilt with their
 * keys sorted (so integer-like keys still come first, as JS orders them),
 * anything else kept as is.
 */
function deepSort(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepSort)
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of sortedKeys(Object.keys(value))) {
    // A plain assignment, as deep-sort-object does: an own `__proto__` key (JSON.parse makes one)
    // then sets the prototype and drops out of the JSON, in RedStone's signer and here alike.
    out[key] = deepSort(value[key])
  }
  return out
}

/** Sorted key lists by their keys joined with NUL (see sortedKeys); cleared when full, as hostile records could vary them. */
const sortedLists = new Map<string, readonly string[]>()
const SORTED_LISTS_LIMIT = 256

/**
 * `keys` in the collator's order. A feed's records have the same few key lists (the eight signed fields, a
 * symbol's sources), so each list's order is remembered: a sort with the collator costs ~1.5 µs a record, a
 * look-up a fraction of that. A list with a NUL in a key is sorted afresh (joined with NUL, it could read as another).
 */
function sortedKeys(keys: string[]): readonly string[] {
  if (keys.length < 2) return keys
  if (keys.some((key) => key.includes('\u0000'))) return keys.sort(collator.compare)
  const joined = keys.join('\u0000')
  let sorted = sortedLists.get(joined)
  if (sorted === undefined) {
    if (sortedLists.size >= SORTED_LISTS_LIMIT) sortedLists.clear()
    sorted = keys.sort(collator.compare)
    sortedLists.set(joined, sorted)
  }
  return sorted
}

/**
 * is-plain-object 2.0.4, which deep-sort-object uses: an object whose
 * `toString` tag is Object, whose `constructor` is a function with an
 * Object-like prototype owning `isPrototypeOf`. So an object with its own
 * `constructor` field (a hostile or odd `source`) is not sorted, exactly as
 * RedStone would not have sorted it.
 */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isObjectObject(value)) return false
  const ctor: unknown = (value as { constructor?: unknown }).constructor
  if (typeof ctor !== 'function') return false
  const prototype: unknown = (ctor as { prototype?: unknown }).prototype
  if (!isObjectObject(prototype)) return false
  return Object.prototype.hasOwnProperty.call(prototype, 'isPrototypeOf')
}

function isObjectObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.prototype.toString.call(value) === '[object Object]'
}
