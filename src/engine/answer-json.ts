import type { PriceAnswer } from '../types.js'
import { toExactJson } from './exact-json.js'

/** JSON of frozen records, which the hot tail shares between answers: each is serialised once. */
const jsonOfRecord = new WeakMap<object, string>()

/**
 * Serialises an answer as {@link toExactJson} would (`JSON.stringify`, with
 * `-0` kept), reusing the JSON of records it has serialised before. Records
 * are immutable once frozen, so their JSON never goes stale; unfrozen objects
 * are always serialised afresh.
 */
export function answerToJson(answer: PriceAnswer): string {
  if (Array.isArray(answer)) {
    let json = '['
    for (let i = 0; i < answer.length; i++) json += (i === 0 ? '' : ',') + recordToJson(answer[i] as object)
    return json + ']'
  }
  let json = '{'
  let first = true
  for (const symbol of Object.keys(answer)) {
    json += (first ? '' : ',') + JSON.stringify(symbol) + ':' + recordToJson(answer[symbol] as object)
    first = false
  }
  return json + '}'
}

function recordToJson(record: object): string {
  if (!Object.isFrozen(record)) return toExactJson(record)
  let json = jsonOfRecord.get(record)
  if (json === undefined) {
    json = toExactJson(record)
    jsonOfRecord.set(record, json)
  }
  return json
}
