import { parseFieldSelection } from '../../../rules/fields.js'
import type { FieldSelection } from '../../../types.js'
import type { HttpAnswer } from '../core/answer.js'
import type { Forbidden, Reader } from './read-access.js'

/*
 * A request as its reader may make it: the reader's field selection laid
 * over the request's own, and the symbols it names checked against the
 * reader's. Shared by every endpoint that answers within a reader's scope.
 */

/**
 * `requested` narrowed by a reader's `mask`: what both let through. A drop
 * list over a drop list drops both; a keep list keeps what the other lets
 * through. `undefined` when nothing is left.
 */
export function maskSelection(requested: FieldSelection | undefined, mask: FieldSelection): FieldSelection | undefined {
  if (requested === undefined) return mask
  const passes = (selection: FieldSelection, name: string): boolean => selection.names.includes(name) === (selection.mode === 'keep')
  if (requested.mode === 'drop' && mask.mode === 'drop') return { mode: 'drop', names: [...new Set([...requested.names, ...mask.names])] }
  const keep = requested.mode === 'keep' ? requested.names.filter((name) => passes(mask, name)) : mask.names.filter((name) => passes(requested, name))
  return keep.length === 0 ? undefined : { mode: 'keep', names: keep }
}

/** A selection as the `fields` parameter writes it. */
export function selectionText(selection: FieldSelection): string {
  return selection.names.map((name) => (selection.mode === 'drop' ? `-${name}` : name)).join(',')
}

/**
 * The `fields` text a reader's request is answered with: the request's own
 * `fields` under the reader's mask, or the answer refusing it (403 when the
 * request keeps only fields hidden from it). `undefined` text: the request's
 * own, unchanged (no mask, or a `fields` value the endpoint refuses itself).
 */
function readerFields(reader: Reader | undefined, requested: string | undefined, parameter = 'fields'): { text?: string } | HttpAnswer {
  const mask = reader?.fields
  if (mask === undefined) return {}
  let own: FieldSelection | undefined
  try {
    own = requested === undefined ? undefined : parseFieldSelection(parameter, requested)
  } catch {
    return {} // the endpoint answers the bad value with its own coded error
  }
  const selection = maskSelection(own, mask)
  if (selection === undefined) return (reader as Reader).forbid(`${parameter} keeps only fields this reader may not see (${selectionText(mask)})`)
  return { text: selectionText(selection) }
}

/** `params` with `fields` as the reader may have it (see {@link readerFields}), or the refusal. */
export function readerParams(reader: Reader | undefined, params: URLSearchParams): URLSearchParams | HttpAnswer {
  if (reader?.fields === undefined) return params
  const given = params.getAll('fields')
  // A repeated fields is the endpoint's to refuse, as without a reader.
  if (given.length > 1) return params
  const fields = readerFields(reader, given[0])
  if ('status' in fields) return fields
  if (fields.text === undefined) return params
  const masked = new URLSearchParams(params)
  masked.set('fields', fields.text)
  return masked
}

/** The 403 for the first of `symbols` a reader may not read; `undefined` when it may read them all (or `all`, which its scope narrows). */
export function forbiddenSymbol(reader: Reader | undefined, symbols: readonly string[] | 'all'): Forbidden | undefined {
  if (reader === undefined || symbols === 'all') return undefined
  const symbol = symbols.find((one) => !reader.mayRead(one))
  return symbol === undefined ? undefined : reader.forbid(`this reader may not read ${JSON.stringify(symbol)}`)
}

/** What a live feed (the stream, a WebSocket subscription) is asked to carry. */
export interface FeedAsked {
  readonly symbols?: readonly string[] | undefined
  readonly fields?: FieldSelection | undefined
}

/**
 * A live feed as a reader may have it: its own symbols where the request
 * names none, the request's fields under its mask; or the 403 for a symbol
 * it may not read, or fields it may not see.
 */
export function readerFeed(reader: Reader | undefined, asked: FeedAsked): FeedAsked | Forbidden {
  if (reader === undefined) return asked
  const symbols = asked.symbols ?? reader.symbols
  const refused = forbiddenSymbol(reader, symbols ?? 'all')
  if (refused !== undefined) return refused
  const mask = reader.fields
  const fields = mask === undefined ? asked.fields : maskSelection(asked.fields, mask)
  if (fields === undefined && mask !== undefined) return reader.forbid(`fields keeps only fields this reader may not see (${selectionText(mask)})`)
  return { symbols, fields }
}

/** What an export reads (`PriceStore.export`'s selection). */
export interface ExportAsked {
  readonly symbols?: readonly string[]
  readonly from?: number
  readonly to?: number
}

/**
 * An export's selection as a reader may read it: its own symbols where the
 * request names none (403 for another), and no record past its delay's
 * `notAfter` (`to` cut there; `none` when a `from` past it leaves nothing).
 */
export function readerExport(reader: Reader | undefined, asked: ExportAsked): { selection: ExportAsked; none?: true } | Forbidden {
  if (reader === undefined) return { selection: asked }
  const symbols = asked.symbols ?? reader.symbols
  const refused = forbiddenSymbol(reader, symbols ?? 'all')
  if (refused !== undefined) return refused
  const notAfter = reader.scope()?.notAfter
  const narrowed = { ...asked, ...(symbols === undefined ? {} : { symbols }) }
  if (notAfter === undefined) return { selection: narrowed }
  const to = Math.min(asked.to ?? notAfter, notAfter)
  return asked.from !== undefined && asked.from > to
    ? { selection: narrowed, none: true }
    : { selection: { ...narrowed, to } }
}
