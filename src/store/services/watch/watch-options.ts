import { describeValue } from '../../../errors.js'
import { checkSignal } from '../../../rules/abort.js'
import { fail } from '../../../rules/query-errors.js'
import { optionsObject, symbolList } from '../../../engine/typed-queries.js'
import type { Limits, PriceRecord } from '../../../types.js'
import { parsePortablePosition } from '../../../rules/portable-position.js'

/** Records a watcher may fall behind by before it is ended with an `overflow` item, unless configured otherwise. */
export const DEFAULT_MAX_PENDING = 10_000

/** Options of `store.watch()`. */
export interface WatchOptions {
  /** Only records of these symbols (at most `maxSymbols`); every symbol when left out. */
  readonly symbols?: readonly string[]
  /**
   * Start after this commit position: first the commits after it, replayed
   * from the store's journal, then the live ones. Left out: live commits
   * from the moment `watch()` is called. `0` replays the whole journal.
   * A portable position `'P.tag'` (an item's `position` and `commitTag`)
   * starts after `P` too, once the store has shown that it holds that very
   * commit at `P`; holding another commit there (or none), it starts with a
   * `reset` whose reason is `forked`.
   */
  readonly after?: number | string
  /**
   * The most records (matching `symbols`) that may wait for the consumer;
   * past it the watch ends with an `overflow` item (default 10,000).
   */
  readonly maxPending?: number
  /** Ends the watch: the pull in progress and every later one reject with `PRICE_ABORTED`. */
  readonly signal?: AbortSignal
}

/**
 * Where an item leaves the watcher. `commitTag` is there when the store knows the replication log's id of the
 * commit at `position`: `${position}.${commitTag}` is then a portable position for `after`, checked to name the same
 * commit on whichever store it resumes.
 */
interface ItemPosition {
  readonly position: number
  readonly commitTag?: string
}

/** The records one commit wrote that match the watch's symbols, in the batch's order (never empty). */
export interface WatchRecords extends ItemPosition {
  readonly type: 'records'
  /** The commit's position. */
  readonly position: number
  readonly records: readonly PriceRecord[]
  /**
   * Replayed commits only, when some of the commit's matching records were
   * removed by a prune (or retention) since: how many. They are left out of
   * `records`, which may then be empty; a live commit never has it.
   */
  readonly pruned?: number
}

/**
 * Commits up to `position` held no record for the watch's symbols: nothing
 * was skipped, and resuming after `position` is safe. Sent at the end of a
 * replay and every {@link PROGRESS_EVERY} such commits, so a filtered
 * watcher's resume position stays inside the journal.
 */
export interface WatchProgress extends ItemPosition {
  readonly type: 'progress'
}

/**
 * The commits after `requested` cannot be replayed: `'trimmed'` when the
 * journal no longer holds them (commits `requested + 1` to `position` are
 * not delivered; with a portable position, also when the commit at
 * `requested` is no longer there to check), `'unknown'` when `requested` is
 * past the store's newest commit (a position from another store, or one
 * that was rebuilt), `'forked'` when a portable position names a commit the
 * store does not hold at `requested` (it holds another there, or none: the
 * histories differ, and the watcher's state built from them should be read
 * again). The watch goes on with the commits after `position`.
 */
export interface WatchReset extends ItemPosition {
  readonly type: 'reset'
  readonly reason: 'trimmed' | 'unknown' | 'forked'
  readonly requested: number
}

/**
 * The last item: the consumer fell more than `maxPending` records behind.
 * Every commit up to `position` was delivered; watch again with
 * `after: position` to replay the rest from the journal.
 */
export interface WatchOverflow extends ItemPosition {
  readonly type: 'overflow'
}

/** What a watch yields. Every item's `position` is where a resumed watch should start (`after`). */
export type WatchItem = WatchRecords | WatchProgress | WatchReset | WatchOverflow

/** What `store.watch()` returns: an async iterator, also iterable with `for await`. */
export interface WatchIterator extends AsyncIterableIterator<WatchItem> {
  /** Stops watching (leaving a `for await` loop calls it): unsubscribes and releases what the watch holds. */
  return(): Promise<IteratorResult<WatchItem>>
}

/** A filtered watch reports progress after this many commits without a record for it. */
export const PROGRESS_EVERY = 256

/** Watch options, checked. */
export interface ResolvedWatchOptions {
  readonly symbols: ReadonlySet<string> | undefined
  readonly after: number | undefined
  /** The tag `after` named, as a portable position. */
  readonly afterTag: string | undefined
  readonly maxPending: number
  readonly signal: AbortSignal | undefined
}

/**
 * Checks the options of `watch()`.
 * @throws PriceStoreError `PRICE_INVALID_SYMBOL`, `PRICE_INVALID_QUERY`
 */
export function resolveWatchOptions(rawOptions: unknown, limits: Limits): ResolvedWatchOptions {
  const options = optionsObject<WatchOptions>(rawOptions)
  let symbols: ReadonlySet<string> | undefined
  if (options.symbols !== undefined) {
    const list = symbolList(options.symbols, limits)
    if (list.length === 0) throw fail('PRICE_INVALID_QUERY', 'symbols', 'symbols must name at least one symbol (leave it out to watch every symbol)')
    symbols = new Set(list)
  }
  const portable = typeof options.after === 'string' ? parsePortablePosition(options.after) : undefined
  if (typeof options.after === 'string' && portable === undefined) {
    throw fail('PRICE_INVALID_QUERY', 'after', `after must be a commit position (a safe integer >= 0) or a portable position P.tag (got ${describeValue(options.after)})`)
  }
  return Object.freeze({
    symbols,
    after: portable?.position ?? count('after', options.after, 0),
    afterTag: portable?.tag,
    maxPending: count('maxPending', options.maxPending, 1) ?? DEFAULT_MAX_PENDING,
    signal: checkSignal(options.signal),
  })
}

function count(parameter: string, value: unknown, min: number): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw fail('PRICE_INVALID_QUERY', parameter, `${parameter} must be a safe integer >= ${min} (got ${describeValue(value)})`)
  }
  return value
}
