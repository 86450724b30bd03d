/**
 * The feed catalogue (`store.feeds()`, `GET /feeds`, `price-store feeds`):
 * per symbol its decimals, first and last timestamp, record count, observed
 * heartbeat, sources (provider, service, signers), the signature verdicts
 * of its newest records, and a status (live, stale, retired) at `now`.
 *
 * Built from one view in two parts. What the data decides (everything but
 * the status) is built once per state of the store, keyed on its commit
 * `position` and its read-state version (bumped by a seal or a prune, which
 * commit nothing but may remove records), and kept: requests between two
 * commits reuse it, and concurrent requests share one build. What the clock
 * decides (age, status) and the page are computed per request from it, in
 * O(page) (O(symbols) with a `status` filter).
 *
 * The per-symbol counts come from `readStats` (heads entries, no record
 * read); the heartbeat, decimals and verdicts from the newest
 * {@link FEED_SAMPLE} records of each symbol, read from the chunks' key
 * columns (timestamp, id, value: no record body decoded) and, for the
 * verdicts, the verdict groups of the hours they span.
 */
import { nearestRank } from '../../engine/quality/order-statistics.js'
import { describeValue } from '../../errors.js'
import { throwIfAborted } from '../../rules/abort.js'
import { fail } from '../../rules/query-errors.js'
import type { OverallVerdict, RecordVerdict } from '../../trust/verdict.js'
import type { Provider } from '../../types.js'
import type { HeadsIndex, SealedCounts } from '../heads/heads-index.js'
import type { ReadState } from '../read/read-state.js'
import type { ReadView } from '../read/read-view.js'
import type { StoreReader } from '../read/store-reader.js'
import type { Row } from '../rows/row.js'
import type { VerdictIndex } from '../signatures/verdict-index.js'
import { readStats } from './stats.js'

/** Records read from the newest end of each symbol for its heartbeat, decimals and verdicts. */
export const FEED_SAMPLE = 32
/** Feeds per page when `limit` is left out. */
export const DEFAULT_FEED_LIMIT = 100
/** The largest `limit`. */
export const MAX_FEED_LIMIT = 1000
/** `staleAfter` when left out: a feed is stale past 3 heartbeats (as feed quality's default gap threshold). */
export const DEFAULT_STALE_AFTER = 3
/** `retiredAfter` when left out: 7 days. */
export const DEFAULT_RETIRED_AFTER = 7 * 86_400_000

/** A feed's status at `now` (docs/semantics.md, "Feed catalogue"). */
export type FeedStatus = 'live' | 'stale' | 'retired'

const STATUSES: readonly FeedStatus[] = ['live', 'stale', 'retired']

/** Options of `store.feeds()`. */
export interface FeedOptions {
  /** Feeds per page: 1 to 1,000 (default 100). */
  readonly limit?: number
  /** The `next` of the page before (opaque); the first page when left out or empty. */
  readonly cursor?: string
  /** Only feeds of this status. */
  readonly status?: FeedStatus
  /** Ages and statuses as of this time (ms since the epoch; default the clock when called). */
  readonly now?: number
  /** A feed is `stale` once its newest record is older than this many heartbeats (default 3; a number above 0). */
  readonly staleAfter?: number
  /** A feed is `retired` once its newest record is older than this (ms, at least 1; default 7 days). */
  readonly retiredAfter?: number
  readonly signal?: AbortSignal
}

/** Records of a feed's sample by the verdict kept at ingest; `unchecked`: none kept (written while verification was off). */
export type FeedVerdicts = Record<OverallVerdict, number> & { readonly unchecked: number }

/** Where a feed's records come from: one provider's, of one data service (`null`: not recorded), checked against these signers. */
export interface FeedSource {
  /** The provider's `id` (see the catalogue's `providers`). */
  readonly provider: string
  /** The data service, once stores record it (`null` until then). */
  readonly service: string | null
  /** The EVM addresses the store allows to sign lite signatures (`signatures.evmSigners`, lower-case); the provider's own key signs `signature`. */
  readonly signers: readonly string[]
}

