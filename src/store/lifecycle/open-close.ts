/** Opening and closing a store: its life's two sequences, and the database made for a directory. */
import type { AbstractLevel } from 'abstract-level'
import { ClassicLevel } from 'classic-level'
import { PriceStoreError } from '../../errors.js'
import { PERIOD_MS, periodOf } from '../../keys/key-layout.js'
import { ChunkParts } from '../chunks/chunk-parts.js'
import { toStorageError } from '../db/storage-errors.js'
import { openSublevels } from '../db/sublevels.js'
import { replayLog } from '../write/log-replay.js'
import { checkFormat } from './format.js'
import { checkLocation } from './location.js'
import type { StoreParts } from './store-parts.js'

/** Options for the on-disk database the store creates from a location. */
const CLASSIC_LEVEL_OPTIONS = {
  // A larger memtable halves LevelDB's write stalls on bulk ingest (PERF-NOTES: 55k -> 115k records/s).
  writeBufferSize: 64 * 1024 * 1024,
  // Table files of up to 32 MiB rather than LevelDB's 2 MiB: a week of RedStone-shaped records is about 160 tables
  // instead of 2,600, so the default 1,000 open files keep every table open and a history read never reopens one
  // (with 2 MiB tables it did, and an as-of read took about twice as long).
  maxFileSize: 32 * 1024 * 1024,
} as const

/** Any abstract-level database, whatever its encodings (the store keeps its data in sublevels with their own). */
export type AnyLevel = AbstractLevel<any, any, any>

/**
 * The database at `location`: a directory (classic-level, created when missing when opened), or the database given.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for an empty location
 */
export function databaseAt(location: string | AbstractLevel<any, any, any>, maxOpenFiles: number): AbstractLevel<any, any, any> {
  checkLocation(location)
  return typeof location === 'string' ? (new ClassicLevel(location, { ...CLASSIC_LEVEL_OPTIONS, maxOpenFiles }) as unknown as AbstractLevel<any, any, any>) : location
}

/**
 * Opens the database, checks its format version and provider (recording
 * them in a new database) and replays the unsealed records of its log.
 * Opening an open store does nothing.
 */
export async function openStore(parts: StoreParts): Promise<void> {
  const { life, db, levels, options, symbols, sealer, journal, state, step, upkeep, verdicts, ingest } = parts
  if (life.status === 'open') return
  if (life.status !== 'closed') throw new PriceStoreError('PRICE_NOT_OPEN', `cannot open a store that is ${life.status}`)
  life.become('opening')
  try {
    await db.open({ createIfMissing: true })
    // Closing a database closes its sublevels too, and reopening it does not reopen them.
    await openSublevels(levels)
    await checkFormat(levels.meta, db, options.provider)
    step.resetCounters()
    ingest.opened()
    // The database may have changed while the store was closed: start from what it holds now.
    await symbols.load()
    const { area, nextSequence, horizon } = await replayLog(levels.log, options.provider)
    await journal.load(nextSequence)
    await verdicts.load()
    const sealed = await new ChunkParts(levels.chunks).sealedHours()
    // The newest record is in the log or in the newest sealed hour: hours before that one count as past (late when written again).
    sealer.resetHorizon(Math.max(horizon, sealed.last >= sealed.first ? (sealed.last + 1) * PERIOD_MS - 1 : 0))
    state.load(area, sealed)
    life.become('open')
    // Hours a crash left unsealed are sealed in the background, as after a batch.
    upkeep.start(options.retentionDays, Math.max(sealed.last, periodOf(sealer.horizon)))
  } catch (err) {
    life.become('closed')
    await db.close().catch(() => {})
    const coded = toStorageError(err, 'open the store')
    throw coded.code === 'PRICE_NOT_OPEN'
      ? new PriceStoreError('PRICE_STORAGE_ERROR', 'cannot open the store: the database failed to open', { cause: err })
      : coded
  }
}

/**
 * Waits for pending writes, seals every open hour (so a closed store is
 * all chunks and reopens without replaying its log), then closes the
 * database. Closing a closed store does nothing.
 */
export async function closeStore(parts: StoreParts): Promise<void> {
  const { life, queue, hub, upkeep, db, ingest } = parts
  if (life.status === 'closed' || life.status === 'closing') return
  life.become('closing')
  try {
    await queue.idle()
    hub.end()
    await upkeep.sealAll()
    await ingest.close()
    await db.close()
  } finally {
    life.become('closed')
  }
}
