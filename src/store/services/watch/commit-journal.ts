/**
 * Commit positions and the commit journal.
 *
 * Every batch `putMany` writes is one commit, numbered by a position that
 * only grows: 1 for a new store's first batch, then one more per batch
 * (a batch whose write failed may leave its number unused). The position is
 * also the batch's log sequence, so one counter orders both.
 *
 * The journal (sublevel `j`) lists, under each position, the keys of the
 * records its batch wrote, in the same atomic LevelDB write as the records:
 * after a crash it neither lists a batch that is not stored nor misses one
 * that is. Sealing never touches it. It is trimmed, oldest first, in the
 * writes of later batches, to a window of commits and bytes; the newest
 * entry is always kept, so the position survives restarts (and the sealing
 * of every log entry) by being the journal's last key.
 *
 * Positions may skip numbers (a replication log's sequence, or a failed
 * write), so the oldest entry does not say whether commits before it were
 * trimmed. The meta key `journal-floor` does: every commit at or below it may
 * be gone, none after it is. Trimming raises it in the same write; a store
 * from before the key gets it on open, as the position before its oldest
 * entry (its positions were consecutive).
 */
import { undecodable } from '../../../keys/entry-errors.js'
import { readJournalCommitId, readJournalEnd, setJournalEnd } from '../../../keys/journal-codec.js'
import { describeJournal, journalKey, readJournalKey } from '../../../keys/key-layout.js'
import { META_KEYS, metaKeyBytes } from '../../../keys/meta-keys.js'
import type { BytesSublevel } from '../../db/sublevels.js'

/** The meta key of the journal's floor (UTF-8 key and decimal text value, like every meta key). */
const JOURNAL_FLOOR_KEY = META_KEYS.journalFloor
const FLOOR_KEY_BYTES = metaKeyBytes(JOURNAL_FLOOR_KEY)
const TEXT = { keyEncoding: 'utf8', valueEncoding: 'utf8' } as const

/**
 * The newest position whose commit a journal may have trimmed, read from a snapshot (a watch's view).
 * @param oldest the oldest entry's position: the floor of a store written before the key existed
 */
export async function readJournalFloor(meta: BytesSublevel, options: object, oldest: number): Promise<number> {
  const text = (await meta.get(JOURNAL_FLOOR_KEY as never, { ...TEXT, ...options } as never)) as unknown as string | undefined
  return text === undefined ? oldest - 1 : Number(text)
}
import type { RootBatch } from '../../db/root-batch.js'

/** Commits the journal keeps unless configured otherwise. */
export const DEFAULT_JOURNAL_COMMITS = 100_000
/** Bytes of journal entries kept unless configured otherwise. */
export const DEFAULT_JOURNAL_BYTES = 64 * 1024 * 1024
/** Trimming deletes at most this many entries per batch, so a smaller window set on reopen is reached over a few batches, not in one huge write. */
const MAX_TRIM_PER_COMMIT = 256

/** How much history the journal keeps: the newest `commits` commits, and no more than `bytes` bytes of entries (the newest entry is always kept). */
export interface JournalWindow {
  readonly commits: number
  readonly bytes: number
}

/** Numbers the store's commits and writes their journal entries. */
export class CommitJournal {
  readonly #level: BytesSublevel
  readonly #prefix: Uint8Array
  readonly #meta: BytesSublevel
  readonly #metaPrefix: Uint8Array
  readonly #window: JournalWindow
  /** The newest commit taken into memory. */
  #head = 0
  /** The replication log's id of the commit at `#head`, when it was given one. */
  #headId: string | undefined
  /** Ids of staged commits not yet taken into memory, by position. */
  readonly #stagedIds = new Map<number, string>()
  /** The position the next batch gets. */
  #next = 1
  /** The oldest position that may still have an entry on disk. */
  #oldest = 1
  /** Bytes of entries from `#oldest` on (counting any whose write failed: they may be on disk). */
  #kept = 0
  /** The `end` of the last entry written (see journal-codec). */
  #end = 0
  /** Sizes of the entries written since the store opened; older ones are read when trimmed. */
  readonly #sizes = new Map<number, number>()

  constructor(level: BytesSublevel, prefix: Uint8Array, meta: { readonly level: BytesSublevel; readonly prefix: Uint8Array }, window: JournalWindow) {
    this.#level = level
    this.#prefix = prefix
    this.#meta = meta.level
    this.#metaPrefix = meta.prefix
    this.#window = window
  }

  /** The position of the newest commit whose records readers can see (0 before the first). */
  get head(): number {
    return this.#head
  }

