/**
 * The check that a log still names, at a node's position, the commit the node
 * applied there.
 *
 * A node trusts that a position, once applied, names the same commit forever:
 * it follows the log from the next one. JetStream keeps that promise only while
 * it keeps what it acknowledged. A stream that comes back without its newest
 * messages (seen with nats-server 2.9.10 when every server of a cluster was
 * stopped at once) gives their positions to new messages, and a node that had
 * applied the old ones would go on from there holding other records than the
 * nodes that had not: silently different answers to the same query. So each
 * applied commit's id is kept with its position (`putBatch`'s `commitId`, in
 * the same atomic write), and a node compares it with the log's message at its
 * position before it applies each commit on top (and when it starts, and at
 * each probe while idle). Not only after a reconnect: a JetStream server may
 * deliver a message from its own copy and lose it afterwards, when a leader
 * without it is elected, with no reconnect at all.
 */
import { PriceStoreError } from '../errors.js'
import type { PriceStore } from '../store/price-store.js'
import type { ReplicationLog } from './replication-log.js'

/**
 * Resolves when the log holds, at the store's position, the commit the store applied there, or cannot say (the
 * store's commit has no id, the log keeps none, or retention trimmed the position away).
 * @throws PriceStoreError `PRICE_REPLICA_DIVERGED` (details: `position`) when the log holds another message there,
 *   or ends before it; other errors when the log cannot be read (the caller tries again)
 */
export async function checkHistory(store: PriceStore, log: ReplicationLog): Promise<void> {
  const position = store.position
  const id = store.positionId
  if (log.messageAt === undefined || position === 0 || id === undefined) return
  const message = await log.messageAt(position)
  if (message?.kind === 'commit' && message.id === id) return
  if (message === undefined) {
    const { first, last } = await log.bounds()
    // Trimmed by retention: nothing to compare here; a gap after it is checked when the next commit comes.
    if (position < first) return
    throw rewritten(log, position,
      `this store applied commit ${id} at position ${position} and the stream ${log.name} ${last < position ? `now ends at ${last}` : 'holds no message there'}: the stream lost commits it had acknowledged`)
  }
  const held = message.kind === 'part' ? 'a part of a batch' : `commit ${message.id ?? '(no id)'}`
  throw rewritten(log, position,
    `this store applied commit ${id} at position ${position} and the stream ${log.name} now holds ${held} there: the stream lost commits it had acknowledged and gave their positions to new ones`)
}

function rewritten(log: ReplicationLog, position: number, what: string): PriceStoreError {
  const error = new PriceStoreError('PRICE_REPLICA_DIVERGED',
    `${what}. This node stopped applying so that it does not answer differently from the other nodes, and sends the commits the stream lost again; if other writes took their positions, its store forked from the stream and must be rebuilt from ${log.name} (rebuildFromStream; serve --nats does so by itself)`,
    { details: { position } })
  rewrites.add(error)
  return error
}

/** The errors that say the log lost commits the store holds (rather than trimmed them away). */
const rewrites = new WeakSet<Error>()

/** Whether `err` says the log lost commits this store holds: the store can send them again (lost-commits.ts). */
export function isRewrite(err: unknown): boolean {
  return err instanceof Error && rewrites.has(err)
}
