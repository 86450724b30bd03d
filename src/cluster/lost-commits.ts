/**
 * The commits a node holds that its stream lost.
 *
 * A stream that comes back from a crash without the messages it had
 * acknowledged last (nats-server 2.9.10 does, when every server of a cluster
 * stops at once) has lost writes that a node may still hold: the write
 * concern makes sure that the node that took a write applied it before it
 * answered. Such a node stops (it holds other records than the stream at
 * those positions: history-check.ts) and, before it does, finds which of its
 * commits the stream no longer holds at their positions and sends their
 * records to the stream again, as new writes. Records replace themselves, so
 * a commit sent by several nodes, or one the stream did keep, changes
 * nothing; what the stream lost is back in it, at new positions, and every
 * node that follows the stream applies it.
 *
 * A commit is known by its id, the hash of its provider and records
 * (batch-codec.ts). The node reads its commits back from its journal, newest
 * first, and compares the id of each with the id of the stream's message at
 * its position, until one matches: the commits after it are the lost ones.
 * A commit whose records changed since (a later write of the same record
 * with other values) reads back under another id and is sent again too,
 * which is harmless.
 */
import type { PriceStore } from '../store/price-store.js'
import type { PriceRecord } from '../types.js'
import { validateBatch } from '../records/validate-batch.js'
import { appendBatch } from './append-batch.js'
import { encodeBatch } from './batch-codec.js'
import type { ReplicationLog } from './replication-log.js'

/** A commit of the store, as its journal gives it back. */
export interface HeldCommit {
  readonly position: number
  readonly records: readonly PriceRecord[]
}

/** Commits read back per look, at first; doubled until a commit the stream holds is found. */
const FIRST_WINDOW = 16

/** The store's commits the log lost, and whether the log is the store's own at all. */
export interface LostCommits {
  /** The store's commits after the newest one the log holds where the store has it, oldest first. */
  readonly lost: readonly HeldCommit[]
  /**
   * Whether the log holds one of the store's commits at its position: then it is the log the store followed, and
   * lost its tail. Otherwise nothing ties them (another stream, or one that lost everything the store's journal
   * lists), and nothing should be sent to it.
   */
  readonly anchored: boolean
}

/**
 * Finds the store's commits that the log no longer holds at their positions.
 * @throws when the log cannot be read (the caller tries again)
 */
export async function findLostCommits(store: PriceStore, log: ReplicationLog): Promise<LostCommits> {
  const head = store.position
  // A store whose newest commit came from no log (written on its own) has nothing to send to one.
  if (head === 0 || store.positionId === undefined || log.messageAt === undefined) return { lost: [], anchored: false }
  const { first } = await log.bounds()
  for (let window = FIRST_WINDOW; ; window *= 2) {
    const from = Math.max(0, head - window)
    const { commits, complete } = await readCommits(store, from, head)
    for (let index = commits.length - 1; index >= 0; index--) {
      const commit = commits[index]!
      // What retention removed cannot be compared, and ties nothing.
      if (commit.position < first) return { lost: commits.slice(index + 1), anchored: false }
      if (await holds(store, log, commit)) return { lost: commits.slice(index + 1), anchored: true }
    }
    if (from === 0 || !complete) return { lost: commits, anchored: false }
  }
}

/** Whether the log holds this commit at its position (the same id). */
async function holds(store: PriceStore, log: ReplicationLog, commit: HeldCommit): Promise<boolean> {
  const message = await log.messageAt!(commit.position)
  return message?.kind === 'commit' && message.id === idOf(store, commit)
}

/** The id a commit's records are appended under (as `ClusterNode.putBatch` names a batch). */
export function idOf(store: PriceStore, commit: HeldCommit): string {
  return encodeBatch(validateBatch(commit.records, store.provider), store.provider, Number.MAX_SAFE_INTEGER).id
}

/**
 * The store's commits in (`after`, `head`], from its journal; `complete` is false when the journal no longer holds
 * the oldest of them (trimmed: the window cannot grow past it).
 */
async function readCommits(store: PriceStore, after: number, head: number): Promise<{ commits: HeldCommit[]; complete: boolean }> {
  const commits: HeldCommit[] = []
  let complete = true
  if (after >= head) return { commits, complete }
  for await (const item of store.watch({ after, maxPending: Number.MAX_SAFE_INTEGER })) {
    if (item.type === 'reset') complete = false
    // A commit whose records were all pruned since holds nothing to send again.
    else if (item.type === 'records' && item.records.length > 0) commits.push({ position: item.position, records: item.records })
    if (item.position >= head) break
  }
  return { commits, complete }
}

/** What a node sent to its log again. */
export interface ResentCommits {
  /** The commits found lost, and sent again. */
  readonly commits: number
  readonly records: number
  /** The positions the log gave them now, in order. */
  readonly positions: readonly number[]
}

/**
 * Finds the store's commits the log lost and appends their records again, oldest first, each as the batch it was;
 * `undefined` when the log is not tied to the store (see {@link LostCommits.anchored}): nothing is sent then.
 * @throws when the log cannot be read or does not acknowledge (nothing is lost by trying again: appends are idempotent)
 */
export async function resendLostCommits(store: PriceStore, log: ReplicationLog): Promise<ResentCommits | undefined> {
  const { lost, anchored } = await findLostCommits(store, log)
  if (!anchored) return undefined
  const positions: number[] = []
  let records = 0
  for (const commit of lost) {
    const batch = validateBatch(commit.records, store.provider)
    positions.push(await appendBatch(log, batch, store.provider, store.signatureRule))
    records += batch.length
  }
  return { commits: lost.length, records, positions }
}