  /** The replication log's id of the commit at {@link CommitJournal.head}, when `stage` was given one. */
  get headId(): string | undefined {
    return this.#headId
  }

  /**
   * Reads where the journal stands when the store opens: its first and last
   * entries only.
   * @param logNext one more than the greatest log sequence on disk: the next position must not reuse a log key
   * @throws PriceStoreError `PRICE_CORRUPT_VALUE` when the first or last entry does not decode
   */
  async load(logNext: number): Promise<void> {
    this.#sizes.clear()
    const [first] = await this.#level.iterator({ limit: 1 }).all()
    const [last] = await this.#level.iterator({ limit: 1, reverse: true }).all()
    const floor = (await this.#meta.get(JOURNAL_FLOOR_KEY as never, TEXT as never)) as unknown as string | undefined
    this.#stagedIds.clear()
    this.#headId = undefined
    if (floor === undefined) {
      const oldest = first === undefined ? Math.max(1, logNext) : readEdge(first)[0]
      await this.#meta.put(JOURNAL_FLOOR_KEY as never, String(oldest - 1) as never, TEXT as never)
    }
    if (first === undefined || last === undefined) {
      this.#head = 0
      this.#end = 0
      this.#kept = 0
      this.#next = Math.max(1, logNext)
      this.#oldest = this.#next
      return
    }
    const [firstPosition, firstEnd] = readEdge(first)
    const [lastPosition, lastEnd] = readEdge(last)
    this.#head = lastPosition
    this.#headId = journalCommitId(lastPosition, last[1])
    this.#oldest = firstPosition
    this.#end = lastEnd
    this.#kept = lastEnd - firstEnd + first[1].length
    this.#next = Math.max(lastPosition + 1, logNext)
  }

  /**
   * Numbers a batch and puts its journal entry, and the deletion of entries
   * that fall out of the window, into the batch's write. The number is used
   * up even if the write fails.
   * @param entry the batch's entry from `encodeJournalEntry`, encoded before its place was known: its `end` is set here
   * @param at the position to commit at, given by a replication log (checked by the caller to be above the
   *   head); the next batch without one gets the position after it
   * @param id the replication log's id of this commit, which `entry` holds: the head's id once it is committed
   */
  stage(batch: RootBatch, entry: Buffer, at?: number, id?: string): number {
    const position = at ?? this.#next
    this.#next = Math.max(this.#next, position) + 1
    if (id !== undefined) this.#stagedIds.set(position, id)
    setJournalEnd(entry, this.#end)
    this.#end += entry.length
    batch.put(this.#prefix, journalKey(position), entry)
    this.#sizes.set(position, entry.length)
    this.#kept += entry.length
    const { commits, bytes } = this.#window
    const oldestBefore = this.#oldest
    for (let trimmed = 0; trimmed < MAX_TRIM_PER_COMMIT && this.#oldest < position; trimmed++) {
      if (position - this.#oldest + 1 <= commits && this.#kept <= bytes) break
      batch.del(this.#prefix, journalKey(this.#oldest))
      this.#kept -= this.#sizeOf(this.#oldest)
      this.#sizes.delete(this.#oldest)
      this.#oldest++
    }
    if (this.#oldest > oldestBefore) batch.put(this.#metaPrefix, FLOOR_KEY_BYTES, Buffer.from(String(this.#oldest - 1), 'utf8'))
    return position
  }

  /** Marks a staged commit as taken into memory (in the store's synchronous step after the write). */
  committed(position: number): void {
    this.#head = position
    this.#headId = this.#stagedIds.get(position)
    this.#stagedIds.delete(position)
  }

  /** An entry's size: known when written since the store opened, otherwise read (0 for a number a failed write left unused). */
  #sizeOf(position: number): number {
    const known = this.#sizes.get(position)
    if (known !== undefined) return known
    return (this.#level.getSync(journalKey(position)) as Uint8Array | undefined)?.length ?? 0
  }
}

/**
 * The commit id the journal entry at `position` holds.
 * @throws PriceStoreError `PRICE_CORRUPT_VALUE` naming the entry when it does not decode
 */
export function journalCommitId(position: number, entry: Uint8Array): string | undefined {
  try {
    return readJournalCommitId(entry)
  } catch (err) {
    throw undecodable(describeJournal(position), err)
  }
}

/** The position and `end` of a journal entry read on open. */
function readEdge([key, value]: [Uint8Array, Uint8Array]): [number, number] {
  let position: number | undefined
  try {
    position = readJournalKey(key)
    return [position, readJournalEnd(value)]
  } catch (err) {
    throw undecodable(position === undefined ? `journal key 0x${Buffer.from(key).toString('hex')}` : describeJournal(position), err)
  }
}
