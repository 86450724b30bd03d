import { PriceStoreError, describeValue } from '../../errors.js'
import { DEFAULT_LIMITS } from '../../types.js'
import type { Limits } from '../../types.js'
import type { ProviderNames } from '../../engine/parse-query.js'
import { DEFAULT_JOURNAL_BYTES, DEFAULT_JOURNAL_COMMITS } from '../services/watch/commit-journal.js'
import type { JournalWindow } from '../services/watch/commit-journal.js'
import { configuredCursorSecret } from '../read/cursor-secret.js'
import { resolveSignatureOptions, type ResolvedSignatureOptions, type SignatureOptions } from '../signatures/signature-options.js'

/** Newest records per symbol kept in memory unless configured otherwise. */
export const DEFAULT_RECORDS_PER_SYMBOL = 128

/** Bytes of chunk heads kept in memory unless configured otherwise. */
export const DEFAULT_HEAD_BYTES = 64 * 1024 * 1024

/** Bytes of chunks kept in memory unless configured otherwise. */
export const DEFAULT_CHUNK_BYTES = 32 * 1024 * 1024

/** Bytes of unsealed records kept in memory unless configured otherwise. */
export const DEFAULT_OPEN_BYTES = 64 * 1024 * 1024

/** How a store is configured when it is opened. */
export interface PriceStoreOptions {
  /** The one provider this store serves (SPEC §3); `aliases` are more names the `provider` parameter accepts for it. */
  readonly provider: ProviderNames
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
     * Bytes of chunk heads (the latest record of each ten-minute bucket of
     * a sealed hour of one symbol, which ranges sampled at ten minutes or a
     * multiple return) kept in memory, least recently used out first
     * (default 64 MiB; 0 turns it off). Counted as stored bytes plus an
     * allowance for the row; a head whose record a query returned keeps it
     * decoded (about 1.5 KB more, not counted).
     */
    readonly headBytes?: number
    /**
     * Bytes of sealed chunks (an hour of one symbol) kept in memory for the
     * edges of ranges and for as-of reads of hours read through their key
     * columns (hours without a page table, or read oldest first with delta parts;
     * an hour with a page table is read one page a search, nothing cached), least recently
     * used out first (default 32 MiB; 0 turns it off). Long scans read past it.
     */
    readonly chunkBytes?: number
  }
  /**
   * Bytes of written records not yet sealed into chunks that stay in memory
   * (default 64 MiB). Past it, the oldest open hours are sealed early; below
   * it, an hour is sealed once records ten minutes past its end arrive.
   * Together with the caches this bounds the store's memory: about
   * `openBytes + headBytes + chunkBytes + recordsPerSymbol × symbols × 1.5 KB`.
   */
  readonly openBytes?: number
  /**
   * Table files LevelDB keeps open when the store opens a directory itself
   * (default 1,000; at least 74, LevelDB's own floor). A table file that is
   * not open must be opened again (its index and footer read) before a read
   * can use it, which dominates an as-of read of history once the store has
   * more tables than this. An open table costs a few KB of the process's
   * own (anonymous) memory for its index; LevelDB maps the file itself, and
   * the pages it reads are page cache, which the kernel reclaims as needed
   * (they show in VmRSS, not in RssAnon). Ignored for a database passed in,
   * which has its own options.
   */
  readonly maxOpenFiles?: number
  /**
   * How much history `watch({ after })` can replay: the commit journal keeps
   * the record keys of the newest `commits` batches (default 100,000, at
   * least 1) in no more than `bytes` bytes (default 64 MiB; about 40 bytes a
   * record), the newest batch always. A watcher asking for an older position
   * is told so with a `reset` item.
   */
  readonly journal?: { readonly commits?: number; readonly bytes?: number }
  /**
   * Keep only the last `days` days (a whole number, at least 1): older
   * records are pruned in the background, a whole hour at a time, when the
   * store opens and whenever the newest record moves into a new hour. The
   * days count back from the newest record's hour or the current hour,
   * whichever is earlier, so a historical store keeps its last days and a
   * future-dated record cannot empty the store. Off by default.
   */
  readonly retention?: { readonly days: number }
  /**
   * Verify the signatures of the records the store takes (default: off). See {@link SignatureOptions} and
   * docs/semantics.md, "Signature verdicts".
   */
  readonly signatures?: SignatureOptions
  /**
   * The secret page cursors are signed with (`store.page`, docs/semantics.md "Cursors"), instead of the one the
   * store makes and keeps: give every node behind one balancer the same, so each accepts the others' cursors.
   * At least 32 random bytes (a string counts its UTF-8 bytes; e.g. `openssl rand -base64 48`); kept secret.
   */
  readonly cursorSecret?: string | Uint8Array
}

