import { expect, it } from 'vitest'
import { PriceStoreError } from '../../../src/index.js'
import { answerPrices, statusForError } from '../../../src/http.js'

// A host may give the store an AbortSignal (docs/errors.md): the query it stops is a 503 to retry, not a fault.
it('a query aborted by its host answers 503 PRICE_ABORTED with retry-after, reported, without internals', async () => {
  const reported: unknown[] = []
  const aborted = new PriceStoreError('PRICE_ABORTED', 'the query was aborted: /secret/path', { details: { parameter: 'signal' } })
  const store = { query: () => Promise.reject(aborted) }
  const answer = await answerPrices(store, new URLSearchParams('symbol=BTC'), { onError: (err) => reported.push(err) })
  expect(statusForError('PRICE_ABORTED')).toBe(503)
  expect(answer.status).toBe(503)
  expect(answer.headers['retry-after']).toBe('1')
  expect(JSON.parse(answer.body)).toEqual({ error: { code: 'PRICE_ABORTED', message: 'the query was stopped before it finished; try again later' } })
  expect(reported).toEqual([aborted])
})
