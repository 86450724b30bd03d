/**
 * A record as a writer gives it to `putMany`: `providerPublicKey` is optional
 * (the store joins its own on read), and extra fields are allowed and kept.
 * A record carries at least one signature: an Arweave `signature`, or a
 * `liteEvmSignature` or `evmSignature` (as RedStone's API served records
 * after it stopped Arweave-signing); whichever it carries is kept and
 * returned, and one it did not carry stays absent.
 */
export interface NewPriceRecord {
  readonly id: string
  readonly symbol: string
  readonly provider: string
  readonly value: number
  /** The Arweave RSA signature (base64); absent on a record signed by an EVM kind only. */
  readonly signature?: string
  /** RedStone's lite EVM signature (`0x` and 130 hex digits) of `symbol`, `value` and `timestamp`. */
  readonly liteEvmSignature?: string
  /** RedStone's EIP-712 signature (`0x` and 130 hex digits) of `symbol`, `value`, `timestamp` and `version`. */
  readonly evmSignature?: string
  readonly permawebTx: string
  readonly version: string
  readonly source: Readonly<Record<string, unknown>>
  readonly timestamp: number
  readonly providerPublicKey?: string
  readonly [extra: string]: unknown
}

/**
 * A signed price point for one token symbol from one provider, as returned by
 * every query. Fields a writer added beyond the known ones are kept and
 * returned unchanged.
 */
export interface PriceRecord extends NewPriceRecord {
  /** Joined on read from the store's provider configuration; never stored per record. */
  readonly providerPublicKey: string
}

/** A record returned by the range form: `minutes` is the UTC minute of the hour of `timestamp`. */
export interface SampledRecord extends PriceRecord {
  readonly minutes: number
}

/** The one provider a store serves (SPEC §3). */
export interface Provider {
  /** Short name, e.g. `redstone`; accepted as the `provider` query parameter. */
  readonly name: string
  /** The address written in each record's `provider` field; also accepted as the `provider` parameter. */
  readonly id: string
  /** Joined into every returned record as `providerPublicKey`. */
  readonly publicKey: string
}

/** Caps on what one query may ask for (SPEC §2). */
export interface Limits {
  /** Largest accepted `limit` (default 3000). */
  readonly maxLimit: number
  /** Largest number of distinct names in `symbols` (default 1000). */
  readonly maxSymbols: number
  /** Largest range-form answer, after `offset` and `limit` (default 10000). */
  readonly maxRangePoints: number
}

/** The limits a store uses when its options leave them out. */
export const DEFAULT_LIMITS: Limits = Object.freeze({
  maxLimit: 3000,
  maxSymbols: 1000,
  maxRangePoints: 10000,
})

/**
 * Which side of the as-of time (`to`) an as-of answer may come from:
 * `before` (at or before it, the default and RedStone's meaning), `after`
 * (at or after it) or `nearest` (the closer of the two; an equal distance
 * goes to `before`).
 */
export type AsOfDirection = 'before' | 'after' | 'nearest'

/** An as-of lookup other than RedStone's default: a direction and/or a tolerance around `to`. */
export interface AsOf {
  readonly direction: AsOfDirection
  /** The most ms the chosen record may lie from `to`; absent means any distance. */
  readonly tolerance?: number
}

/**
 * A `fields` selection (docs/semantics.md, "Field selection"): every record
 * (and record reference) in an answer keeps only the fields named (`keep`),
 * or all but the fields named (`drop`).
 */
export interface FieldSelection {
  readonly mode: 'keep' | 'drop'
  /** Distinct record field names (see `RECORD_FIELDS`), in the order given. */
  readonly names: readonly string[]
}

/** What every query may carry besides its form: a `fields` selection, absent for the whole records. */
export interface SelectableQuery {
  /** Present only when `fields` was given: the answer's records hold only the selected fields. */
  readonly fields?: FieldSelection
}

/** What the record-answering forms may carry: `validUntil` asked (docs/semantics.md, "Validity windows"). */
export interface ValidityQuery {
  /** Present (true) only when asked: every record in the answer carries `validUntil`, the next record's timestamp or `null`. */
  readonly validUntil?: true
}

/** The latest-N form and its as-of/history variant: newest first. */
export interface LatestQuery extends SelectableQuery, ValidityQuery {
  readonly kind: 'latest'
  readonly symbol: string
  readonly limit: number
  readonly offset: number
  readonly from?: number
  readonly to?: number
  /** Present only for a directed or bounded as-of lookup (then `limit` is 1, `offset` 0, `to` given, `from` absent). */
  readonly asOf?: AsOf
}

