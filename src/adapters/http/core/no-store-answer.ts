import { jsonAnswer, type HttpAnswer } from './answer.js'

/** A JSON answer of the state of now (`/stats`, `/health`): `cache-control: no-store`, so no cache serves it again later. */
export function noStoreAnswer(status: number, value: unknown): HttpAnswer {
  return jsonAnswer(status, value, { 'cache-control': 'no-store' })
}