/** One symbol of the catalogue. */
export interface FeedEntry {
  readonly symbol: string
  /** `live`, `stale` or `retired` at the catalogue's `now`. */
  readonly status: FeedStatus
  /** The most decimal places among the sample's values, each written in its shortest form of at most 15 significant digits. */
  readonly decimals: number
  /** Records stored. */
  readonly records: number
  readonly firstTimestamp: number
  readonly lastTimestamp: number
  /** `now − lastTimestamp` (ms; negative for a record in the future). */
  readonly age: number
  /** The observed heartbeat: the lower median gap between the sample's distinct timestamps (ms); `null` with fewer than two. */
  readonly heartbeat: number | null
  /** `staleAfter × heartbeat` (ms): older than this, the feed is stale; `null` without a heartbeat (the feed is then stale). */
  readonly staleAfterMs: number | null
  /** Records in the sample (the newest, at most {@link FEED_SAMPLE}). */
  readonly sample: number
  /** The sample's records by their kept verdict. */
  readonly verdicts: FeedVerdicts
  /** Where its records come from: today the store's one provider. */
  readonly sources: readonly FeedSource[]
}

/** A page of the catalogue. */
export interface FeedCatalogue {
  /** The commit position the catalogue describes. */
  readonly position: number
  readonly now: number
  /** The thresholds the statuses were decided by: heartbeats, then ms. */
  readonly staleAfter: number
  readonly retiredAfter: number
  /** Feeds in the store (whatever the page and `status`). */
  readonly total: number
  /** The providers the feeds' sources name. */
  readonly providers: readonly Provider[]
  /** The page, in the store's symbol order (UTF-8 bytes). */
  readonly feeds: readonly FeedEntry[]
  /** The cursor of the next page; `null` on the last. */
  readonly next: string | null
}

/** What `store.feeds()` reads. */
export interface FeedsSource {
  readonly life: { assertOpen(): void }
  readonly reader: StoreReader
  readonly heads: HeadsIndex
  readonly state: ReadState
  readonly verdicts: VerdictIndex
  readonly journal: { readonly head: number }
  readonly options: { readonly provider: Provider; readonly signatures: { readonly evmSigners: readonly string[] } }
}

/** What the data decides of a feed: everything but the status and the age. */
type FeedFacts = Omit<FeedEntry, 'status' | 'age' | 'staleAfterMs'>

/** The catalogue of one state of the store. */
interface Built {
  readonly position: number
  readonly providers: readonly Provider[]
  readonly feeds: readonly FeedFacts[]
  /** The symbols, as UTF-8, for the cursor's search. */
  readonly keys: readonly Buffer[]
}

/** Per store (its parts), the catalogue of its latest state asked for, and whether it is still being read. */
const cache = new WeakMap<FeedsSource, { readonly key: string; readonly built: Promise<Built>; done: boolean }>()

/** How many catalogues were built, for tests and the benchmark (a cached answer builds none). */
export const feedBuilds = { count: 0 }

/**
 * `store.feeds(options)`: a page of the catalogue.
 * @throws PriceStoreError `PRICE_INVALID_QUERY` (details.parameter names the option), `PRICE_NOT_OPEN`,
 *   `PRICE_ABORTED`, `PRICE_CORRUPT_VALUE`
 */
export async function storeFeeds(source: FeedsSource, rawOptions: FeedOptions = {}): Promise<FeedCatalogue> {
  const options = checkFeedOptions(rawOptions)
  throwIfAborted(options.signal)
  source.life.assertOpen()
  const built = await catalogueOf(source)
  throwIfAborted(options.signal)
  return pageOf(built, options)
}

/**
 * The catalogue of the store's state now: the kept one when nothing was committed, sealed or pruned since. One
 * build at a time per store: a request that finds an older state still being read waits for it, then looks again
 * (so a burst of commits and requests never runs builds side by side).
 */
async function catalogueOf(source: FeedsSource): Promise<Built> {
  for (;;) {
    // Read in one synchronous step with the view `build` takes: a commit updates both in one step too.
    const key = `${source.journal.head}:${source.state.version}`
    const kept = cache.get(source)
    if (kept !== undefined && kept.key === key) return kept.built
    if (kept !== undefined && !kept.done) {
      await kept.built.catch(() => undefined)
      continue
    }
    const entry = { key, built: build(source), done: false }
    cache.set(source, entry)
    entry.built.then(
      () => { entry.done = true },
      // A failed build (the store closing, a damaged entry) is not kept.
      () => { if (cache.get(source) === entry) cache.delete(source) },
    )
    return entry.built
  }
}

