/**
 * A read copy of one primary without NATS (`serve --follow URL`): a
 * {@link ReplicationLog} whose commits are the primary's own live stream
 * (`GET /prices/stream`), so a follower runs the cluster's apply path and
 * commits each batch at the primary's position. What it gives up against a
 * stream: the primary is the only writer and its disk the only durable copy
 * (a follower holds what it applied, nothing more), and the primary's
 * journal bounds how long a follower may be away (past it: `reset`, and the
 * follower stops with `PRICE_REPLICA_DIVERGED`). It takes no writes.
 *
 * Each commit is one `prices` event, carried inline whatever its size (a
 * follower has no message limit), with the id `encodeBatch` gives its bytes;
 * the follower keeps that id with its position (`store.positionId`). A
 * primary's history can change under a follower (it went back to an older
 * backup, or another database serves at its address), so each time the
 * follower connects it asks for the stream from just before its position:
 * the primary's first event is then its commit at that position, whose id
 * the history check (history-check.ts) compares with the one the follower
 * kept. A primary behind the follower, or holding no commit where the
 * follower applied one, stops it too.
 */
import { PriceStoreError } from '../errors.js'
import { validateBatch } from '../records/validate-batch.js'
import type { Provider } from '../types.js'
import { encodeInlineCommit } from './batch-codec.js'
import type { Appended, CommitMessage, LogBounds, LogMessageAt, LogPart, ReplicationLog } from './replication-log.js'
import { readSse } from './sse-reader.js'

/** Positions whose commit on the primary this log remembers (those it delivered last): the history check asks for one of them. */
const NAMED_KEPT = 64

/** What the primary holds at a position: a commit and its id, no commit, or it cannot say (pruned or trimmed since). */
type Held = { readonly kind: 'commit'; readonly id: string } | { readonly kind: 'none' } | { readonly kind: 'unknown' }

/**
 * A `prices` event, as this log reads it. A journal trimmed up to the follower's own position reads as the commit
 * there with its records gone (`pruned`): the primary can still replay what follows, but can no longer name it.
 */
interface PricesEvent {
  readonly position: number
  readonly records: readonly unknown[]
  readonly pruned: number | undefined
}

/** Follows a primary's `/prices/stream`. */
export class HttpFollowLog implements ReplicationLog {
  readonly name: string
  readonly maxMessageBytes = Number.MAX_SAFE_INTEGER
  readonly readOnly = true
  readonly #base: string
  readonly #provider: Provider
  #connected = false
  /** What the primary held at the positions it streamed last, newest last. */
  readonly #named = new Map<number, Held>()
  /** The newest position the primary said it can no longer name: the history check passes over it. */
  #unnamed = 0

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

  async readPart(): Promise<LogPart | undefined> {
    return undefined
  }

