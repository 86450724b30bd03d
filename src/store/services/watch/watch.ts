/**
 * `store.watch()`: the commits after a position, replayed from the journal,
 * then the live ones, with no gap and no repeat at the switch.
 *
 * At its first pull a watch takes, in one synchronous step, a read view (a
 * snapshot and the open area), the store's head position, and its place
 * among the live watchers. Every commit up to the head is then in the view
 * (a commit's memory step takes in its rows and moves the head together),
 * and every later one reaches the watcher live. So the watch replays the
 * journal entries in (after, head] from the view's snapshot, resolving each
 * listed record through the view, while live commits wait in its queue.
 * The snapshot may hold a commit past the head whose memory step has not
 * run yet; the replay stops at the head, and that commit arrives live.
 */
import type { AbstractIterator } from 'abstract-level'
import { PriceStoreError } from '../../../errors.js'
import { abortError } from '../../../rules/abort.js'
import { readJournalCommitId, readJournalEntry } from '../../../keys/journal-codec.js'
import type { JournalRecord } from '../../../keys/journal-codec.js'
import { describeJournal, journalKey, readJournalKey } from '../../../keys/key-layout.js'
import type { Limits, PriceRecord } from '../../../types.js'
import { lastOfEachKey } from './commit-notice.js'
import type { CommitNotice } from './commit-notice.js'
import { undecodable } from '../../../keys/entry-errors.js'
import type { BytesSublevel } from '../../db/sublevels.js'
import type { StoreLife } from '../../lifecycle/store-life.js'
import type { ReadView } from '../../read/read-view.js'
import type { StoreReader } from '../../read/store-reader.js'
import { journalCommitId, readJournalFloor, type CommitJournal } from './commit-journal.js'
import { toStorageError } from '../../db/storage-errors.js'
import type { Subscriber, WatchHub } from './watch-hub.js'
import { PROGRESS_EVERY } from './watch-options.js'
import { tagOf } from '../../../rules/portable-position.js'
import { resolveWatchOptions } from './watch-options.js'
import type { ResolvedWatchOptions, WatchItem, WatchIterator, WatchOptions } from './watch-options.js'

/** Journal entries read per round trip while replaying. */
const REPLAY_BATCH = 16

/** What a watch needs from its store. */
export interface WatchContext {
  /**
   * Takes a view, reads the head position and subscribes `subscriber` to
   * live commits, in one synchronous step; `undefined` once the store is
   * closing or closed.
   */
  start(subscriber: Subscriber): { readonly view: ReadView; readonly head: number; readonly headId: string | undefined } | undefined
  readonly journal: BytesSublevel
  /** Holds the journal's floor (see commit-journal.ts). */
  readonly meta: BytesSublevel
  readonly hub: WatchHub
}

/** What `store.watch()` starts a watch from. */
export interface WatchSource {
  readonly life: StoreLife
  readonly reader: StoreReader
  readonly hub: WatchHub
  readonly journal: CommitJournal
  /** The journal's sublevel is replayed from a view's snapshot. */
  readonly levels: { readonly journal: BytesSublevel; readonly meta: BytesSublevel }
}

/**
 * `store.watch()`: checks the options, then makes a watch whose first pull
 * takes its view, head and place among the live watchers in one step.
 * @throws PriceStoreError (synchronously) for bad options or a store that is not open
 */
export function startWatch(source: WatchSource, options: WatchOptions, limits: Limits): WatchIterator {
  const { life, reader, hub, journal } = source
  const resolved = resolveWatchOptions(options, limits)
  life.assertOpen()
  return new Watch({
    start: (subscriber) => {
      if (life.status !== 'open') return undefined
      const view = reader.view()
      hub.subscribe(subscriber)
      return { view, head: journal.head, headId: journal.headId }
    },
    journal: source.levels.journal,
    meta: source.levels.meta,
    hub,
  }, resolved, journal.head)
}

