/**
 * `JSON.stringify`, except that `-0` is written as `-0` (valid JSON, which
 * `JSON.parse` reads back as `-0`), so a stored price or a nested `-0` comes
 * back bit for bit. Takes the native fast path unless the value holds a `-0`.
 * @param indent spaces per level, as `JSON.stringify`'s third argument
 */
export function toExactJson(value: unknown, indent = 0): string {
  if (!containsNegativeZero(value)) return JSON.stringify(value, null, indent) ?? 'null'
  return writeJson(value, ' '.repeat(indent), '') ?? 'null'
}

/** Whether a JSON-like value holds a `-0` anywhere. */
export function containsNegativeZero(value: unknown): boolean {
  if (typeof value === 'number') return Object.is(value, -0)
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) return value.some(containsNegativeZero)
  for (const key of Object.keys(value)) {
    if (containsNegativeZero((value as Record<string, unknown>)[key])) return true
  }
  return false
}

// The slow path: mirrors JSON.stringify for plain data (what records hold).
function writeJson(value: unknown, unit: string, pad: string): string | undefined {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'number':
      return Object.is(value, -0) ? '-0' : JSON.stringify(value)
    case 'string':
    case 'boolean':
    case 'bigint':
      return JSON.stringify(value)
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined
  }
  const toJSON = (value as { toJSON?: unknown }).toJSON
  if (typeof toJSON === 'function') return writeJson(toJSON.call(value), unit, pad)
  const inner = pad + unit
  const open = unit === '' ? '' : `\n${inner}`
  const sep = unit === '' ? ',' : `,\n${inner}`
  const close = unit === '' ? '' : `\n${pad}`
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    const items = value.map((item: unknown) => writeJson(item, unit, inner) ?? 'null')
    return `[${open}${items.join(sep)}${close}]`
  }
  const colon = unit === '' ? ':' : ': '
  const members: string[] = []
  for (const key of Object.keys(value)) {
    const text = writeJson((value as Record<string, unknown>)[key], unit, inner)
    if (text !== undefined) members.push(`${JSON.stringify(key)}${colon}${text}`)
  }
  if (members.length === 0) return '{}'
  return `{${open}${members.join(sep)}${close}}`
}
