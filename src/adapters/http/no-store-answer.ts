import { toExactJson } from '../../engine/exact-json.js'
import type { HttpAnswer } from './answer.js'

/** A JSON answer of the state of now (`/stats`, `/health`): `cache-control: no-store`, so no cache serves it again later. */
export function noStoreAnswer(status: number, value: unknown): HttpAnswer {
  const body = toExactJson(value)
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body, 'utf8')), 'cache-control': 'no-store' },
    body,
  }
}
