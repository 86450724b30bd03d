/**
 * Backup: a consistent copy of a store, from one view, into a new
 * classic-level directory, while the store goes on serving and writing.
 *
 * The copy is made of the raw entries of every sublevel (meta, symbols,
 * heads, log, chunks, verdicts) read from the view's one LevelDB snapshot,
 * and of the commit journal's newest entry, so the copy keeps the store's
 * position (and the id of its commit, in meta): a cluster node seeded from
 * it follows the stream from there. Older journal entries are not copied;
 * the copy's journal floor says so (a watch resuming before the position is
 * told `reset`). A snapshot
 * holds every committed batch and seal step or none of it, and the log of
 * every record not sealed yet, so it is a state the store could have been
 * killed in: opening the copy replays its log, as opening after a crash
 * does, and finds the same records ("sealed ∪ open" is the same set before
 * and after a seal; docs/architecture.md, the read view). The open area in
 * memory is not needed: its records are in the snapshot's log.
 *
 * The copy is written into `DIR.partial` (marked by a file inside as a
 * backup's work in progress), opened there as a store and checked against
 * the statistics of the same view, closed (which seals its open hours and
 * fsyncs), and only then renamed to `DIR`. A backup that is killed or fails
 * leaves no `DIR`; the next backup to `DIR` removes the marked leftover.
 */
import { ClassicLevel } from 'classic-level'
import { throwIfAborted } from '../../rules/abort.js'
import { PriceStoreError } from '../../errors.js'
import { asBuffer } from '../../keys/bytes.js'
import { recordsInPart } from '../chunks/chunk-parts.js'
import { readJournalKey } from '../../keys/key-layout.js'
import { readLogEntry } from '../../keys/log-codec.js'
import type { Provider } from '../../types.js'
import { RootBatch, ownPrefixOf } from '../db/root-batch.js'
import type { BytesSublevel, StoreSublevels } from '../db/sublevels.js'
import type { HeadsIndex } from '../heads/heads-index.js'
import type { ReadView } from '../read/read-view.js'
import type { StoreReader } from '../read/store-reader.js'
import { META_KEYS, metaKeyBytes } from '../../keys/meta-keys.js'
import { PARTIAL_MARKER, newDirectoryTarget, writeWholeDirectory } from './partial-directory.js'
import { directoryBytes, readStats } from './stats.js'
import type { StoreStats } from './stats.js'

/** The file that marks `DIR.partial` as a backup in progress, so a later backup may remove it. */
export const BACKUP_PARTIAL_MARKER = PARTIAL_MARKER

/** Bytes of entries per write into the copy. */
const BATCH_BYTES = 4 * 1024 * 1024

/** How far a backup has got, for `onProgress`. */
export interface BackupProgress {
  /** Records copied so far (a record both sealed and in the log, during a seal, counts twice). */
  readonly records: number
  /** Records in the store as of the backup's view. */
  readonly total: number
  /** Bytes of keys and values copied so far. */
  readonly bytes: number
}

/** Options of `store.backup()`. */
export interface BackupOptions {
  /** Called after each batch written into the copy. */
  readonly onProgress?: (progress: BackupProgress) => void
  /** Stops the backup (`PRICE_ABORTED`); the partial copy is removed. */
  readonly signal?: AbortSignal
}

/** What a finished backup wrote. */
export interface BackupResult {
  /** The backup's directory, absolute. */
  readonly location: string
  /** The statistics of the view copied, which the copy was checked against (`disk` is the copy's). */
  readonly stats: StoreStats
}

/** What a backup reads from its store. */
export interface BackupSource {
  readonly view: ReadView
  /** The heads index, which the statistics the copy is checked against are counted from. */
  readonly heads: HeadsIndex
  /** The sublevels copied whole (all but the journal), as bytes, in the order they are copied. */
  readonly levels: {
    readonly meta: BytesSublevel
    readonly symbols: BytesSublevel
    readonly heads: BytesSublevel
    readonly log: BytesSublevel
    readonly chunks: BytesSublevel
    readonly verdicts: BytesSublevel
  }
  /** The commit journal, of which the newest entry is copied. */
  readonly journal: BytesSublevel
  readonly provider: Provider
  /** Opens a copy as a store of the same provider, to check it. */
  openCopy(location: string): Promise<{ stats(): Promise<StoreStats>; close(): Promise<void> }>
}

/**
 * `store.backup()`: copies the store, as one view of `reader` sees it, into
 * a new store at `dir`, checked by opening it with `openCopy`.
 * @throws PriceStoreError as {@link backupStore}, and `PRICE_NOT_OPEN`
 */
export async function backupWith(
  store: { readonly reader: StoreReader; readonly levels: StoreSublevels; readonly heads: HeadsIndex; readonly options: { readonly provider: Provider } },
  openCopy: BackupSource['openCopy'], dir: string, options: BackupOptions, signal: AbortSignal | undefined,
): Promise<BackupResult> {
  const { reader, heads, options: { provider } } = store
  const { meta, symbols, heads: headsLevel, log, chunks, verdicts, journal } = store.levels
  return reader.read('back up the store', (view) => backupStore({
    view, heads, provider, levels: { meta, symbols, heads: headsLevel, log, chunks, verdicts }, journal, openCopy,
  }, dir, { ...options, ...(signal === undefined ? {} : { signal }) }))
}

