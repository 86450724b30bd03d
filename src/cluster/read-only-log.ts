/**
 * A log seen through a view that only reads it: what a store being rebuilt
 * follows. It appends nothing (a node on it sends no lost commits again) and
 * neither sends nor hears reports of applied positions, so the store is not
 * counted for any write's concern before it serves.
 */
import { PriceStoreError } from '../errors.js'
import type { ReplicationLog } from './replication-log.js'

/** `log`, read only and without applied-position reports; closing the view closes the log. */
export function readOnlyView(log: ReplicationLog): ReplicationLog {
  const refuse = (): Promise<never> => Promise.reject(new PriceStoreError('PRICE_INVALID_OPTIONS', `this view of the stream ${log.name} only reads it`))
  const messageAt = log.messageAt
  return {
    get name() { return log.name },
    get maxMessageBytes() { return log.maxMessageBytes },
    get connected() { return log.connected },
    get reconnects() { return log.reconnects ?? 0 },
    readOnly: true,
    appendPart: refuse,
    appendCommit: refuse,
    startAt: refuse,
    readPart: (position) => log.readPart(position),
    ...(messageAt === undefined ? {} : { messageAt: (position: number) => messageAt.call(log, position) }),
    bounds: () => log.bounds(),
    lastCommit: () => log.lastCommit(),
    commits: (after, signal) => log.commits(after, signal),
    close: () => log.close(),
  }
}