/** The several-tokens form: the latest record of each symbol in the window, keyed by symbol. */
export interface SeveralQuery extends SelectableQuery, ValidityQuery {
  readonly kind: 'several'
  /** Distinct symbols in request order, or `'all'` for every symbol in the store. */
  readonly symbols: readonly string[] | 'all'
  readonly from?: number
  readonly to?: number
  /** Present only for a directed or bounded as-of lookup (then `to` is given and `from` absent). */
  readonly asOf?: AsOf
}

/**
 * The bucket grid of the bucketed forms (range and candles): bucket `k`
 * covers `origin + k·interval` to `origin + (k+1)·interval − 1`, clipped
 * to `from..to`. `origin` is kept in `0..interval−1` (a shift by whole
 * intervals changes nothing).
 */
export interface BucketGrid {
  readonly from: number
  readonly to: number
  readonly interval: number
  /** Shift of the grid from the Unix epoch, in ms, normalised into `0..interval−1`. */
  readonly origin: number
}

/** Gap filling: every bucket carries the latest record at or before its end, unless older than `maxAge`. */
export interface Fill {
  /** `prev` carries the latest record into empty buckets; `none` answers them as empty (`count: 0`). */
  readonly mode: 'prev' | 'none'
  /** The oldest a carried record may be (bucket end minus its timestamp, in ms); absent means no bound. */
  readonly maxAge?: number
}

/** The range form: one record per bucket of `interval` ms, oldest first. */
export interface RangeQuery extends BucketGrid, SelectableQuery, ValidityQuery {
  readonly kind: 'range'
  readonly symbol: string
  readonly offset: number
  readonly limit?: number
  /** With gap filling, the answer is one {@link FilledPoint} per bucket instead of records. */
  readonly fill?: Fill
}

/** Candles: open, high, low, close and count per bucket of `interval` ms, oldest first. */
export interface CandlesQuery extends BucketGrid, SelectableQuery {
  readonly kind: 'candles'
  readonly symbol: string
  readonly offset: number
  readonly limit?: number
  readonly fill?: Fill
}

/** The time-weighted average of each symbol's value over `from..to`. */
export interface TwapQuery extends SelectableQuery {
  readonly kind: 'twap'
  /** Distinct symbols in request order, or `'all'` for every symbol in the store. */
  readonly symbols: readonly string[] | 'all'
  readonly from: number
  readonly to: number
}

/**
 * A cross rate (docs/semantics.md, "Cross rates"): the price of one `quote`
 * in `base`, from the two stored symbols' records in force. `kind` names the
 * shape: `cross` at one time (the latest, or as of `to`), `crossRange` one
 * rate per bucket, `crossCandles` OHLC of the derived series per bucket,
 * `crossTwap` its time-weighted average over `from..to`.
 */
export type CrossQuery = CrossAtQuery | CrossRangeQuery | CrossCandlesQuery | CrossTwapQuery

/** What every cross-rate query holds: the two symbols and the most ms allowed between the legs. */
export interface CrossPair extends SelectableQuery {
  readonly quote: string
  readonly base: string
  /** Absent: any distance. A rate whose legs are farther apart is refused (`legs-too-far-apart`). */
  readonly maxAge?: number
}

/** The cross rate at one time: the latest (no `to`) or as of `to`. */
export interface CrossAtQuery extends CrossPair {
  readonly kind: 'cross'
  readonly to?: number
}

/** The cross rate in force at each bucket's end (clipped to `to`), every bucket of the grid, oldest first. */
export interface CrossRangeQuery extends CrossPair, BucketGrid {
  readonly kind: 'crossRange'
  readonly offset: number
  readonly limit?: number
}

/** OHLC of the derived series inside each bucket, every bucket of the grid, oldest first. */
export interface CrossCandlesQuery extends CrossPair, BucketGrid {
  readonly kind: 'crossCandles'
  readonly offset: number
  readonly limit?: number
}

/** The time-weighted average of the derived series over `from..to`. */
export interface CrossTwapQuery extends CrossPair {
  readonly kind: 'crossTwap'
  readonly from: number
  readonly to: number
}

/** A validated query: the single result of parsing a `GET /prices` parameter set. */
export type PriceQuery = LatestQuery | SeveralQuery | RangeQuery | CandlesQuery | TwapQuery | CrossQuery

/** A record named by a derived answer: enough to fetch it and check its signature. */
export interface RecordRef {
  readonly id: string
  readonly timestamp: number
  readonly value: number
}

