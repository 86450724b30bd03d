/**
 * A 32-bit tag of a record id: FNV-1a over its UTF-16 code units. A heads
 * entry's page table (heads-codec.ts) keeps the tag of each page's first
 * id, so a page read alone is known to be the page the table places there,
 * even among pages whose records share one timestamp.
 */
export function idTag(id: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193)
  return hash >>> 0
}
