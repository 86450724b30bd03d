/**
 * What `serve --retention-days N` (or `"retention"` in `--config`) is about
 * to remove, said before the store removes it: the store prunes in the
 * background as soon as it opens, and records removed are gone for good.
 */
import { periodOf } from '../keys/key-layout.js'
import type { PriceStore } from '../store/price-store.js'
import { retentionCutoff } from '../store/upkeep/retention.js'
import type { StoreConfig } from './config.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { formatCount } from './progress.js'

/** What a retention of some days removes from a store now. */
export interface RetentionPreview {
  /** Records with a timestamp before this are removed. */
  readonly before: number
  /** How many records that is. */
  readonly records: number
  /** The oldest timestamp among them. */
  readonly from: number
  /** Symbols left with no record. */
  readonly emptied: readonly string[]
}

/**
 * Counts what a retention of `days` days removes from `store` now (a dry
 * run of the prune the store starts: the same cutoff, by the same rule), or
 * `undefined` when it removes nothing. Removes nothing itself.
 */
export async function previewRetention(store: PriceStore, days: number, now: number = Date.now()): Promise<RetentionPreview | undefined> {
  const { perSymbol } = await store.stats()
  if (perSymbol.length === 0) return undefined
  // A loop, not Math.max(...): a store may hold more symbols than a call takes arguments.
  let newest = -Infinity
  let from = Infinity
  for (const symbol of perSymbol) {
    newest = Math.max(newest, symbol.lastTimestamp)
    from = Math.min(from, symbol.firstTimestamp)
  }
  const before = retentionCutoff(days, periodOf(newest), now)
  if (before === undefined) return undefined
  if (from >= before) return undefined
  const counted = await store.prune({ before, dryRun: true })
  if (counted.records === 0) return undefined
  return { before, records: counted.records, from, emptied: counted.symbols }
}

/** The lines saying what is about to go. */
export function describeRetention(days: number, preview: RetentionPreview): string {
  const period = days === 1 ? '1 day' : `${formatCount(days)} days`
  const emptied = preview.emptied.length === 0 ? '' : `; it leaves ${preview.emptied.join(', ')} with no record`
  return (
    `retention (${period}) removes ${formatCount(preview.records)} ${preview.records === 1 ? 'record' : 'records'} now: ` +
    `every record from ${new Date(preview.from).toISOString()} to before ${new Date(preview.before).toISOString()} ` +
    `(${period} before the newest record's hour, or the current hour if earlier)${emptied}\n`
  )
}

/**
 * Before `serve` opens its store with retention: opens it without, says on
 * standard error what retention will remove (nothing when it removes
 * nothing), and closes it. A store that does not open here is left to the
 * open that follows, which reports why.
 */
export async function announceRetention(config: StoreConfig, io: CliIo, now: number = Date.now()): Promise<void> {
  const days = config.retention?.days
  if (days === undefined) return
  let store: PriceStore
  try {
    store = await openStore(config, { mustExist: false })
  } catch {
    return
  }
  try {
    const preview = await previewRetention(store, days, now)
    if (preview !== undefined) io.stderr.write(describeRetention(days, preview))
  } finally {
    await store.close()
  }
}
