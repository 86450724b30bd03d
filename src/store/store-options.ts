import { PriceStoreError, describeValue } from '../errors.js'
import { DEFAULT_LIMITS } from '../types.js'
import type { Limits, Provider } from '../types.js'

/** Newest records per symbol kept in memory unless configured otherwise. */
export const DEFAULT_RECORDS_PER_SYMBOL = 128

/** Bucket heads kept in memory unless configured otherwise. */
export const DEFAULT_BUCKET_HEADS = 32_768

/** How a store is configured when it is opened. */
export interface PriceStoreOptions {
  /** The one provider this store serves (SPEC §3). */
  readonly provider: Provider
  /** Caps on queries; each left out takes its default from {@link DEFAULT_LIMITS}. */
  readonly limits?: Partial<Limits>
  /**
   * Flush every write to the disk (`fsync`) before it resolves, so it also
   * survives a power loss. Default `false`: a resolved write survives the
   * process being killed, because LevelDB has handed it to the OS.
   */
  readonly sync?: boolean
  /** What the store keeps in memory; answers are the same whatever the sizes. */
  readonly cache?: {
    /**
     * The hot tail: how many of the newest records of each symbol stay in
     * memory (default 128; 0 turns the cache off). Latest, several-token and
     * short-range queries that the tails cover never touch the disk. Memory use
     * is about 1 KB per record, so 128 per symbol is about 13 MB per 100 symbols.
     */
    readonly recordsPerSymbol?: number
    /**
     * How many bucket heads (the latest record of a 10-minute, hour or day
     * bucket of one symbol, which ranges sampled at those intervals return)
     * stay in memory, least recently used out first (default 32768; 0 turns
     * it off). They load in blocks of 64 buckets of one symbol. A head costs
     * about 0.7 KB as read and 1.5 KB once a query has returned it.
     */
    readonly bucketHeads?: number
  }
}

/** Validated options, frozen. */
export interface ResolvedOptions {
  readonly provider: Provider
  readonly limits: Limits
  readonly sync: boolean
  readonly recordsPerSymbol: number
  readonly bucketHeads: number
}

/**
 * Checks the store options and applies defaults once.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS`
 */
export function resolveOptions(options: unknown): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw invalid('options', options, 'must be an object')
  const { provider, limits = {}, sync = false } = options as Partial<PriceStoreOptions>
  if (typeof provider !== 'object' || provider === null) throw invalid('provider', provider, 'must be an object { name, id, publicKey }')
  for (const field of ['name', 'id', 'publicKey'] as const) {
    const value = provider[field]
    if (typeof value !== 'string' || value.length === 0) throw invalid(`provider.${field}`, value, 'must be a non-empty string')
  }
  if (typeof limits !== 'object' || limits === null) throw invalid('limits', limits, 'must be an object')
  const resolvedLimits = { ...DEFAULT_LIMITS }
  for (const field of ['maxLimit', 'maxSymbols', 'maxRangePoints'] as const) {
    const value = limits[field]
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value < 1) throw invalid(`limits.${field}`, value, 'must be an integer >= 1')
    resolvedLimits[field] = value
  }
  if (typeof sync !== 'boolean') throw invalid('sync', sync, 'must be a boolean')
  const { cache = {} } = options as Partial<PriceStoreOptions>
  if (typeof cache !== 'object' || cache === null) throw invalid('cache', cache, 'must be an object')
  const { recordsPerSymbol = DEFAULT_RECORDS_PER_SYMBOL, bucketHeads = DEFAULT_BUCKET_HEADS } = cache
  for (const [field, value] of [['recordsPerSymbol', recordsPerSymbol], ['bucketHeads', bucketHeads]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw invalid(`cache.${field}`, value, 'must be an integer >= 0')
  }
  return Object.freeze({
    provider: Object.freeze({ name: provider.name, id: provider.id, publicKey: provider.publicKey }),
    limits: Object.freeze(resolvedLimits),
    sync,
    recordsPerSymbol,
    bucketHeads,
  })
}

function invalid(field: string, value: unknown, rule: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_OPTIONS', `option ${field} ${rule} (got ${describeValue(value)})`, {
    details: { field },
  })
}
