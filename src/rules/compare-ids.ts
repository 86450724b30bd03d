/**
 * Compares two strings by their UTF-8 bytes, which is Unicode code point
 * order, without encoding them. JavaScript's `<` compares UTF-16 units, which
 * puts U+E000..U+FFFF after astral characters; ties on timestamp must follow
 * the byte order of the store's keys instead.
 */
export function compareIds(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}

/** Orders records (or anything with a timestamp and an id) as the store's keys do: by timestamp, then id by UTF-8 bytes. */
export function compareTimeAndId(a: { readonly timestamp: number; readonly id: string }, b: { readonly timestamp: number; readonly id: string }): number {
  return a.timestamp - b.timestamp || compareIds(a.id, b.id)
}

function codePointRank(unit: number): number {
  // Surrogates encode code points above U+FFFF: lift them over U+E000..U+FFFF.
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000
  if (unit >= 0xe000) return unit - 0x800
  return unit
}