/**
 * One bucket of a gap-filled range: its record (the bucket's latest, or
 * carried from an earlier time when the bucket has none).
 */
export interface FilledPoint {
  /** First millisecond of the bucket (on the grid, so it may be before `from` for the first bucket). */
  readonly bucket: number
  /** True when the record is from before the bucket (carried forward). */
  readonly carried: boolean
  /** How old the record is at the bucket's end (clipped to `to`): end minus its timestamp, in ms. */
  readonly age: number
  readonly record: SampledRecord
}

/**
 * One bucket of a range with `fill=none`: every bucket of the grid appears.
 * A bucket with records has `record` (its latest) and `count`; an empty one
 * has `count: 0` and no record, and `beforeFirst` when no record of the
 * symbol is at or before its end.
 */
export interface CountedBucket {
  /** First millisecond of the bucket (on the grid). */
  readonly bucket: number
  /** Records in the bucket (inside `from..to`). */
  readonly count: number
  readonly record?: SampledRecord
  /** Present (true) only on an empty bucket before the symbol's first record. */
  readonly beforeFirst?: true
}

/** An empty bucket of candles with `fill=none`: no prices, `count: 0`. */
export interface EmptyCandle {
  readonly bucket: number
  readonly count: 0
  /** Present (true) only before the symbol's first record. */
  readonly beforeFirst?: true
}

/**
 * One bucket of the candles form. Each price names the record it comes
 * from. A bucket with no records appears only when gap filling carries a
 * record into it: then all four are that record, `count` is 0 and
 * `carried` is true.
 */
export interface Candle {
  /** First millisecond of the bucket (on the grid). */
  readonly bucket: number
  /** The bucket's first record in (timestamp, id) order. */
  readonly open: RecordRef
  /** The greatest value; among equal values, the latest record. */
  readonly high: RecordRef
  /** The least value; among equal values, the latest record. */
  readonly low: RecordRef
  /** The bucket's latest record, the one the range form returns. */
  readonly close: RecordRef
  /** Records in the bucket (inside `from..to`). */
  readonly count: number
  /** Present (true) only on a bucket filled from an earlier record. */
  readonly carried?: true
  /** With `carried`: how old the carried record is at the bucket's end, in ms. */
  readonly age?: number
}

/**
 * The time-weighted average of one symbol over `from..to`: each record's
 * value weighs the time from its timestamp (or `from`, for the record in
 * force at `from`) until the next record's timestamp, the last until `to`.
 */
export interface Twap {
  /** The average; when the weighted time is zero, the value in force at `to`. */
  readonly twap: number
  readonly from: number
  readonly to: number
  /** Where the average starts: `from` when a record was in force then, else the first record's timestamp. */
  readonly start: number
  /** Records with a positive weight (1 when the weighted time is zero). */
  readonly count: number
  /** The record in force at `start`. */
  readonly first: RecordRef
  /** The record in force at `to`. */
  readonly last: RecordRef
}

/** Why a cross rate has no value at a time: a leg missing, the legs too far apart, a zero base, or a quotient that is not finite. */
export type CrossRefusal = 'no-quote' | 'no-base' | 'legs-too-far-apart' | 'base-zero' | 'not-finite'

/** The two records a cross rate comes from, each named (id, timestamp, value) so it can be fetched and checked. */
export interface CrossLegs {
  readonly quote: RecordRef
  readonly base: RecordRef
}

/** A cross rate: `quote.value / base.value`, one float64 division, nothing rounded after it. */
export interface CrossPoint {
  readonly value: number
  /** When this rate came into force: the newer leg's timestamp. */
  readonly timestamp: number
  /** The older leg's age: the newer leg's timestamp minus the older one's (0 when tied), in ms. */
  readonly age: number
  readonly legs: CrossLegs
}

/** A refused rate: why, and the legs that were in force (a missing one left out). */
export interface CrossRefused {
  readonly refused: CrossRefusal
  readonly legs: Partial<CrossLegs>
}

/** The cross rate at one time: a point, or its refusal. */
export type CrossOutcome = { readonly point: CrossPoint } | CrossRefused

/** The answer of the `cross` form: the pair, the as-of time (absent for the latest) and the rate or its refusal. */
export type CrossRate = { readonly quote: string; readonly base: string; readonly at?: number } & CrossOutcome

/** One bucket of a cross-rate range: the rate in force at `at`, the bucket's last ms (clipped to `to`). */
export type CrossSample = { readonly bucket: number; readonly at: number } & CrossOutcome

