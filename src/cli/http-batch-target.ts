import { setTimeout as sleep } from 'node:timers/promises'
import { toExactJson } from '../rules/exact-json.js'
import { PriceStoreError } from '../errors.js'
import type { NewPriceRecord } from '../types.js'
import { CliError } from './args.js'
import type { BatchTarget } from './batch-writer.js'
import { serverEndpoint } from './server-url.js'

/** How many times a batch answered 503 (busy, or the store restarting) is sent again, each after the server's retry-after. */
const BUSY_RETRIES = 5
/** The longest wait between two attempts (s), whatever retry-after says. */
const MAX_RETRY_WAIT_S = 30

/**
 * A running server as the target of `import --url`: each batch is one
 * `POST /prices` with the write token, written atomically by the server. A
 * bad record comes back as the library's `PRICE_INVALID_RECORD` error with
 * its index and field, so the import reports it by file and line as for a
 * local store; every other refusal is a plain {@link CliError}.
 */
export class HttpBatchTarget implements BatchTarget {
  /** The server's base URL, as given (for messages). */
  readonly url: string
  readonly #endpoint: string
  readonly #token: string
  readonly #tokenFile: string

  /** @throws UsageError for a URL that is not http(s) */
  constructor(url: string, token: string, tokenFile: string) {
    this.url = url
    this.#endpoint = serverEndpoint(url, '/prices')
    this.#token = token
    this.#tokenFile = tokenFile
  }

  async putMany(records: Iterable<NewPriceRecord>): Promise<number> {
    const body = toExactJson([...records])
    for (let attempt = 0; ; attempt++) {
      const res = await this.#send(body)
      const answer = (await res.json().catch(() => undefined)) as { stored?: number; error?: { code?: string; message?: string; index?: number; field?: string } } | undefined
      if (res.status === 200 && typeof answer?.stored === 'number') return answer.stored
      const retryAfter = Number(res.headers.get('retry-after'))
      if (res.status === 503 && attempt < BUSY_RETRIES) {
        await sleep(1000 * Math.min(MAX_RETRY_WAIT_S, Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 1))
        continue
      }
      throw this.#refusal(res.status, answer?.error, Buffer.byteLength(body), attempt)
    }
  }

  /** Nothing to close: each batch is its own request. */
  async close(): Promise<void> {}

  async #send(body: string): Promise<Response> {
    try {
      return await fetch(this.#endpoint, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.#token}`, 'content-type': 'application/json' },
        body,
      })
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause
      const why = cause?.code === 'ECONNREFUSED' ? 'connection refused (is "price-store serve --write-token-file FILE" running there?)' : (cause?.message ?? (err instanceof Error ? err.message : String(err)))
      throw new CliError(`cannot reach ${this.url}: ${why}`, 1, { cause: err })
    }
  }

  /** The error for a batch the server did not take. */
  #refusal(status: number, error: { code?: string; message?: string; index?: number; field?: string } | undefined, bytes: number, retries: number): Error {
    const code = error?.code ?? `HTTP ${status}`
    const message = (error?.message ?? '').replace(/; nothing was written$/, '')
    switch (status) {
      case 400:
        if ((code === 'PRICE_INVALID_RECORD' || code === 'PRICE_INVALID_SIGNATURE') && error?.index !== undefined) {
          return new PriceStoreError(code, message, { details: { index: error.index, ...(error.field === undefined ? {} : { field: error.field }) } })
        }
        return new CliError(`${this.url} refused the batch: ${message} [${code}]`, 2)
      case 401:
      case 403:
        return new CliError(`${this.url} refused the token in ${this.#tokenFile}: ${status === 401 ? 'the server found no usable bearer token' : 'it is not the server\'s write token'} [${code}]`, 2)
      case 405:
        return new CliError(`${this.url} takes no writes: start the server with --write-token-file FILE [${code}]`, 1)
      case 413:
        return new CliError(`${this.url} refused a batch of ${bytes} bytes as too large (its --max-write-bytes): use a smaller --batch-size [${code}]`, 2)
      case 503:
        return new CliError(`${this.url} is still busy after ${retries} retries: ${message} [${code}]`, 1)
      default:
        return new CliError(`${this.url} answered ${status}${message === '' ? '' : `: ${message}`} [${code}]`, 1)
    }
  }
}