/** Default number of table files LevelDB keeps open (and mapped): see {@link PriceStoreOptions.maxOpenFiles}. */
const DEFAULT_MAX_OPEN_FILES = 1000

/** Validated options, frozen. */
export interface ResolvedOptions {
  readonly provider: ProviderNames
  readonly limits: Limits
  readonly sync: boolean
  readonly recordsPerSymbol: number
  readonly headBytes: number
  readonly chunkBytes: number
  readonly openBytes: number
  readonly maxOpenFiles: number
  readonly journal: JournalWindow
  /** Days of records kept, or `undefined` to keep everything. */
  readonly retentionDays: number | undefined
  readonly signatures: ResolvedSignatureOptions
  /** The configured cursor secret's bytes; absent: the store's own. */
  readonly cursorSecret?: Uint8Array
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
  const { aliases } = provider
  if (aliases !== undefined && !(Array.isArray(aliases) && aliases.every((alias) => typeof alias === 'string' && alias.length > 0))) {
    throw invalid('provider.aliases', aliases, 'must be an array of non-empty strings')
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
  const { recordsPerSymbol = DEFAULT_RECORDS_PER_SYMBOL, headBytes = DEFAULT_HEAD_BYTES, chunkBytes = DEFAULT_CHUNK_BYTES } = cache
  for (const [field, value] of [['recordsPerSymbol', recordsPerSymbol], ['headBytes', headBytes], ['chunkBytes', chunkBytes]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw invalid(`cache.${field}`, value, 'must be an integer >= 0')
  }
  const { openBytes = DEFAULT_OPEN_BYTES } = options as Partial<PriceStoreOptions>
  if (!Number.isSafeInteger(openBytes) || openBytes < 0) throw invalid('openBytes', openBytes, 'must be an integer >= 0')
  const { maxOpenFiles = DEFAULT_MAX_OPEN_FILES } = options as Partial<PriceStoreOptions>
  if (!Number.isSafeInteger(maxOpenFiles) || maxOpenFiles < 74 || maxOpenFiles > 50_000) {
    throw invalid('maxOpenFiles', maxOpenFiles, 'must be an integer from 74 to 50000')
  }
  const { journal = {} } = options as Partial<PriceStoreOptions>
  if (typeof journal !== 'object' || journal === null) throw invalid('journal', journal, 'must be an object')
  const { commits = DEFAULT_JOURNAL_COMMITS, bytes = DEFAULT_JOURNAL_BYTES } = journal
  if (!Number.isSafeInteger(commits) || commits < 1) throw invalid('journal.commits', commits, 'must be an integer >= 1')
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw invalid('journal.bytes', bytes, 'must be an integer >= 0')
  const { retention } = options as Partial<PriceStoreOptions>
  if (retention !== undefined && (typeof retention !== 'object' || retention === null)) throw invalid('retention', retention, 'must be an object { days }')
  const retentionDays = retention?.days
  if (retention !== undefined && (!Number.isSafeInteger(retentionDays) || (retentionDays as number) < 1)) {
    throw invalid('retention.days', retentionDays, 'must be a whole number of days >= 1')
  }
  return Object.freeze({
    provider: Object.freeze({ name: provider.name, id: provider.id, publicKey: provider.publicKey, ...(aliases && { aliases: Object.freeze([...aliases]) }) }),
    limits: Object.freeze(resolvedLimits),
    sync,
    recordsPerSymbol,
    headBytes,
    chunkBytes,
    openBytes,
    maxOpenFiles,
    journal: Object.freeze({ commits, bytes }),
    retentionDays,
    signatures: resolveSignatureOptions((options as Partial<PriceStoreOptions>).signatures),
    ...configuredCursorSecret((options as Partial<PriceStoreOptions>).cursorSecret),
  })
}

function invalid(field: string, value: unknown, rule: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_OPTIONS', `option ${field} ${rule} (got ${describeValue(value)})`, {
    details: { field },
  })
}
