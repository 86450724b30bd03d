/**
 * What a node checks before it follows a log, and the calls to the log it
 * makes with it: the log must hold every commit after the store's position
 * and the store's commit at its position; a store holding commits the log
 * lost sends them to it again first (lost-commits.ts).
 */
import { PriceStoreError, isPriceStoreError } from '../errors.js'
import type { PriceStore } from '../store/price-store.js'
import { trimmedPast } from './applier.js'
import type { NodeSettings, ResolvedClusterOptions } from './cluster-options.js'
import { checkHistory } from './history-check.js'
import { JetStreamLog } from './jetstream-log.js'
import { resendLostCommits, type ResentCommits } from './lost-commits.js'
import { redactNatsUrl } from './nats-connection.js'
import type { ReplicationLog } from './replication-log.js'

/**
 * Checks that the store can follow the log, after sending the log what it lost of the store's commits, if anything.
 * @throws PriceStoreError `PRICE_REPLICA_DIVERGED` (saying what was sent again, if anything; with `details.forked`
 *   when the log is the store's own and holds every record the store holds: the store forked from it, and a store
 *   rebuilt from the log replaces it without losing anything), `PRICE_LOG_UNAVAILABLE`
 */
export async function prepareToFollow(store: PriceStore, log: ReplicationLog, settings: NodeSettings): Promise<void> {
  try {
    await checkCanFollow(store, log, settings.adoptEmptyStream)
  } catch (err) {
    // A store ahead of the log, or holding another commit at its position: perhaps the log lost what it holds (a
    // log that trimmed the store's position away, or another log, ties nothing to the store: nothing is sent).
    if (!isPriceStoreError(err, 'PRICE_REPLICA_DIVERGED') || log.readOnly === true) throw err
    const resent = await resend(store, log, settings)
    if (resent === undefined) throw err
    // Sent back where the store has them, the log is whole again and the store can follow it.
    await checkCanFollow(store, log, settings.adoptEmptyStream).catch((again: unknown) => {
      if (!isPriceStoreError(again)) throw again
      const details = again.code === 'PRICE_REPLICA_DIVERGED' ? { ...again.details, forked: true } : again.details
      throw new PriceStoreError(again.code, `${again.message}. ${describeResent(resent)}`, { details, cause: again })
    })
  }
}

/**
 * Whether the store can follow the log from its position: the log must still hold every message after it, and
 * must not be behind it. A new, empty log with a store that has commits starts after the store's position when
 * `adopt` says so, and is refused otherwise (nothing changed).
 */
async function checkCanFollow(store: PriceStore, log: ReplicationLog, adopt: boolean): Promise<void> {
  const position = store.position
  let bounds = await logCall(log, () => log.bounds())
  if (bounds.last === 0 && position > 0) {
    // A read-only log says for itself why it cannot start after the store (a follower's primary holds nothing).
    if (!adopt && log.readOnly !== true) {
      throw notAdopted(position, log.name, 'is empty')
    }
    await logCall(log, () => log.startAt(position + 1))
    bounds = await logCall(log, () => log.bounds())
  }
  if (position > bounds.last) {
    throw new PriceStoreError('PRICE_REPLICA_DIVERGED',
      `this store is at position ${position} and the stream ${log.name} ends at ${bounds.last}: the store holds commits the stream does not (another stream, or writes made without it). Start it on its own stream, or re-seed it from a backup of a node of this cluster`,
      { details: { position } })
  }
  if (position + 1 < bounds.first) throw trimmedPast(log.name, position, bounds.first)
  await logCall(log, () => checkHistory(store, log))
}

/**
 * Sends the store's commits the log lost to it again, at a start; `undefined` when the log is not the store's, or
 * sending failed (reported: the next start tries again). `commits` is 0 when the log held them all already.
 */
async function resend(store: PriceStore, log: ReplicationLog, settings: NodeSettings): Promise<ResentCommits | undefined> {
  try {
    const resent = await resendLostCommits(store, log)
    if (resent !== undefined && resent.commits > 0) settings.onResent(resent)
    return resent
  } catch (failure) {
    settings.onError(failure)
    return undefined
  }
}

/**
 * The refusal of a store with commits to start an empty (or missing) stream without `adoptEmptyStream`: a lagging
 * node starting first must not define the cluster's history.
 */
export function notAdopted(position: number, stream: string, state: 'is empty' | 'does not exist'): PriceStoreError {
  return new PriceStoreError('PRICE_REPLICA_DIVERGED',
    `this store is at position ${position} and the stream ${stream} ${state}: a node does not start a cluster's history by itself. If this store is the one whose history the cluster takes (a single store becoming the first node of a cluster, or the most advanced node after the stream was lost whole), start it once with adoptEmptyStream (serve --adopt-empty-stream); otherwise start the node that is`,
    { details: { position, parameter: 'adoptEmptyStream' } })
}

/** What a node sent again, in a sentence. */
export function describeResent({ commits, records, positions }: ResentCommits): string {
  if (commits === 0) return 'None of the commits this node holds was missing from the stream'
  return `The ${commits} commits (${records} records) this node holds that the stream lost were sent to it again, now at positions ${positions.join(', ')}: every node applies them`
}

export async function openLog(options: ResolvedClusterOptions): Promise<ReplicationLog> {
  try {
    return await JetStreamLog.open(options)
  } catch (err) {
    // Refusals say what and why already (credentials, permissions, the stream's settings), without a secret.
    if (isPriceStoreError(err)) throw err
    // The resolved URLs carry no credentials (moved to `auth`); redacted all the same, as any URL a node prints.
    const servers = options.servers.map(redactNatsUrl).join(', ')
    throw unavailable(`cannot open the stream ${options.stream} on ${servers}: ${err instanceof Error ? err.message : String(err)}`, err)
  }
}

export async function logCall<T>(log: ReplicationLog, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (isPriceStoreError(err)) throw err
    throw unavailable(`the stream ${log.name} did not answer`, err)
  }
}

export function unavailable(message: string, cause: unknown): PriceStoreError {
  return new PriceStoreError('PRICE_LOG_UNAVAILABLE', message, { cause })
}
