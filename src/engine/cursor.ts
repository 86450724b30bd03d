import type { PriceQuery } from '../types.js'
import { fail } from '../rules/query-errors.js'

/*
 * The bytes of a page cursor (docs/semantics.md, "Cursors"), pure: the
 * engine reads and writes the layout, the store signs it (an HMAC over the
 * bytes before the tag, with a secret of its own) and checks the tag.
 *
 *   version (1) · kind (1) · binding (4, u32 BE) · position · tag (16)
 *   position, kind 1 (a record, latest-N): timestamp (f64 BE) · ties (u32 BE) · id (UTF-8)
 *   position, kind 2 (a bucket, range and candles, cross-rate ones too): the bucket's first ms (f64 BE)
 *   position, kind 3 (a time, batch as-of pages): the page's last as-of time (f64 BE)
 *
 * The text is the bytes in base64url without padding. The empty text is the
 * first page: no position yet.
 */

/** The layout version, the first byte of every cursor. */
export const CURSOR_VERSION = 1
/** Bytes of the store's tag at the end of a cursor (HMAC-SHA256, truncated). */
export const CURSOR_TAG_BYTES = 16

const RECORD_KIND = 1
const BUCKET_KIND = 2
const TIME_KIND = 3
const HEAD_BYTES = 6
/** The shortest cursor: a bucket position and its tag. */
const MIN_BYTES = HEAD_BYTES + 8 + CURSOR_TAG_BYTES
/** The longest cursor read: a record position with an id of up to 1 KiB (ids are far shorter); bounds what is decoded. */
const MAX_BYTES = HEAD_BYTES + 12 + 1024 + CURSOR_TAG_BYTES
const BASE64URL = /^[A-Za-z0-9_-]*$/

/**
 * Where a page ends, so the next resumes after it: a record of the
 * latest-N form (newest first: the next page holds the records strictly
 * older than its timestamp and id), or a bucket of a bucketed form (the
 * next page starts at the bucket after it).
 */
export type PagePosition =
  | {
    readonly kind: 'record'
    readonly timestamp: number
    readonly id: string
    /** How many records of that timestamp, with an id at or above `id`, the answer had when the page was made: a hint for the next read's size. */
    readonly ties: number
  }
  | { readonly kind: 'bucket'; readonly bucket: number }
  /** A batch as-of page's last time: the next page holds the batch's times after it (store/batch-as-of.ts). */
  | { readonly kind: 'time'; readonly time: number }

/** A cursor as read from its text: its position, the query it belongs to, and its signed bytes and tag, for the store to check. */
export interface CursorToken {
  readonly position: PagePosition
  /** {@link queryBinding} of the query the cursor was made for. */
  readonly binding: number
  /** Every byte before the tag: what the tag signs. */
  readonly signed: Uint8Array
  readonly tag: Uint8Array
}

/**
 * Reads a `cursor` parameter: `undefined` for the empty text (the first
 * page), else its token (not yet checked against a store).
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (parameter `cursor`) when it is not a cursor of this layout
 */
export function readCursor(text: string): CursorToken | undefined {
  if (text === '') return undefined
  const bytes = BASE64URL.test(text) && text.length % 4 !== 1 ? Buffer.from(text, 'base64url') : undefined
  if (bytes === undefined || bytes.length < MIN_BYTES || bytes.length > MAX_BYTES) throw malformed()
  if (bytes[0] !== CURSOR_VERSION) {
    throw fail('PRICE_INVALID_QUERY', 'cursor', `cursor has layout version ${bytes[0]}; this release reads version ${CURSOR_VERSION}: start again without a position (cursor=)`)
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length)
  const end = bytes.length - CURSOR_TAG_BYTES
  const binding = view.getUint32(2)
  let position: PagePosition
  if (bytes[1] === BUCKET_KIND && end === HEAD_BYTES + 8) {
    position = { kind: 'bucket', bucket: view.getFloat64(HEAD_BYTES) }
  } else if (bytes[1] === TIME_KIND && end === HEAD_BYTES + 8) {
    position = { kind: 'time', time: view.getFloat64(HEAD_BYTES) }
  } else if (bytes[1] === RECORD_KIND && end > HEAD_BYTES + 12) {
    const id = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
    let text: string
    try {
      text = id.decode(bytes.subarray(HEAD_BYTES + 12, end))
    } catch {
      throw malformed()
    }
    position = { kind: 'record', timestamp: view.getFloat64(HEAD_BYTES), ties: view.getUint32(HEAD_BYTES + 8), id: text }
  } else {
    throw malformed()
  }
  if (!Number.isSafeInteger(position.kind === 'record' ? position.timestamp : position.kind === 'time' ? position.time : position.bucket)) throw malformed()
  return Object.freeze({ position, binding, signed: bytes.subarray(0, end), tag: bytes.subarray(end) })
}