/** Reads the catalogue from one view. Not abortable: concurrent requests share it. */
async function build(source: FeedsSource): Promise<Built> {
  const position = source.journal.head
  const { provider } = source.options
  const signers = Object.freeze([...new Set(source.options.signatures.evmSigners)].sort())
  const sources = Object.freeze([Object.freeze({ provider: provider.id, service: null, signers })])
  const feeds = await source.reader.read('read the feed catalogue', async (view) => {
    const stats = await readStats(view, source.heads, provider, undefined, await sealedCountsOf(source, view))
    const facts: FeedFacts[] = []
    for (const symbol of stats.perSymbol) {
      const rows = await newestRows(view, symbol.symbol)
      facts.push(Object.freeze({
        symbol: symbol.symbol,
        decimals: decimalsOf(rows),
        records: symbol.records,
        firstTimestamp: symbol.firstTimestamp,
        lastTimestamp: symbol.lastTimestamp,
        heartbeat: heartbeatOf(rows.map((row) => row.timestamp)),
        sample: rows.length,
        verdicts: await verdictsOf(source.verdicts, view, symbol.symbol, rows),
        sources,
      }))
    }
    return facts
  })
  feedBuilds.count++
  return Object.freeze({
    position,
    providers: Object.freeze([Object.freeze({ name: provider.name, id: provider.id, publicKey: provider.publicKey })]),
    feeds: Object.freeze(feeds),
    keys: feeds.map((feed) => Buffer.from(feed.symbol, 'utf8')),
  })
}

/** Per store, the sealed hours' counts of one version of its sealed data (seals and prunes change it; commits do not). */
const sealedCache = new WeakMap<FeedsSource, { readonly version: number; readonly counts: SealedCounts }>()

/**
 * The sealed hours' counts for `view` (just taken): those kept for the store's sealed data when it has not changed
 * since, else read from the heads index (the larger part of a build) and kept, when no seal or prune was under way as
 * the view was taken (then its snapshot holds exactly the sealed data of the current version).
 */
async function sealedCountsOf(source: FeedsSource, view: ReadView): Promise<SealedCounts> {
  const { version, settled } = source.state
  const kept = sealedCache.get(source)
  if (settled && kept?.version === version) return kept.counts
  const counts = await source.heads.sealedCounts(view.readOptions, undefined)
  if (settled) sealedCache.set(source, { version, counts })
  return counts
}

/** The newest {@link FEED_SAMPLE} rows of `symbol`, newest first, from the key columns. */
async function newestRows(view: ReadView, symbol: string): Promise<Row[]> {
  const rows: Row[] = []
  for await (const batch of view.scan(symbol, { reverse: true, limit: FEED_SAMPLE, refs: true })) rows.push(...(batch as Row[]))
  return rows
}

/**
 * The lower median (the ⌈n/2⌉-th smallest) of the gaps between consecutive distinct timestamps, as feed quality
 * defines a symbol's median gap; `null` without a gap.
 */
export function heartbeatOf(timestamps: readonly number[]): number | null {
  const distinct = [...new Set(timestamps)].sort((a, b) => a - b)
  if (distinct.length < 2) return null
  const gaps = new Float64Array(distinct.length - 1)
  for (let i = 1; i < distinct.length; i++) gaps[i - 1] = (distinct[i] as number) - (distinct[i - 1] as number)
  return nearestRank(gaps, gaps.length, 0.5)
}

/** The most decimal places among the rows' values (see {@link decimalPlaces}); 0 without a numeric value. */
function decimalsOf(rows: readonly Row[]): number {
  let most = 0
  for (const row of rows) {
    const { value } = row.ref()
    if (typeof value === 'number') most = Math.max(most, decimalPlaces(value))
  }
  return most
}

/**
 * The decimal places of `value` written in its shortest form with at most 15 significant digits (what a double
 * holds exactly), so binary noise does not count (`10 + 7 / 100` is `10.070000000000001`, 2 places): `65000` 0,
 * `0.25` 2, `1e-7` 7, `1.5e-7` 8, `1e21` 0; 0 for a value that is not finite.
 */
export function decimalPlaces(value: number): number {
  if (!Number.isFinite(value)) return 0
  const [mantissa = '', exponent = '0'] = String(Math.abs(Number(value.toPrecision(15)))).split('e')
  const fraction = mantissa.split('.')[1]?.length ?? 0
  return Math.max(0, fraction - Number(exponent))
}

/** The sample's records by the verdict kept for each (`unchecked` when none is kept). */
async function verdictsOf(verdicts: VerdictIndex, view: ReadView, symbol: string, rows: readonly Row[]): Promise<FeedVerdicts> {
  const counts = { valid: 0, unsigned: 0, invalid: 0, malformed: 0, 'signer-not-allowed': 0, unchecked: 0 }
  if (!verdicts.mayHold(symbol)) return Object.freeze({ ...counts, unchecked: rows.length })
  if (rows.length === 0) return Object.freeze(counts)
  const kept = new Map<string, RecordVerdict>()
  const from = (rows[rows.length - 1] as Row).timestamp
  const to = (rows[0] as Row).timestamp
  for await (const page of verdicts.read(view, symbol, from, to)) {
    for (const { timestamp, id, verdict } of page) kept.set(`${timestamp}:${id}`, verdict)
  }
  for (const row of rows) {
    const verdict = kept.get(`${row.timestamp}:${row.id}`)
    if (verdict === undefined) counts.unchecked++
    else counts[verdict.overall]++
  }
  return Object.freeze(counts)
}