/** A live commit waiting for the consumer, with the indices of its rows that match (all when `undefined`). */
interface Queued {
  readonly notice: CommitNotice
  readonly indices: readonly number[] | undefined
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/** One watcher: an async iterator of {@link WatchItem}s. */
export class Watch implements WatchIterator, Subscriber {
  readonly #context: WatchContext
  readonly #options: ResolvedWatchOptions
  /** The position the watch starts after. */
  readonly #after: number
  #phase: 'idle' | 'replay' | 'live' | 'ended' = 'idle'
  /** True once the watch ended because its signal aborted: every pull rejects. */
  #aborted = false
  /** An item to give before anything else (a reset for a position past the head). */
  #prelude: WatchItem | undefined
  /** The head taken at the start: replay covers (after, head]. */
  #head = 0
  /** The tag of the head's commit id, when it has one. */
  #headTag: string | undefined
  #view: ReadView | undefined
  #entries: AbstractIterator<any, Uint8Array, Uint8Array> | undefined
  #buffered: [Uint8Array, Uint8Array][] = []
  #queue: Queued[] = []
  #queueStart = 0
  /** Records waiting in the queue. */
  #pending = 0
  /** The position of the last item given (or where the watch started), and its commit's tag when known. */
  #delivered = 0
  #deliveredTag: string | undefined
  /** The newest position known to hold nothing for the watch's symbols, and its commit's tag when known. */
  #skipped = 0
  #skippedTag: string | undefined
  #overflow = false
  /** The store closed: end once the queue is given. */
  #closed = false
  #failure: PriceStoreError | undefined
  #wake: (() => void) | undefined
  #chain: Promise<unknown> = Promise.resolve()
  readonly #onAbort = (): void => {
    this.#aborted = true
    this.#phase = 'ended'
    this.#wake?.()
    void this.#release()
  }