/** The bytes a cursor's tag signs: the layout of {@link readCursor} up to the tag. */
export function cursorBytes(position: PagePosition, binding: number): Uint8Array {
  const id = position.kind === 'record' ? new TextEncoder().encode(position.id) : new Uint8Array(0)
  const bytes = new Uint8Array(HEAD_BYTES + (position.kind === 'record' ? 12 + id.length : 8))
  const view = new DataView(bytes.buffer)
  bytes[0] = CURSOR_VERSION
  bytes[1] = position.kind === 'record' ? RECORD_KIND : position.kind === 'time' ? TIME_KIND : BUCKET_KIND
  view.setUint32(2, binding >>> 0)
  if (position.kind === 'record') {
    view.setFloat64(HEAD_BYTES, position.timestamp)
    view.setUint32(HEAD_BYTES + 8, Math.min(position.ties, 0xffffffff))
    bytes.set(id, HEAD_BYTES + 12)
  } else {
    view.setFloat64(HEAD_BYTES, position.kind === 'time' ? position.time : position.bucket)
  }
  return bytes
}

/** A cursor's text: its signed bytes and their tag, in base64url. */
export function cursorText(signed: Uint8Array, tag: Uint8Array): string {
  return Buffer.concat([signed, tag.subarray(0, CURSOR_TAG_BYTES)]).toString('base64url')
}

/**
 * What a cursor is bound to: a 32-bit FNV-1a hash of what selects the
 * query's items (its form, symbol or cross pair and maxAge, window, grid and fill), not of `limit`
 * (a page's size may change from page to page), `offset` (refused with a
 * cursor) or `fields` (how items are written). The store's tag covers it,
 * so it only tells queries apart; it need not resist forgery itself.
 */
export function queryBinding(query: PriceQuery): number {
  const q = query as unknown as Readonly<Record<'kind' | 'symbol' | 'from' | 'to' | 'interval' | 'origin' | 'fill' | 'quote' | 'base' | 'maxAge', unknown>>
  // A cross rate's pair and maxAge too (appended only for them: the other forms' bindings stay as they were).
  const cross = q.quote === undefined ? [] : [q.quote, q.base, q.maxAge ?? null]
  const text = JSON.stringify([q.kind, q.symbol ?? null, q.from ?? null, q.to ?? null, q.interval ?? null, q.origin ?? null, q.fill ?? null, ...cross])
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash
}

function malformed(): Error {
  return fail('PRICE_INVALID_QUERY', 'cursor', 'cursor is not a cursor this store gave: pass the x-next-cursor of the page before unchanged, or an empty cursor for the first page')
}

/** The message of {@link resumeRefusal}: an HTTP host tells the refusal apart by it (adapters/http/prices/page-answer.ts). */
const RESUME_MESSAGE = 'cursor resumes a page only through store.page() or GET /prices: store.query, plan, run and ask answer no later page (give cursor= empty for the first page, or leave it out)'

/**
 * The refusal of a non-empty `cursor` by `parseQuery` (so `store.query`,
 * `plan`, `run` and `ask`), thrown after every other rule: answering the
 * first page instead would look like a resumed page.
 */
export function resumeRefusal(): Error {
  return fail('PRICE_INVALID_QUERY', 'cursor', RESUME_MESSAGE)
}

/** Whether `err` is {@link resumeRefusal}'s (by code, parameter and message: another copy of the package makes an equal one). */
export function isResumeRefusal(err: unknown): boolean {
  const e = err as { readonly code?: unknown; readonly message?: unknown; readonly details?: { readonly parameter?: unknown } } | null
  return typeof e === 'object' && e !== null && e.code === 'PRICE_INVALID_QUERY' && e.details?.parameter === 'cursor' && e.message === RESUME_MESSAGE
}