/**
 * One bucket of cross-rate candles. The derived series in a bucket is the
 * rate in force at its start (clipped to `from`) and the rate after each
 * record of either leg inside it; `points` of them have a value and
 * `refused` do not. `open` is the first point, `close` the last, `high` and
 * `low` the greatest and least value (a tie goes to the later point).
 */
export type CrossCandle =
  | { readonly bucket: number; readonly open: CrossPoint; readonly high: CrossPoint; readonly low: CrossPoint; readonly close: CrossPoint; readonly points: number; readonly refused: number }
  /** No point of the bucket has a value: `reason` is the last one's refusal. */
  | { readonly bucket: number; readonly points: 0; readonly refused: number; readonly reason: CrossRefusal }

/**
 * The time-weighted average of a cross rate over `from..to` (each rate
 * weighs the time until the next, as {@link Twap}), or its refusal when a
 * rate in force from `start` to `to` is refused (`at` is when).
 */
export type CrossTwap = { readonly quote: string; readonly base: string; readonly from: number; readonly to: number } & (
  | { readonly twap: number; readonly start: number; readonly count: number; readonly first: CrossPoint; readonly last: CrossPoint }
  | (CrossRefused & { readonly at: number })
)

/** The answer to a query: an array for single-symbol forms, an object keyed by symbol for several and TWAP. */
export type PriceAnswer =
  | PriceRecord[]
  | SampledRecord[]
  | FilledPoint[]
  | Candle[]
  | CountedBucket[]
  | (Candle | EmptyCandle)[]
  | Record<string, PriceRecord>
  | Record<string, Twap>
  | CrossRate
  | CrossSample[]
  | CrossCandle[]
  | CrossTwap

/**
 * An answer with the form that produced it, from `store.ask()`: switch on
 * `form` and `answer` has its exact type, no `Array.isArray` needed.
 * `query` is the validated query (its symbol, window, grid).
 *
 * - `latest`: the latest-N, history and as-of forms, newest first;
 * - `several`: the latest record of each symbol, keyed by symbol;
 * - `range`: one record per bucket; `filled`: the same with `fill=prev`;
 * - `candles`: one candle per bucket, gap-filled or not;
 * - `counted`, `countedCandles`: range and candles with `fill=none`, every bucket;
 * - `twap`: the time-weighted average of each symbol, keyed by symbol.
 * - `cross`, `crossRange`, `crossCandles`, `crossTwap`: cross rates (quote in base), at one time, per bucket, as candles, averaged.
 */
export type TypedAnswer =
  | { readonly form: 'latest'; readonly query: LatestQuery; readonly answer: PriceRecord[] }
  | { readonly form: 'several'; readonly query: SeveralQuery; readonly answer: Record<string, PriceRecord> }
  | { readonly form: 'range'; readonly query: RangeQuery; readonly answer: SampledRecord[] }
  | { readonly form: 'filled'; readonly query: RangeQuery & { readonly fill: Fill & { readonly mode: 'prev' } }; readonly answer: FilledPoint[] }
  | { readonly form: 'candles'; readonly query: CandlesQuery; readonly answer: Candle[] }
  | { readonly form: 'counted'; readonly query: RangeQuery & { readonly fill: Fill & { readonly mode: 'none' } }; readonly answer: CountedBucket[] }
  | { readonly form: 'countedCandles'; readonly query: CandlesQuery & { readonly fill: Fill & { readonly mode: 'none' } }; readonly answer: (Candle | EmptyCandle)[] }
  | { readonly form: 'twap'; readonly query: TwapQuery; readonly answer: Record<string, Twap> }
  | { readonly form: 'cross'; readonly query: CrossAtQuery; readonly answer: CrossRate }
  | { readonly form: 'crossRange'; readonly query: CrossRangeQuery; readonly answer: CrossSample[] }
  | { readonly form: 'crossCandles'; readonly query: CrossCandlesQuery; readonly answer: CrossCandle[] }
  | { readonly form: 'crossTwap'; readonly query: CrossTwapQuery; readonly answer: CrossTwap }

/** The name of an answer's form: `TypedAnswer['form']`. */
export type AnswerForm = TypedAnswer['form']

/**
 * Raw query parameters, as from a URL. A plain object may give a parameter
 * several times as an array (which is an error for a known parameter).
 */
export type QueryParams =
  | URLSearchParams
  | Readonly<Record<string, string | readonly string[] | undefined>>
