/**
 * A record as a writer gives it to `putMany`: `providerPublicKey` is optional
 * (the store joins its own on read), and extra fields are allowed and kept.
 */
export interface NewPriceRecord {
  readonly id: string
  readonly symbol: string
  readonly provider: string
  readonly value: number
  readonly signature: string
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

/** The latest-N form and its as-of/history variant: newest first. */
export interface LatestQuery {
  readonly kind: 'latest'
  readonly symbol: string
  readonly limit: number
  readonly offset: number
  readonly from?: number
  readonly to?: number
}

/** The several-tokens form: the latest record of each symbol in the window, keyed by symbol. */
export interface SeveralQuery {
  readonly kind: 'several'
  /** Distinct symbols in request order, or `'all'` for every symbol in the store. */
  readonly symbols: readonly string[] | 'all'
  readonly from?: number
  readonly to?: number
}

/** The range form: one record per epoch-aligned bucket of `interval` ms, oldest first. */
export interface RangeQuery {
  readonly kind: 'range'
  readonly symbol: string
  readonly from: number
  readonly to: number
  readonly interval: number
  readonly offset: number
  readonly limit?: number
}

/** A validated query: the single result of parsing a `GET /prices` parameter set. */
export type PriceQuery = LatestQuery | SeveralQuery | RangeQuery

/** The answer to a query: an array for single-symbol forms, an object keyed by symbol for several. */
export type PriceAnswer = PriceRecord[] | SampledRecord[] | Record<string, PriceRecord>

/**
 * Raw query parameters, as from a URL. A plain object may give a parameter
 * several times as an array (which is an error for a known parameter).
 */
export type QueryParams =
  | URLSearchParams
  | Readonly<Record<string, string | readonly string[] | undefined>>
