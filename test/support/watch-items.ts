/**
 * Reading a watch in tests: items as plain data, the expected `records`
 * item of a commit built from its inputs (not read from the store), and
 * pulling items up to a position.
 */
import type { WatchItem, WatchIterator } from '../../src/index.js'
import { expected, type Input } from './records.js'

/** An item as plain data: records as their expected JSON shape. */
export const plain = (item: WatchItem): unknown => JSON.parse(JSON.stringify(item))

/** The `records` item a commit at `position` of `inputs` must give. */
export const recordsItem = (position: number, inputs: readonly Input[]): unknown => ({ type: 'records', position, records: inputs.map((input) => expected(input)) })

/** Pulls items until one reaches `position` (or the watch ends). */
export async function collectUntil(items: WatchIterator, position: number): Promise<unknown[]> {
  const out: unknown[] = []
  if (position <= 0) return out
  for await (const item of items) {
    out.push(plain(item))
    if (item.position >= position) break
  }
  return out
}
