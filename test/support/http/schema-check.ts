/**
 * A small JSON Schema checker for the subset docs/openapi.yaml uses. It
 * refuses keywords it does not know, so the document cannot quietly use a
 * rule that is never checked.
 */

type Schema = Record<string, unknown>

const CHECKED = new Set([
  '$ref', 'type', 'properties', 'required', 'additionalProperties', 'items', 'allOf', 'anyOf', 'oneOf',
  'enum', 'const', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'dependentRequired',
])
const ANNOTATIONS = new Set(['description', 'title', 'example', 'examples', 'default', 'deprecated', 'format'])

/** Follows a local `#/a/b/c` reference inside `root`. */
export function resolveRef(root: unknown, ref: string): Schema {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported (got ${ref})`)
  let node: unknown = root
  for (const part of ref.slice(2).split('/')) {
    const key = part.replaceAll('~1', '/').replaceAll('~0', '~')
    if (typeof node !== 'object' || node === null || !(key in node)) throw new Error(`unresolved $ref ${ref}`)
    node = (node as Record<string, unknown>)[key]
  }
  return node as Schema
}

/** The errors of `value` against `schema` (empty when it conforms), each with a JSON path. */
export function checkSchema(value: unknown, schema: Schema, root: unknown, path = '$'): string[] {
  for (const key of Object.keys(schema)) {
    if (!CHECKED.has(key) && !ANNOTATIONS.has(key)) throw new Error(`schema keyword "${key}" at ${path} is not supported by the checker`)
  }
  if (typeof schema.$ref === 'string') return checkSchema(value, resolveRef(root, schema.$ref), root, path)
  const errors: string[] = []
  const fail = (message: string): void => {
    errors.push(`${path}: ${message}`)
  }

  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string]
    if (!types.some((type) => hasType(value, type))) {
      fail(`expected ${types.join(' or ')}, got ${describe(value)}`)
      return errors
    }
  }
  if (schema.const !== undefined && JSON.stringify(schema.const) !== JSON.stringify(value)) fail(`expected ${JSON.stringify(schema.const)}`)
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))) {
    fail(`${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`)
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) fail(`${value} < minimum ${schema.minimum}`)
    if (typeof schema.maximum === 'number' && value > schema.maximum) fail(`${value} > maximum ${schema.maximum}`)
  }
  if (typeof value === 'string') {
    const length = [...value].length
    if (typeof schema.minLength === 'number' && length < schema.minLength) fail(`shorter than ${schema.minLength}`)
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) fail(`longer than ${schema.maxLength}`)
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) fail(`does not match ${schema.pattern}`)
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) fail(`fewer than ${schema.minItems} items`)
    if (schema.items !== undefined) {
      value.forEach((item, i) => errors.push(...checkSchema(item, schema.items as Schema, root, `${path}[${i}]`)))
    }
  }
  if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Record<string, Schema>
    for (const name of (schema.required ?? []) as string[]) if (!Object.hasOwn(value, name)) fail(`missing required "${name}"`)
    for (const [name, needed] of Object.entries((schema.dependentRequired ?? {}) as Record<string, string[]>)) {
      if (!Object.hasOwn(value, name)) continue
      for (const other of needed) if (!Object.hasOwn(value, other)) fail(`"${name}" needs "${other}"`)
    }
    for (const [name, child] of Object.entries(value)) {
      const childPath = `${path}.${name}`
      if (Object.hasOwn(properties, name)) errors.push(...checkSchema(child, properties[name]!, root, childPath))
      else if (schema.additionalProperties === false) fail(`unexpected property "${name}"`)
      else if (isObject(schema.additionalProperties)) errors.push(...checkSchema(child, schema.additionalProperties, root, childPath))
    }
  }
  for (const sub of (schema.allOf ?? []) as Schema[]) errors.push(...checkSchema(value, sub, root, path))
  if (Array.isArray(schema.anyOf)) {
    const results = (schema.anyOf as Schema[]).map((sub) => checkSchema(value, sub, root, path))
    if (!results.some((result) => result.length === 0)) fail(`matches none of anyOf: ${results.map((r) => r.join('; ')).join(' | ')}`)
  }
  if (Array.isArray(schema.oneOf)) {
    const results = (schema.oneOf as Schema[]).map((sub) => checkSchema(value, sub, root, path))
    const matches = results.filter((result) => result.length === 0).length
    if (matches !== 1) fail(`matches ${matches} of oneOf (need exactly 1): ${results.map((r) => r.join('; ')).join(' | ')}`)
  }
  return errors
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null
    case 'boolean':
      return typeof value === 'boolean'
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'integer':
      return Number.isInteger(value)
    case 'array':
      return Array.isArray(value)
    case 'object':
      return isObject(value)
    default:
      throw new Error(`unknown type ${type}`)
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}