  /** @param head the store's head when `watch()` was called: where a watch without `after` starts */
  constructor(context: WatchContext, options: ResolvedWatchOptions, head: number) {
    this.#context = context
    this.#options = options
    this.#after = options.after ?? head
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<WatchItem>> {
    // The first pull starts the watch at once, not after a tick: a close() called next must find it subscribed.
    if (this.#phase === 'idle') {
      try {
        this.#begin()
      } catch (err) {
        this.#phase = 'ended'
        return Promise.reject(toStorageError(err, 'start watching'))
      }
    }
    const step = this.#chain.then(() => this.#step())
    this.#chain = step.catch(() => {})
    return step
  }

  /** Stops watching (a `break` out of `for await` calls it): unsubscribes and releases the view. */
  async return(): Promise<IteratorResult<WatchItem>> {
    this.#phase = 'ended'
    this.#wake?.()
    await this.#release()
    return DONE
  }

  deliver(notice: CommitNotice): void {
    if (this.#phase === 'ended' || this.#overflow) return
    const { symbols, maxPending } = this.#options
    const indices = symbols === undefined ? undefined : notice.select(symbols)
    const count = indices?.length ?? notice.rows.length
    if (count === 0) {
      this.#skip(notice.position, notice.commitTag)
      if (this.#skipped - this.#delivered >= PROGRESS_EVERY) this.#wake?.()
      return
    }
    // One commit larger than the bound still passes when nothing else waits: it is in memory anyway.
    if (this.#pending > 0 && this.#pending + count > maxPending) {
      this.#overflow = true
      this.#queue = []
      this.#queueStart = 0
      this.#pending = 0
      this.#context.hub.unsubscribe(this)
    } else {
      this.#queue.push({ notice, indices })
      this.#pending += count
    }
    this.#wake?.()
  }

  end(error?: PriceStoreError): void {
    if (error === undefined) this.#closed = true
    else this.#failure = error
    this.#wake?.()
  }

  async #step(): Promise<IteratorResult<WatchItem>> {
    const { signal } = this.#options
    for (;;) {
      if (signal?.aborted === true && !this.#aborted && this.#phase !== 'ended') this.#onAbort()
      if (this.#aborted) throw abortError(signal as AbortSignal)
      if (this.#phase === 'ended') return DONE
      if (this.#prelude !== undefined) {
        const item = this.#prelude
        this.#prelude = undefined
        return this.#give(item)
      }
      if (this.#phase === 'replay') {
        // Cut short, a replay must not be followed by live commits: they would leave a gap.
        if (this.#closed || this.#failure !== undefined || this.#overflow) return this.#finish()
        let item: WatchItem | undefined
        try {
          item = await this.#replayNext()
        } catch (err) {
          if (this.#aborted || this.#stopped() || this.#closed) continue
          await this.#release()
          this.#phase = 'ended'
          throw toStorageError(err, 'replay the commit journal')
        }
        if (this.#stopped()) continue
        if (item !== undefined) return this.#give(item)
        await this.#closeReplay()
        this.#phase = 'live'
        if (this.#skipped > this.#delivered && this.#queueStart === this.#queue.length) return this.#give(this.#progress())
        continue
      }
      const queued = this.#queue[this.#queueStart]
      if (queued !== undefined) return this.#give(this.#take(queued))
      if (this.#overflow || this.#failure !== undefined || this.#closed) return this.#finish()
      if (this.#skipped - this.#delivered >= PROGRESS_EVERY) return this.#give(this.#progress())
      await new Promise<void>((resolve) => (this.#wake = resolve))
      this.#wake = undefined
    }
  }

  /** Whether the watch was ended (returned or aborted) while an await was pending; checked again after each. */
  #stopped(): boolean {
    return this.#phase === 'ended'
  }

  #begin(): void {
    const started = this.#context.start(this)
    if (started === undefined) {
      // Pulled first after the store began closing: a watch ends with its store.
      this.#phase = 'ended'
      return
    }
    const { view, head, headId } = started
    this.#head = head
    this.#headTag = tagOf(headId)
    this.#delivered = this.#skipped = this.#after
    this.#deliveredTag = this.#skippedTag = this.#options.afterTag
    this.#options.signal?.addEventListener('abort', this.#onAbort, { once: true })
    if (this.#after > head) this.#prelude = this.#resetToHead('unknown')
    // A portable position at the head is checked here; one before it, by the replay against the journal's entry.
    else if (this.#after === head && this.#options.afterTag !== undefined && this.#options.afterTag !== this.#headTag) this.#prelude = this.#resetToHead('forked')
    if (this.#after >= head) {
      this.#phase = 'live'
      void view.close().catch(() => {})
    } else {
      this.#phase = 'replay'
      this.#view = view
    }
  }

  /** The next replayed item, or `undefined` once the replay reached the head. */
  async #replayNext(): Promise<WatchItem | undefined> {
    const view = this.#view as ReadView
    if (this.#entries === undefined) {
      const { journal, meta } = this.#context
      const [first] = await journal.keys({ limit: 1, ...view.readOptions }).all()
      const floor = await readJournalFloor(meta, view.readOptions, first === undefined ? this.#head + 1 : readJournalKey(first))
      if (this.#view === undefined) return undefined
      const named = await this.#namedCommit(view, floor)
      if (this.#view === undefined) return undefined
      // Forked: nothing is replayed, (head, head] being empty; the watch goes on live from the head.
      const from = named === 'forked' ? this.#head : Math.max(this.#after, floor)
      this.#entries = journal.iterator({ gt: journalKey(from), lte: journalKey(this.#head), ...view.readOptions })
      if (named === 'forked') return this.#resetToHead('forked')
      if (from > this.#after || named === 'trimmed') return { type: 'reset', reason: 'trimmed', requested: this.#after, position: from }
    }
    for (;;) {
      let entry = this.#buffered.shift()
      if (entry === undefined) {
        this.#buffered = await this.#entries.nextv(REPLAY_BATCH)
        if (this.#view === undefined) return undefined
        entry = this.#buffered.shift()
        if (entry === undefined) return undefined
      }
      const position = readJournalKey(entry[0])
      const { records, pruned, commitTag } = this.#resolve(view, position, entry[1])
      const at = commitTag === undefined ? { position } : { position, commitTag }
      if (pruned > 0) return { type: 'records', ...at, records, pruned }
      if (records.length > 0) return { type: 'records', ...at, records }
      this.#skip(position, commitTag)
    }
  }

  /**
   * The records a journal entry lists that match the watch, read through
   * the view, and how many of them a prune has removed since (the journal
   * keeps keys, so a pruned record is no longer there to replay).
   */
  #resolve(view: ReadView, position: number, entry: Uint8Array): { records: PriceRecord[]; pruned: number; commitTag: string | undefined } {
    let keys: JournalRecord[]
    let commitTag: string | undefined
    try {
      keys = lastOfEachKey(readJournalEntry(entry))
      commitTag = tagOf(readJournalCommitId(entry))
    } catch (err) {
      throw undecodable(describeJournal(position), err)
    }
    const { symbols } = this.#options
    const records: PriceRecord[] = []
    let pruned = 0
    for (const key of keys) {
      if (symbols !== undefined && !symbols.has(key.symbol)) continue
      const row = view.row(key.symbol, key.timestamp, key.id)
      if (row === undefined) pruned++
      else records.push(row.decode())
    }
    return { records, pruned, commitTag }
  }

  /**
   * Whether the journal holds the commit a portable `after` names: `'forked'` when it holds another commit at that
   * position, or none though its entries reach back past it; `'trimmed'` when its entry may have been trimmed;
   * `'held'` when it is there (and for a plain position, which names no commit).
   */
  async #namedCommit(view: ReadView, floor: number): Promise<'held' | 'forked' | 'trimmed'> {
    const tag = this.#options.afterTag
    if (tag === undefined) return 'held'
    const entry = await this.#context.journal.get(journalKey(this.#after) as never, view.readOptions as never) as Uint8Array | undefined
    if (entry === undefined) return this.#after <= floor ? 'trimmed' : 'forked'
    return tagOf(journalCommitId(this.#after, entry)) === tag ? 'held' : 'forked'
  }

  /** A reset to the head taken at the start: the watch goes on with the commits after it. */
  #resetToHead(reason: 'unknown' | 'forked'): WatchItem {
    this.#skipped = this.#head
    this.#skippedTag = this.#headTag
    return { type: 'reset', reason, requested: this.#after, ...this.#at(this.#head, this.#headTag) }
  }

  #progress(): WatchItem {
    return { type: 'progress', ...this.#at(this.#skipped, this.#skippedTag) }
  }

  /** A position known to hold nothing for the watch. */
  #skip(position: number, commitTag: string | undefined): void {
    if (position <= this.#skipped) return
    this.#skipped = position
    this.#skippedTag = commitTag
  }

  /** An item's position and, when known, its commit's tag. */
  #at(position: number, commitTag: string | undefined): { position: number; commitTag?: string } {
    return commitTag === undefined ? { position } : { position, commitTag }
  }

  #take(queued: Queued): WatchItem {
    this.#queue[this.#queueStart++] = undefined as unknown as Queued
    if (this.#queueStart === this.#queue.length) {
      this.#queue = []
      this.#queueStart = 0
    } else if (this.#queueStart >= 1024 && this.#queueStart * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#queueStart)
      this.#queueStart = 0
    }
    const { notice, indices } = queued
    const records = indices === undefined ? notice.rows.map((_, index) => notice.record(index)) : indices.map((index) => notice.record(index))
    this.#pending -= records.length
    return { type: 'records', ...this.#at(notice.position, notice.commitTag), records }
  }

  #give(item: WatchItem): IteratorYieldResult<WatchItem> {
    if (item.type !== 'overflow') {
      this.#delivered = item.position
      this.#deliveredTag = item.commitTag
    }
    if (item.type === 'records') Object.freeze(item.records)
    return { done: false, value: Object.freeze(item) }
  }

  /** Ends the watch for the reason at hand: an overflow item, the failure, or done. */
  async #finish(): Promise<IteratorResult<WatchItem>> {
    this.#phase = 'ended'
    await this.#release()
    if (this.#overflow) return { done: false, value: Object.freeze({ type: 'overflow', ...this.#at(this.#delivered, this.#deliveredTag) }) }
    if (this.#failure !== undefined) throw this.#failure
    return DONE
  }

  async #closeReplay(): Promise<void> {
    const entries = this.#entries
    const view = this.#view
    this.#entries = undefined
    this.#view = undefined
    this.#buffered = []
    await entries?.close().catch(() => {})
    await view?.close().catch(() => {})
  }

  async #release(): Promise<void> {
    this.#context.hub.unsubscribe(this)
    this.#options.signal?.removeEventListener('abort', this.#onAbort)
    this.#queue = []
    this.#queueStart = 0
    this.#pending = 0
    await this.#closeReplay()
  }
}
