/**
 * A read copy of one primary without NATS (`serve --follow URL`): a
 * {@link ReplicationLog} whose commits are the primary's own live stream
 * (`GET /prices/stream`), so a follower runs the cluster's apply path and
 * commits each batch at the primary's position. What it gives up against a
 * stream: the primary is the only writer and its disk the only durable copy
 * (a follower holds what it applied, nothing more), and the primary's
 * journal bounds how long a follower may be away (past it: `reset`, and the
 * follower stops with `PRICE_REPLICA_DIVERGED`). It takes no writes.
 */
import { PriceStoreError } from '../errors.js'
import { validateBatch } from '../records/validate-batch.js'
import type { Provider } from '../types.js'
import { encodeBatch } from './batch-codec.js'
import type { Appended, CommitMessage, LogBounds, ReplicationLog } from './replication-log.js'
import { readSse } from './sse-reader.js'

/** Follows a primary's `/prices/stream`. */
export class HttpFollowLog implements ReplicationLog {
  readonly name: string
  readonly maxMessageBytes = Number.MAX_SAFE_INTEGER
  readonly #base: string
  readonly #provider: Provider
  #connected = false

  /**
   * @param primary the primary's base URL (`http://host:9000`, or with its `basePath`)
   * @param provider the provider of the follower's store, which must be the primary's
   */
  constructor(primary: string, provider: Provider) {
    this.#base = primary.replace(/\/+$/, '')
    this.name = this.#base
    this.#provider = provider
  }

  get connected(): boolean {
    return this.#connected
  }

  appendPart(): Promise<Appended> {
    return Promise.reject(readOnly())
  }

  appendCommit(): Promise<Appended> {
    return Promise.reject(readOnly())
  }

  async readPart(): Promise<Uint8Array | undefined> {
    return undefined
  }

  async bounds(): Promise<LogBounds> {
    // The primary's journal floor is not published: a position it no longer holds shows as a `reset` on the stream.
    return { first: 1, last: await this.lastCommit() }
  }

  async lastCommit(): Promise<number> {
    const response = await fetch(`${this.#base}/health`, { headers: { accept: 'application/json' } })
    const report = (await response.json()) as { position?: unknown }
    if (typeof report.position !== 'number') throw new Error(`${this.#base}/health gave no position (HTTP ${response.status})`)
    return report.position
  }

  async startAt(): Promise<void> {
    throw new PriceStoreError('PRICE_REPLICA_DIVERGED', `this store holds commits and the primary ${this.#base} holds none: a follower starts empty or from a backup of the primary`)
  }

  async *commits(after: number, signal: AbortSignal): AsyncIterable<CommitMessage> {
    const response = await fetch(`${this.#base}/prices/stream?after=${after}`, { headers: { accept: 'text/event-stream' }, signal })
    if (response.status !== 200 || response.body === null) throw new Error(`${this.#base}/prices/stream answered HTTP ${response.status}`)
    this.#connected = true
    try {
      for await (const { event, data } of readSse(response.body)) {
        if (event === 'prices') {
          const { position, records } = JSON.parse(data) as { position: number; records: unknown[] }
          // A commit whose records were all pruned on the primary since: nothing to apply.
          if (records.length === 0) continue
          const batch = encodeBatch(validateBatch(records, this.#provider), this.#provider, this.maxMessageBytes)
          yield { position, provider: this.#provider.id, data: batch.inline as Uint8Array }
        } else if (event === 'reset') {
          throw new PriceStoreError('PRICE_REPLICA_DIVERGED',
            `the primary ${this.#base} cannot replay its commits after position ${after} (${data}): re-seed this follower from a backup of the primary`,
            { details: { position: after } })
        } else if (event === 'overflow' || event === 'end') {
          // The primary cut the stream (this follower fell too far behind, or it is stopping): follow it again.
          throw new Error(`the primary ${this.#base} ended the stream: ${data}`)
        }
      }
    } finally {
      this.#connected = false
    }
  }

  async close(): Promise<void> {}
}

function readOnly(): PriceStoreError {
  return new PriceStoreError('PRICE_LOG_UNAVAILABLE', 'a follower takes no writes: write to its primary')
}
