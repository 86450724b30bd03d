/**
 * The tag of a commit id as its definition states it (FNV-1a, 32 bits, over
 * the id's UTF-16 code units, as 8 lower-case hex digits), computed in big
 * integers apart from the code under test.
 */
export function referenceCommitTag(id: string): string {
  let hash = 0x811c9dc5n
  for (let i = 0; i < id.length; i++) hash = ((hash ^ BigInt(id.charCodeAt(i))) * 0x01000193n) % 2n ** 32n
  return hash.toString(16).padStart(8, '0')
}
