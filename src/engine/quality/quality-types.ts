/**
 * The shapes of a feed-quality report (`store.quality()`, `GET /prices/quality`,
 * `price-store quality`): plain data, ready for `JSON.stringify`. The
 * meaning of each number is in docs/semantics.md, "Feed quality".
 */
import type { BucketGrid } from '../../types.js'

/** A record named by the report: enough to fetch it (`latest` with `to`) and check its signature. */
export interface QualityRecord {
  readonly id: string
  readonly timestamp: number
}

/** A stretch without records between two consecutive distinct timestamps. */
export interface QualityGap {
  /** The timestamp of the record before the gap. */
  readonly start: number
  /** The timestamp of the record after it. */
  readonly end: number
  /** `end - start` (ms). */
  readonly length: number
}

/**
 * How often a feed updated: the gaps between consecutive distinct
 * timestamps (records sharing a timestamp make no gap).
 */
export interface GapSummary {
  /** Gaps measured: distinct timestamps − 1 (0 for fewer than two). */
  readonly count: number
  /** The lower median (nearest rank) of the gaps, ms; `null` without a gap. */
  readonly median: number | null
  /** The 99th percentile (nearest rank), ms; `null` without a gap. */
  readonly p99: number | null
  readonly max: number | null
  /**
   * The threshold the gaps were held against (ms): the one asked for, or 3 × the symbol's median gap;
   * `null` when neither exists (no gap and none asked for).
   */
  readonly threshold: number | null
  /** Gaps strictly longer than `threshold`. */
  readonly over: number
  /** Those gaps in time order, the first {@link MAX_LISTED_GAPS} of them. */
  readonly list: readonly QualityGap[]
  /** More gaps are over the threshold than `list` holds. */
  readonly truncated: boolean
}

/** A move between two consecutive records (in (timestamp, id) order). */
export interface QualityMove {
  readonly from: QualityRecord & { readonly value: number }
  readonly to: QualityRecord & { readonly value: number }
  /** `to.value − from.value`. */
  readonly change: number
  /** `change / |from.value|`; `null` when `from.value` is 0. */
  readonly relative: number | null
}

/** The largest moves of a feed, each list largest first, a tie going to the earlier move. */
export interface MoveSummary {
  /** Up to {@link MOVES_LISTED} moves with the largest `|change|` (moves of 0 left out). */
  readonly largest: readonly QualityMove[]
  /** Up to {@link MOVES_LISTED} moves with the largest `|relative|` (moves of 0, and from a value of 0, left out). */
  readonly largestRelative: readonly QualityMove[]
}

/** Records sharing a timestamp (the store keys records by symbol, timestamp and id: only the id differs). */
export interface DuplicateSummary {
  /** Records whose timestamp is that of the record before them: records − distinct timestamps. */
  readonly records: number
  /** Timestamps held by more than one record. */
  readonly timestamps: number
  /** Those timestamps in time order with every id there, the first {@link MAX_LISTED_DUPLICATES}. */
  readonly list: readonly { readonly timestamp: number; readonly ids: readonly string[] }[]
  readonly truncated: boolean
}

/** One bucket of the report's grid: the same counts over the records inside it. */
export interface BucketQuality {
  /** The bucket's first millisecond (its end is the next bucket's start − 1, clipped to `to`). */
  readonly start: number
  readonly records: number
  readonly firstTimestamp: number | null
  readonly lastTimestamp: number | null
  /**
   * The gaps ended by a record of this bucket (a gap belongs to the bucket of the record after it), held
   * against the symbol's threshold: a bucket with no record has none, and the gap over it is counted in the
   * bucket where the feed came back.
   */
  readonly gaps: Omit<GapSummary, 'threshold' | 'list' | 'truncated'>
  /** Records whose timestamp is that of the record before them. */
  readonly duplicates: number
  /** The move with the largest `|change|` ending in this bucket (`null`: none, all 0, or `moves: false`). */
  readonly largestMove: QualityMove | null
}

/** How many sources each record had and how far they spread (only with `sources: true`). */
export interface SourceSummary {
  /** Records by their number of numeric sources: `{ "0": 2, "5": 1000, ... }` (a failed fetch, a string, is not counted). */
  readonly counts: Readonly<Record<string, number>>
  /** Records with exactly one numeric source. */
  readonly singleSource: number
  /** Those records in time order, the first {@link MAX_LISTED_SINGLE} of them. */
  readonly singleSourceRecords: readonly QualityRecord[]
  /**
   * The record whose sources spread widest relative to its value: `(max − min) / |value|` over its numeric
   * sources, a tie going to the earlier record; `null` when no record has a source and a non-zero value.
   */
  readonly widest: (QualityRecord & { readonly value: number; readonly min: number; readonly max: number; readonly spread: number }) | null
}

/** The report of one symbol. */
export interface SymbolQuality {
  readonly symbol: string
  /** Records in `from..to`. */
  readonly records: number
  readonly firstTimestamp: number | null
  readonly lastTimestamp: number | null
  /** `now − lastTimestamp` (ms; negative for a record in the future); `null` without a record. */
  readonly age: number | null
  readonly gaps: GapSummary
  /** `null` with `moves: false` (values not read). */
  readonly moves: MoveSummary | null
  readonly duplicates: DuplicateSummary
  /** With `interval`: every bucket of the window, empty ones included, oldest first. */
  readonly buckets?: readonly BucketQuality[]
  /** With `sources: true`. */
  readonly sources?: SourceSummary
}

/** What `store.quality()` answers. */
export interface QualityReport {
  readonly from: number
  readonly to: number
  /** The time ages are measured from (ms since the epoch). */
  readonly now: number
  /** The bucket width, when buckets were asked for. */
  readonly interval?: number
  /** The gap threshold asked for; `null`: each symbol's own (3 × its median gap). */
  readonly gapThreshold: number | null
  /** One entry per symbol asked for (in the order asked), or per stored symbol (in the store's order). */
  readonly symbols: readonly SymbolQuality[]
}

/** A checked quality request: what the kernel and the store read. */
export interface QualityQuery {
  /** Distinct symbols in request order, or `'all'`. */
  readonly symbols: readonly string[] | 'all'
  readonly from: number
  readonly to: number
  readonly now: number
  /** The bucket grid over `from..to`, when `interval` was given. */
  readonly grid?: BucketGrid
  readonly gapThreshold?: number
  /** Read each record's `source` too (decodes bodies). */
  readonly sources: boolean
  /** Read each record's value, for the moves (reads the chunks; without, only their key columns). */
  readonly moves: boolean
}

/** At most this many gaps over the threshold are listed per symbol. */
export const MAX_LISTED_GAPS = 1000
/** At most this many duplicated timestamps are listed per symbol. */
export const MAX_LISTED_DUPLICATES = 100
/** At most this many single-source records are listed per symbol. */
export const MAX_LISTED_SINGLE = 100
/** The number of largest moves listed. */
export const MOVES_LISTED = 3
/** The default gap threshold is this many times the symbol's median gap. */
export const DEFAULT_GAP_FACTOR = 3