/** The options checked, with their defaults. */
interface CheckedOptions {
  readonly limit: number
  readonly cursor: string
  readonly status: FeedStatus | undefined
  readonly now: number
  readonly staleAfter: number
  readonly retiredAfter: number
  readonly signal: AbortSignal | undefined
}

/**
 * Checks the options of `store.feeds()`.
 * @throws PriceStoreError `PRICE_INVALID_QUERY`, `details.parameter` naming the option
 */
export function checkFeedOptions(options: unknown): CheckedOptions {
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object') throw fail('PRICE_INVALID_QUERY', 'options', `feeds options must be an object (got ${describeValue(options)})`)
  const {
    limit = DEFAULT_FEED_LIMIT, cursor = '', status, now = Date.now(), staleAfter = DEFAULT_STALE_AFTER, retiredAfter = DEFAULT_RETIRED_AFTER, signal,
  } = options as FeedOptions
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_FEED_LIMIT) throw invalid('limit', limit, `an integer from 1 to ${MAX_FEED_LIMIT}`)
  if (typeof cursor !== 'string' || cursor.length > 1000) throw invalid('cursor', cursor, 'the next of a page before (a string)')
  if (status !== undefined && !STATUSES.includes(status)) throw invalid('status', status, `one of ${STATUSES.join(', ')}`)
  if (!Number.isSafeInteger(now)) throw invalid('now', now, 'a time in ms since the epoch (an integer)')
  if (typeof staleAfter !== 'number' || !Number.isFinite(staleAfter) || staleAfter <= 0) throw invalid('staleAfter', staleAfter, 'a number of heartbeats above 0')
  if (!Number.isSafeInteger(retiredAfter) || retiredAfter < 1) throw invalid('retiredAfter', retiredAfter, 'a whole number of ms, at least 1')
  return { limit, cursor, status, now, staleAfter, retiredAfter, signal }
}

function invalid(parameter: string, value: unknown, rule: string): never {
  throw fail('PRICE_INVALID_QUERY', parameter, `feeds option ${parameter} must be ${rule} (got ${describeValue(value)})`)
}

/** A feed's status at `now`: retired past `retiredAfter`, else live within `staleAfter` heartbeats, else stale. */
export function feedStatus(age: number, heartbeat: number | null, staleAfter: number, retiredAfter: number): FeedStatus {
  if (age > retiredAfter) return 'retired'
  return heartbeat !== null && age <= staleAfter * heartbeat ? 'live' : 'stale'
}

/** The page of `built` the options ask for. */
function pageOf(built: Built, options: CheckedOptions): FeedCatalogue {
  const { now, staleAfter, retiredAfter, limit, status } = options
  const feeds: FeedEntry[] = []
  let at = options.cursor === '' ? 0 : firstAfter(built.keys, Buffer.from(options.cursor, 'utf8'))
  let next: string | null = null
  for (; at < built.feeds.length; at++) {
    const facts = built.feeds[at] as FeedFacts
    const age = now - facts.lastTimestamp
    const feedStatusNow = feedStatus(age, facts.heartbeat, staleAfter, retiredAfter)
    if (status !== undefined && feedStatusNow !== status) continue
    if (feeds.length === limit) {
      // One more matches: the page ends at the one before it.
      next = (feeds[feeds.length - 1] as FeedEntry).symbol
      break
    }
    const { symbol, decimals, records, firstTimestamp, lastTimestamp, heartbeat, sample, verdicts, sources } = facts
    feeds.push({
      symbol, status: feedStatusNow, decimals, records, firstTimestamp, lastTimestamp, age, heartbeat,
      staleAfterMs: heartbeat === null ? null : staleAfter * heartbeat, sample, verdicts, sources,
    })
  }
  return {
    position: built.position, now, staleAfter, retiredAfter, total: built.feeds.length, providers: built.providers, feeds, next,
  }
}

/** The place of the first key after `cursor` in UTF-8 byte order (the store's symbol order). */
function firstAfter(keys: readonly Buffer[], cursor: Buffer): number {
  let lo = 0
  let hi = keys.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (Buffer.compare(keys[mid] as Buffer, cursor) <= 0) lo = mid + 1
    else hi = mid
  }
  return lo
}
