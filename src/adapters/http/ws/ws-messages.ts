import { describeValue } from '../../../errors.js'
import { parseFieldSelection } from '../../../rules/fields.js'
import type { FieldSelection } from '../../../types.js'
import { readEventId } from '../live/stream-params.js'

/*
 * The messages a client sends to `/ws`, read and checked: JSON text
 * frames, each an object with a `type`. Anything else is refused with a
 * coded error the connection survives (see docs/http.md, "WebSocket subscriptions").
 */

/** A subscription's name, chosen by the client: a string or a whole number; `null` when it gave none. */
export type SubscriptionId = string | number | null

/** How often a subscription sends: every commit, or at most once per interval with each symbol's newest record. */
export const CHANNELS: Readonly<Record<string, number>> = Object.freeze({ real_time: 0, 'fixed_rate@200ms': 200, 'fixed_rate@1s': 1_000 })

/** `{"type":"subscribe",...}`, checked. */
export interface SubscribeMessage {
  readonly type: 'subscribe'
  readonly id: SubscriptionId
  readonly symbols: readonly string[]
  readonly fields: FieldSelection | undefined
  readonly channel: string
  /** 0 for `real_time`, else the interval of a `fixed_rate` channel (ms). */
  readonly intervalMs: number
  /** Where to start: a position, or a portable position as text (checked by the watch). */
  readonly after: number | string | undefined
}

/** `{"type":"unsubscribe",...}`, checked: the symbols to drop (from every subscription, or from `id`'s), or the whole subscription `id`. */
export interface UnsubscribeMessage {
  readonly type: 'unsubscribe'
  /** `undefined` when the message named no subscription. */
  readonly id: SubscriptionId | undefined
  readonly symbols: readonly string[] | undefined
}

export type ClientMessage = SubscribeMessage | UnsubscribeMessage

/** A message refused: what the `error` reply says. */
export class WsRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** The id of the subscription the message named, when it could be read. */
    readonly id: SubscriptionId = null,
  ) {
    super(message)
  }
}

/** Longest subscription id taken, in characters. */
const MAX_ID_LENGTH = 128

/**
 * Reads one text frame.
 * @throws WsRefusal `PRICE_WS_BAD_MESSAGE` for text that is not a JSON object with a known `type` and well-formed members;
 * `PRICE_INVALID_QUERY` for a bad `fields` or `after`
 */
export function readClientMessage(text: string): ClientMessage {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw bad('a message must be a JSON object such as {"type":"subscribe","symbols":["BTC"]}; this one is not JSON')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw bad(`a message must be a JSON object (got ${describeValue(parsed)})`)
  const message = parsed as Record<string, unknown>
  const id = 'id' in message ? readId(message.id) : undefined
  try {
    switch (message.type) {
      case 'subscribe':
        return readSubscribe(message, id ?? null)
      case 'unsubscribe':
        return readUnsubscribe(message, id)
      default:
        throw bad(`unknown message type ${describeValue(message.type)}: a message's type is "subscribe" or "unsubscribe"`)
    }
  } catch (err) {
    if (err instanceof WsRefusal) throw new WsRefusal(err.code, err.message, id ?? null)
    // The library's own checks (fields, after) keep their code and message.
    const { code, message: text } = err as { code?: unknown; message?: unknown }
    throw new WsRefusal(typeof code === 'string' ? code : 'PRICE_WS_BAD_MESSAGE', String(text), id ?? null)
  }
}

function readSubscribe(message: Record<string, unknown>, id: SubscriptionId): SubscribeMessage {
  const symbols = readSymbols(message.symbols, 'subscribe')
  if (symbols === undefined) throw bad('subscribe needs "symbols": a list of at least one symbol, e.g. ["BTC","ETH"]')
  const channel = message.channel ?? 'real_time'
  const intervalMs = typeof channel === 'string' ? CHANNELS[channel] : undefined
  if (intervalMs === undefined) throw bad(`unknown channel ${describeValue(channel)}: channels are ${Object.keys(CHANNELS).map((name) => `"${name}"`).join(', ')}`)
  return {
    type: 'subscribe',
    id,
    symbols,
    fields: readFields(message.fields),
    channel: channel as string,
    intervalMs,
    after: readAfter(message.after),
  }
}

function readUnsubscribe(message: Record<string, unknown>, id: SubscriptionId | undefined): UnsubscribeMessage {
  const symbols = readSymbols(message.symbols, 'unsubscribe')
  if (symbols === undefined && id === undefined) throw bad('unsubscribe needs "symbols" (dropped from every subscription) or "id" (the subscription to end)')
  return { type: 'unsubscribe', id, symbols }
}

function readId(value: unknown): SubscriptionId {
  if (value === null || (typeof value === 'number' && Number.isSafeInteger(value))) return value
  if (typeof value === 'string' && value.length <= MAX_ID_LENGTH) return value
  throw bad(`id must be a string of at most ${MAX_ID_LENGTH} characters or a whole number (got ${describeValue(value)})`)
}

/** A non-empty list of strings; the watch checks each symbol. */
function readSymbols(value: unknown, type: string): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || value.length === 0 || !value.every((symbol) => typeof symbol === 'string')) {
    throw bad(`${type}'s symbols must be a non-empty list of strings (got ${describeValue(value)})`)
  }
  return [...new Set(value as string[])]
}

/** A list of field names, as `fields` on `/prices` takes them (all kept, or all `-`dropped). */
function readFields(value: unknown): FieldSelection | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string' && !name.includes(','))) {
    throw bad(`fields must be a list of record field names, e.g. ["symbol","value","timestamp"] (got ${describeValue(value)})`)
  }
  return parseFieldSelection('fields', value.join(','))
}

/** An update's `eventId` (`"N"` or `"N.tag"`), or a whole number. */
function readAfter(value: unknown): number | string | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value
  if (typeof value === 'string' && value !== '') return readEventId(value, 'after', 'after')
  throw bad(`after must be an update's eventId, "N" or "N.tag" (got ${describeValue(value)})`)
}

function bad(message: string): WsRefusal {
  return new WsRefusal('PRICE_WS_BAD_MESSAGE', message)
}
