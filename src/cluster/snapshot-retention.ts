/**
 * Which snapshots a bucket keeps: at most `keep` of them, none older than
 * `maxAgeMs`, and always the newest one, so that a node can always be
 * seeded, however old the newest snapshot is.
 */
import { checkIntegerOption } from '../rules/options.js'
import { newestFirst, type Snapshot } from './snapshot-names.js'

/** How many snapshots a bucket keeps, and for how long. */
export interface SnapshotRetention {
  /** The most snapshots kept (default 3, at least 1). */
  readonly keep?: number
  /** Snapshots older than this (ms, from their creation) are removed, the newest one aside (default 0: no bound). */
  readonly maxAgeMs?: number
}

/** The default of {@link SnapshotRetention.keep}. */
export const DEFAULT_KEEP = 3

/**
 * The snapshots to remove from `snapshots` at time `now` (ms): all but the newest `keep`, and those created more than
 * `maxAgeMs` before `now`; never the newest.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming `keep` or `maxAgeMs`
 */
export function snapshotsToPrune(snapshots: readonly Snapshot[], retention: SnapshotRetention, now: number): Snapshot[] {
  const keep = checkIntegerOption('keep', retention.keep, DEFAULT_KEEP, 1, Number.MAX_SAFE_INTEGER)
  const maxAgeMs = checkIntegerOption('maxAgeMs', retention.maxAgeMs, 0, 0, Number.MAX_SAFE_INTEGER)
  return [...snapshots].sort(newestFirst).filter((snapshot, i) => i > 0 && (i >= keep || (maxAgeMs > 0 && now - snapshot.createdAt > maxAgeMs)))
}

/**
 * Checks the retention options without a listing, so a publish refuses bad ones before it does any work.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming `keep` or `maxAgeMs`
 */
export function checkRetention(retention: SnapshotRetention): void {
  snapshotsToPrune([], retention, 0)
}
