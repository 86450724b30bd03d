/**
 * The store's side of a cursor: the engine lays out its bytes
 * (engine/cursor.ts); this signs them with the store's secret (the
 * `cursorSecret` option, else the store's own, made once) and checks a cursor
 * given back before anything is read. `/prices` pages and batch as-of pages
 * both go through it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { cursorBytes, cursorText, CURSOR_TAG_BYTES, type CursorToken, type PagePosition } from '../../engine/cursor.js'
import { fail } from '../../rules/query-errors.js'
import type { StoreParts } from '../lifecycle/store-parts.js'
import { cursorSecret } from './cursor-secret.js'

/** The tag of a cursor's bytes: the first bytes of their HMAC-SHA256 with `secret`. */
export function tagOf(secret: Uint8Array, signed: Uint8Array): Uint8Array {
  return createHmac('sha256', secret).update(signed).digest().subarray(0, CURSOR_TAG_BYTES)
}

/** The cursor text of `position` under `binding`, signed by the store. */
export async function signedCursor(parts: StoreParts, position: PagePosition, binding: number): Promise<string> {
  const signed = cursorBytes(position, binding)
  return cursorText(signed, tagOf(await cursorSecret(parts.levels.meta, parts.options.cursorSecret), signed))
}

/**
 * The position of a cursor given back, once its tag (this store's, unaltered) and its binding and kind (the same
 * query) are checked. `resume` says how to resume, for the message of the second refusal.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (parameter `cursor`)
 */
export async function checkedPosition(
  parts: StoreParts, token: CursorToken, binding: number, kind: PagePosition['kind'], resume: string,
): Promise<PagePosition> {
  const expected = tagOf(await cursorSecret(parts.levels.meta, parts.options.cursorSecret), token.signed)
  if (token.tag.length !== expected.length || !timingSafeEqual(token.tag, expected)) {
    throw fail('PRICE_INVALID_QUERY', 'cursor', 'cursor was not made by this store, or was altered: pass the next cursor of the page before unchanged')
  }
  if (token.binding !== binding || token.position.kind !== kind) throw fail('PRICE_INVALID_QUERY', 'cursor', `cursor belongs to ${resume}`)
  return token.position
}
