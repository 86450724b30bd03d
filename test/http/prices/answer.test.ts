import { describe, expect, it } from 'vitest'
import { answerPrices } from '../../../src/adapters/http/prices/answer.js'
import { statusForError } from '../../../src/adapters/http/core/status.js'
import { PriceStoreError, type PriceStoreErrorCode } from '../../../src/index.js'

// The socket-free core of the HTTP adapter.

const params = new URLSearchParams('symbol=BTC')

describe('statusForError', () => {
  it.each<[PriceStoreErrorCode, number]>([
    ['PRICE_INVALID_SYMBOL', 400],
    ['PRICE_INVALID_RECORD', 400],
    ['PRICE_INVALID_QUERY', 400],
    ['PRICE_INVALID_RANGE', 400],
    ['PRICE_INVALID_INTERVAL', 400],
    ['PRICE_UNSUPPORTED_PROVIDER', 400],
    ['PRICE_RANGE_TOO_LARGE', 400],
    ['PRICE_NOT_OPEN', 503],
    ['PRICE_INVALID_OPTIONS', 500],
    ['PRICE_LOCKED', 500],
    ['PRICE_UNSUPPORTED_FORMAT', 500],
    ['PRICE_CORRUPT_VALUE', 500],
    ['PRICE_STORAGE_ERROR', 500],
  ])('%s -> %i', (code, status) => {
    expect(statusForError(code)).toBe(status)
  })

  it('an unknown code (another copy of the package, a newer release) is a 500, not a crash', () => {
    expect(statusForError('PRICE_FROM_THE_FUTURE' as PriceStoreErrorCode)).toBe(500)
  })
})

describe('answerPrices', () => {
  it('200 with the JSON body and its byte length', async () => {
    const answer = await answerPrices({ query: async () => [{ symbol: 'ünïcødé' }] as never }, params)
    expect(answer).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(answer.body)) },
      body: '[{"symbol":"ünïcødé"}]',
    })
    expect(Number(answer.headers['content-length'])).toBeGreaterThan(answer.body.length)
  })

  it('passes the parameters through untouched', async () => {
    let seen: unknown
    await answerPrices({ query: async (p) => ((seen = p), []) }, params)
    expect(seen).toBe(params)
  })

  it('a client error keeps its code and message', async () => {
    const err = new PriceStoreError('PRICE_INVALID_QUERY', 'limit must be ... (got "x")')
    const answer = await answerPrices({ query: async () => Promise.reject(err) }, params)
    expect(answer.status).toBe(400)
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'PRICE_INVALID_QUERY', message: 'limit must be ... (got "x")' } })
  })

  it('server errors get a fixed message and reach onError; client errors do not', async () => {
    const seen: unknown[] = []
    const onError = (err: unknown): void => {
      seen.push(err)
      throw new Error('a broken logger is ignored')
    }
    const thrown = ['a string', new TypeError('x is undefined at /app/src/x.ts:1:2'), new PriceStoreError('PRICE_CORRUPT_VALUE', 'key BTC\\x00... at /data')]
    for (const value of thrown) {
      const answer = await answerPrices({ query: async () => Promise.reject(value) }, params, { onError })
      expect(answer.status).toBe(500)
      expect(JSON.parse(answer.body).error.message).toBe('internal error while answering the request')
    }
    await answerPrices({ query: async () => Promise.reject(new PriceStoreError('PRICE_INVALID_SYMBOL', 'bad')) }, params, { onError })
    expect(seen).toEqual(thrown)
  })

  it('503 for a store that is not open, with a fixed message', async () => {
    const answer = await answerPrices({ query: async () => Promise.reject(new PriceStoreError('PRICE_NOT_OPEN', 'db /x closed')) }, params)
    expect(answer.status).toBe(503)
    expect(answer.body).not.toContain('/x')
  })

  it('an answer that cannot be serialised is a 500 reaching onError, short or long', async () => {
    for (const length of [1, 300]) {
      const seen: unknown[] = []
      const records = Array.from({ length }, (_, i) => ({ symbol: 'BTC', value: i === length - 1 ? 1n : i }))
      const answer = await answerPrices({ query: async () => records as never }, params, { onError: (err) => seen.push(err) })
      expect(answer.status).toBe(500)
      expect(JSON.parse(answer.body).error.code).toBe('HTTP_INTERNAL_ERROR')
      expect(seen).toHaveLength(1)
      expect(seen[0]).toBeInstanceOf(TypeError)
    }
  })

  it('the content-length of a cached record is its UTF-8 length, answer after answer', async () => {
    const record = Object.freeze({ symbol: 'ünïcødé', value: 1 })
    for (let pass = 0; pass < 2; pass++) {
      const answer = await answerPrices({ query: async () => [record, record] as never }, params)
      expect(answer.body).toBe(JSON.stringify([record, record]))
      expect(answer.headers['content-length']).toBe(String(Buffer.byteLength(answer.body)))
    }
  })

  it('a stub answering with a plain value or a thenable instead of a promise is answered too', async () => {
    const plain = await answerPrices({ query: (() => [{ symbol: 'BTC' }]) as never }, params)
    const thenable = await answerPrices({ query: (() => ({ then: (ok: (v: unknown) => void) => ok([{ symbol: 'BTC' }]) })) as never }, params)
    for (const answer of [plain, thenable]) expect(answer).toMatchObject({ status: 200, body: '[{"symbol":"BTC"}]' })
  })

  it('a query that throws synchronously is answered too', async () => {
    const answer = await answerPrices({ query: () => { throw new Error('sync') } }, params)
    expect(answer.status).toBe(500)
  })
})
