/**
 * The check a node makes before it writes again after its connection to the
 * stream came back.
 *
 * A stream that lost its newest messages (lost-commits.ts) gives their
 * positions to the next messages appended. The nodes that hold the lost
 * commits send them again, but a write appended first takes their positions:
 * those nodes then hold other commits than the stream there and must stop.
 * So after a reconnect a node writes only once it knows the stream reaches
 * every position a node still applying says it applied: it waits (a few
 * seconds at most) for a report from each node it heard from in the minute
 * before, then compares the newest position they hold with the stream's
 * newest commit. Until the stream reaches it (the nodes that hold the lost
 * commits have sent them again), writes are refused as the stream being
 * unavailable, and the writer retries. A node that never reports again
 * (gone) stops counting after the wait.
 */
import type { AppliedPositions } from './applied-positions.js'

/** How long after a reconnect a node waits for the reports of the nodes it knew (ms): they report every second. */
export const FENCE_WAIT_MS = 5_000
/** Nodes heard from this long before a reconnect are the ones whose reports a node waits for (ms). */
const KNOWN_WITHIN_MS = 60_000

/** Why a write must wait, or `undefined` when it may go. */
export type FenceVerdict = undefined | { readonly reason: string }

/** The state of the check, one per node. */
export class WriteFence {
  readonly #applied: AppliedPositions
  readonly #self: string
  /** The log's reconnect count this node last checked the stream at. */
  #checkedAt = 0
  /** When this node saw the current reconnect count first (ms since the epoch). */
  #since = 0
  #seen = 0

  constructor(applied: AppliedPositions, self: string) {
    this.#applied = applied
    this.#self = self
  }

  /**
   * Whether this node may write now.
   * @param reconnects the log's count of reconnects (see `ReplicationLog.reconnects`)
   * @param held this node's own position
   * @param streamLast asks the stream for its newest commit (called only when a check is due)
   */
  async check(reconnects: number, held: number, streamLast: () => Promise<number>, now = Date.now()): Promise<FenceVerdict> {
    if (reconnects === this.#checkedAt) return undefined
    if (reconnects !== this.#seen) {
      this.#seen = reconnects
      this.#since = now
    }
    const known = this.#applied.applyingSince(this.#since - KNOWN_WITHIN_MS).filter((node) => node !== this.#self)
    const fresh = this.#applied.heldSince(this.#since)
    const missing = known.filter((node) => !fresh.nodes.has(node))
    if (missing.length > 0 && now - this.#since < FENCE_WAIT_MS) {
      return { reason: `the connection to the stream came back; this node waits (${FENCE_WAIT_MS / 1000} s at most) to hear from ${missing.join(', ')} before it writes` }
    }
    const newest = Math.max(held, fresh.position)
    const last = await streamLast()
    if (newest > last) {
      return { reason: `the stream ends at position ${last} and a node holds position ${newest}: the stream lost commits, which the nodes that hold them send again; writes wait until it has them` }
    }
    this.#checkedAt = reconnects
    return undefined
  }
}
