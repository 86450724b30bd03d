import type { PriceRecord } from '../types.js'

export type { PriceRecord }

/** What every update says: where the subscription stands, and which node said it. */
export interface UpdateBase {
  /** The position to resume after (`N`, or `N.tag` on a cluster node): give it as `after` to go on from here. */
  readonly eventId: string
  /** The commit position, `eventId`'s number. */
  readonly position: number
  /** The base URL of the node that sent it. */
  readonly node: string
}

/**
 * The subscription is on at a node, after `eventId`: the first update of each connection. `resumed` is true
 * when it goes on from a position (the caller's `after`, or the last `eventId` before a lost connection).
 */
export interface ConnectedUpdate extends UpdateBase {
  readonly type: 'connected'
  readonly resumed: boolean
  /** Symbols the node holds no record of yet: not an error, their first records will come. */
  readonly unknown: readonly string[]
}

/** The records one commit wrote for the subscription's symbols (with a `fixed_rate` channel: each symbol's newest). */
export interface PricesUpdate<R = PriceRecord> extends UpdateBase {
  readonly type: 'prices'
  /** Each as `/prices` serialises it; with `fields`, only those fields. */
  readonly records: readonly R[]
  /** Only on a replayed commit some of whose records were pruned since (they are left out). */
  readonly pruned?: number
}

/** Commits up to `position` held nothing for the subscription's symbols. */
export interface ProgressUpdate extends UpdateBase {
  readonly type: 'progress'
}

/**
 * The commits after `requested` cannot be replayed by the node: `trimmed` (its journal no longer holds them),
 * `unknown` (`requested` is past its newest commit), `forked` (it holds another commit at `requested`). The
 * subscription goes on after `position`; a caller that needs every record re-reads the state (`query`).
 */
export interface ResetUpdate extends UpdateBase {
  readonly type: 'reset'
  readonly reason: 'trimmed' | 'unknown' | 'forked'
  readonly requested: number
}

/** One update of a subscription. */
export type PriceUpdate<R = PriceRecord> = ConnectedUpdate | PricesUpdate<R> | ProgressUpdate | ResetUpdate
