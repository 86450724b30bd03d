import type { PriceAnswer } from '../types.js'
import { DeferredAnswer } from './deferred-answer.js'
import { toExactJson } from '../rules/exact-json.js'

/** JSON text and its UTF-8 length in bytes. */
export interface SizedJson {
  readonly json: string
  readonly bytes: number
}

/** JSON of frozen records, which the hot tail shares between answers: each is serialised (and measured) once. */
const jsonOfRecord = new WeakMap<object, SizedJson>()

/**
 * Serialises an answer as {@link toExactJson} would (`JSON.stringify`, with
 * `-0` kept), reusing the JSON of records it has serialised before. Records
 * are immutable once frozen, so their JSON never goes stale; unfrozen objects
 * are always serialised afresh.
 */
export function answerToJson(answer: PriceAnswer): string {
  return sizedAnswerJson(answer).json
}

/**
 * {@link answerToJson} with the UTF-8 length of the text, for a
 * `content-length`: summed from the cached lengths of the records, since
 * measuring the whole text again costs about as much as building it.
 */
export function sizedAnswerJson(answer: PriceAnswer): SizedJson {
  if (Array.isArray(answer)) {
    let json = '['
    let bytes = 2 // the brackets
    for (let i = 0; i < answer.length; i++) {
      const record = recordToJson(answer[i] as object)
      json += (i === 0 ? '' : ',') + record.json
      bytes += (i === 0 ? 0 : 1) + record.bytes
    }
    return { json: json + ']', bytes }
  }
  let json = '{'
  let bytes = 2
  let first = true
  for (const symbol of Object.keys(answer)) {
    const key = JSON.stringify(symbol)
    const record = recordToJson((answer as Record<string, object>)[symbol] as object)
    json += (first ? '' : ',') + key + ':' + record.json
    bytes += (first ? 0 : 1) + Buffer.byteLength(key, 'utf8') + 1 + record.bytes
    first = false
  }
  return { json: json + '}', bytes }
}

/** Characters of JSON per piece of {@link answerJsonPieces}: large enough to write efficiently, small enough to interleave. */
export const JSON_PIECE_CHARS = 64 * 1024

/**
 * The JSON text of an array answer, or of a deferred one (its records
 * decoded one at a time as the pieces are taken), in pieces of about
 * `pieceChars` characters: joined, the same text as {@link answerToJson}.
 * Only the piece being built is held, so a large answer streams in bounded
 * memory. A deferred record that does not decode throws from `next()`.
 */
export function* answerJsonPieces(answer: readonly object[] | DeferredAnswer, pieceChars = JSON_PIECE_CHARS): Generator<string, void, undefined> {
  const deferred = answer instanceof DeferredAnswer ? answer : undefined
  const items = answer as readonly object[]
  let piece = '['
  for (let i = 0; i < answer.length; i++) {
    const json = deferred === undefined ? recordToJson(items[i] as object).json : (deferred.json(i) ?? recordToJson(deferred.item(i)).json)
    piece += i === 0 ? json : ',' + json
    if (piece.length >= pieceChars) {
      yield piece
      piece = ''
    }
  }
  yield piece + ']'
}

/** One record's JSON as the answers write it ({@link toExactJson}), cached for a frozen record. */
export function recordJson(record: object): string {
  return recordToJson(record).json
}

function recordToJson(record: object): SizedJson {
  // A cross-rate answer's top level holds strings and numbers too, which are "frozen" but no WeakMap key.
  if (typeof record !== 'object' || !Object.isFrozen(record)) return measured(toExactJson(record))
  let sized = jsonOfRecord.get(record)
  if (sized === undefined) {
    sized = measured(toExactJson(record))
    jsonOfRecord.set(record, sized)
  }
  return sized
}

function measured(json: string): SizedJson {
  return { json, bytes: Buffer.byteLength(json, 'utf8') }
}