/**
 * Copies the store seen by `source.view` into a new store at `dir`.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (parameter `dir`) when `dir`
 *   exists and is not an empty directory, or `DIR.partial` exists and is not a
 *   backup's leftover; `PRICE_ABORTED`; `PRICE_STORAGE_ERROR`
 */
export async function backupStore(source: BackupSource, dir: unknown, options: BackupOptions): Promise<BackupResult> {
  const target = await newDirectoryTarget(dir, 'a backup')
  const { signal, onProgress } = options
  const expected = await writeWholeDirectory(target, 'a backup', async (partial) => {
    throwIfAborted(signal)
    const expected = await readStats(source.view, source.heads, source.provider, signal)
    await copyEntries(source, partial, expected.records, signal, onProgress)
    const copy = await source.openCopy(partial)
    let copied: StoreStats
    try {
      copied = await copy.stats()
    } finally {
      await copy.close()
    }
    const difference = compareStats(expected, copied)
    if (difference !== undefined) throw new PriceStoreError('PRICE_STORAGE_ERROR', `the backup does not match the store: ${difference}`)
    return expected
  })
  return Object.freeze({ location: target, stats: Object.freeze({ ...expected, disk: { bytes: await directoryBytes(target), measured: 'directory' as const } }) })
}

/** Writes every entry of the view's snapshot into a new database at `location`, in batches. */
async function copyEntries(
  source: BackupSource, location: string, total: number, signal: AbortSignal | undefined, onProgress: BackupOptions['onProgress'],
): Promise<void> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(location, { keyEncoding: 'view', valueEncoding: 'view' })
  await db.open()
  let records = 0
  let bytes = 0
  try {
    for (const level of Object.values(source.levels)) {
      // The copy is a database of its own: its keys carry the store's prefixes, not those of a sublevel it was opened on.
      const prefix = ownPrefixOf(level)
      const iterator = source.view.entries(level)
      try {
        let batch = new RootBatch()
        let batchBytes = 0
        for (;;) {
          const entries = await iterator.nextv(1024)
          for (const [key, value] of entries) {
            batch.put(prefix, key, value)
            batchBytes += key.length + value.length
            records += recordsIn(level, source.levels, value)
          }
          if (batchBytes >= BATCH_BYTES || (entries.length === 0 && batch.length > 0)) {
            throwIfAborted(signal)
            await batch.write(db, false)
            bytes += batchBytes
            batch = new RootBatch()
            batchBytes = 0
            onProgress?.({ records, total, bytes })
          }
          if (entries.length === 0) break
        }
      } finally {
        await iterator.close()
      }
    }
    await copyJournalHead(source, db)
  } finally {
    await db.close()
  }
}

/**
 * Copies the journal's newest entry as of the view (it holds the store's position), with the journal floor just
 * below it: the older entries are not copied. Written after meta, so this floor replaces the copied one.
 */
async function copyJournalHead(source: BackupSource, db: ClassicLevel<Uint8Array, Uint8Array>): Promise<void> {
  const [newest] = await source.journal.iterator({ ...source.view.readOptions, reverse: true, limit: 1 }).all()
  if (newest === undefined) return
  const [key, value] = newest
  const batch = new RootBatch()
  batch.put(ownPrefixOf(source.journal), key, value)
  batch.put(ownPrefixOf(source.levels.meta), metaKeyBytes(META_KEYS.journalFloor), Buffer.from(String(readJournalKey(key) - 1), 'utf8'))
  await batch.write(db, false)
}

/** The records an entry holds, for progress: a chunk part's count, or a log entry's. */
function recordsIn(level: BytesSublevel, { log, chunks }: BackupSource['levels'], value: Uint8Array): number {
  const bytes = asBuffer(value)
  try {
    if (level === chunks) return recordsInPart(bytes)
    if (level === log) {
      let count = 0
      readLogEntry(bytes, () => count++)
      return count
    }
  } catch {
    // A damaged entry is copied as it is; the check of the copy reports what it breaks.
  }
  return 0
}

/** What differs between the statistics of the store and of its copy (`undefined`: nothing). */
function compareStats(expected: Omit<StoreStats, 'disk'>, copied: StoreStats): string | undefined {
  if (expected.records !== copied.records) return `${expected.records} records in the store, ${copied.records} in the copy`
  if (expected.symbols !== copied.symbols) return `${expected.symbols} symbols in the store, ${copied.symbols} in the copy`
  for (const [i, mine] of expected.perSymbol.entries()) {
    const theirs = copied.perSymbol[i]
    if (theirs === undefined || JSON.stringify(mine) !== JSON.stringify(theirs)) {
      return `symbol ${JSON.stringify(mine.symbol)} differs (${JSON.stringify(mine)} in the store, ${JSON.stringify(theirs)} in the copy)`
    }
  }
  return undefined
}