  async bounds(): Promise<LogBounds> {
    // The primary's journal floor is not published: a position it no longer holds shows as a `reset` on the stream,
    // and one whose commit it can no longer name counts as before its first.
    return { first: this.#unnamed + 1, last: await this.lastCommit() }
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

  /**
   * The commit the primary holds at `position` now, with the id the follower gave the one it applied there.
   * Answered from what the stream delivered last, else by reading the primary's stream from just before it.
   * @throws PriceStoreError `PRICE_REPLICA_DIVERGED` when the primary holds no commit there, or is behind it
   */
  async messageAt(position: number): Promise<LogMessageAt | undefined> {
    const held = this.#named.get(position) ?? await this.#lookUp(position)
    if (held.kind === 'commit') return { kind: 'commit', id: held.id }
    if (held.kind === 'none') throw this.#noCommitAt(position)
    this.#unnamed = Math.max(this.#unnamed, position)
    return undefined
  }

  async *commits(after: number, signal: AbortSignal): AsyncIterable<CommitMessage> {
    // What an earlier connection said no longer holds: the primary may have restarted since.
    this.#named.clear()
    const stream = await this.#open(after, signal)
    this.#connected = true
    try {
      for await (const event of stream) {
        if (event.position === after) {
          // The commit the follower stands on, sent again for the history check: the applier asks for it next.
          this.#name(after, heldIn(event, this.#provider))
          continue
        }
        if (!this.#named.has(after)) {
          // The primary's first commit from the follower's position on is past it: it holds none there.
          this.#name(after, { kind: 'none' })
          throw this.#noCommitAt(after)
        }
        // A commit whose records were all pruned on the primary since: nothing to apply.
        if (event.records.length === 0) continue
        const { id, data } = encodeInlineCommit(validateBatch(event.records, this.#provider), this.#provider)
        this.#name(event.position, event.pruned === undefined ? { kind: 'commit', id } : { kind: 'unknown' })
        yield { position: event.position, provider: this.#provider.id, data, id }
      }
    } finally {
      this.#connected = false
    }
  }

  async close(): Promise<void> {}

  /**
   * The `prices` events from the one at `after` on (the commit there, if the primary holds it, comes first): the
   * stream after the position before it. A primary behind `after` is refused before anything is read.
   */
  async #open(after: number, signal: AbortSignal): Promise<AsyncIterable<PricesEvent>> {
    if (after === 0) {
      this.#name(0, { kind: 'unknown' })
    } else {
      const head = await this.lastCommit()
      if (head < after) throw this.#behind(after, head)
    }
    const from = Math.max(0, after - 1)
    const response = await fetch(`${this.#base}/prices/stream?after=${from}`, { headers: { accept: 'text/event-stream' }, signal })
    if (response.status !== 200 || response.body === null) throw new Error(`${this.#base}/prices/stream answered HTTP ${response.status}`)
    return this.#pricesEvents(response.body, after)
  }

  async *#pricesEvents(body: AsyncIterable<Uint8Array>, after: number): AsyncIterable<PricesEvent> {
    for await (const { event, data } of readSse(body)) {
      if (event === 'prices') {
        yield readPricesEvent(data, this.#base)
      } else if (event === 'reset') {
        const reset = JSON.parse(data) as { reason?: unknown; position?: unknown }
        // Trimmed up to the follower's own position: nothing it needs is gone, only the commit to compare.
        if (reset.reason === 'trimmed' && typeof reset.position === 'number' && reset.position <= after) {
          yield { position: after, records: [], pruned: 0 }
          continue
        }
        if (reset.reason === 'unknown' && typeof reset.position === 'number') throw this.#behind(after, reset.position)
        throw new PriceStoreError('PRICE_REPLICA_DIVERGED',
          `the primary ${this.#base} cannot replay its commits after position ${after} (${data}): re-seed this follower from a backup of the primary`,
          { details: { position: after } })
      } else if (event === 'overflow' || event === 'end') {
        // The primary cut the stream (this follower fell too far behind, or it is stopping): follow it again.
        throw new Error(`the primary ${this.#base} ended the stream: ${data}`)
      }
    }
  }

  /** What the primary holds at `position`, read from its stream (one event) when the live one has not said. */
  async #lookUp(position: number): Promise<Held> {
    if (position === 0) return { kind: 'unknown' }
    const done = new AbortController()
    try {
      for await (const event of await this.#open(position, done.signal)) {
        if (event.position >= position) return event.position === position ? heldIn(event, this.#provider) : { kind: 'none' }
      }
      return this.#named.get(position) ?? { kind: 'unknown' }
    } finally {
      done.abort()
    }
  }

  /** Remembers what the primary held at `position`, keeping the newest {@link NAMED_KEPT}. */
  #name(position: number, held: Held): void {
    this.#named.delete(position)
    this.#named.set(position, held)
    for (const old of this.#named.keys()) {
      if (this.#named.size <= NAMED_KEPT) break
      this.#named.delete(old)
    }
  }

  #noCommitAt(position: number): PriceStoreError {
    return changed(position, `the primary ${this.#base} now holds no commit at position ${position}, where this follower applied one`)
  }

  #behind(position: number, head: number): PriceStoreError {
    return changed(position, `the primary ${this.#base} is at position ${head}, behind this follower's ${position}`)
  }
}

/** What a `prices` event says the primary holds at its position: its id, unless records were pruned from it since. */
function heldIn(event: PricesEvent, provider: Provider): Held {
  if (event.pruned !== undefined) return { kind: 'unknown' }
  return { kind: 'commit', id: encodeInlineCommit(validateBatch(event.records, provider), provider).id }
}

/** A primary whose history is not the one the follower applied. */
function changed(position: number, what: string): PriceStoreError {
  return new PriceStoreError('PRICE_REPLICA_DIVERGED',
    `${what}: its history changed (it went back to an older backup, or another database serves at its address). This follower stopped applying so that it does not hold records the primary does not. Re-seed it from a backup of the primary (price-store backup), then start it again`,
    { details: { position } })
}

/**
 * A `prices` event's data.
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` when it is not one price-store writes
 */
function readPricesEvent(data: string, primary: string): PricesEvent {
  let event: { position?: unknown; records?: unknown; pruned?: unknown }
  try {
    event = JSON.parse(data) as typeof event
  } catch (err) {
    throw malformed(primary, err)
  }
  const { position, records, pruned } = event ?? {}
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 1 || !Array.isArray(records) || (pruned !== undefined && typeof pruned !== 'number')) {
    throw malformed(primary, undefined)
  }
  return { position, records, pruned }
}

function malformed(primary: string, cause: unknown): PriceStoreError {
  return new PriceStoreError('PRICE_CORRUPT_VALUE', `the primary ${primary} sent a prices event that is not one price-store writes`, { cause })
}

function readOnly(): PriceStoreError {
  return new PriceStoreError('PRICE_LOG_UNAVAILABLE', 'a follower takes no writes: write to its primary')
}
