/**
 * The commits of a stream as its leader holds them. A JetStream consumer
 * delivers messages from its own server's copy of the stream, and after a
 * partition nats-server 2.9 can leave one copy holding other messages than
 * the leader at the same positions, for good. So each commit a consumer
 * delivers is confirmed by the leader (its message id at that position)
 * before it is applied, and so are the positions it skipped (the leader must
 * hold no commit there); at the first disagreement the rest is read from the
 * leader itself, position by position, from the last confirmed commit up to
 * the stream's end, and then a new consumer takes over. A node thus applies
 * what every other node applies, whichever server it reads from.
 */
import type { CommitMessage } from './replication-log.js'

/** A message of the stream, as the leader or a consumer gives it. */
export interface StreamMessage extends CommitMessage {
  readonly kind: 'commit' | 'part'
}

/** How {@link confirmedCommits} reads the stream. */
export interface StreamReads {
  /** The commits after `after`, in order, from a consumer (a copy of the stream), following it until `signal` aborts. */
  consume(after: number, signal: AbortSignal): AsyncIterable<StreamMessage>
  /** The message at `position` as the stream's leader holds it, or `undefined` when it holds none there. */
  leaderAt(position: number): Promise<StreamMessage | undefined>
  /** The position of the stream's newest message, as its leader says. */
  leaderLast(): Promise<number>
  /** The positions of a commit's own parts (a consumer skips them), or none for a commit that has none or does not decode. */
  partsOf(commit: StreamMessage): readonly number[]
  /** Told each time the consumer's copy disagreed with the leader (for the node's log). */
  onDisagreement?(position: number): void
}

/**
 * The commits after `after`, in order, with no gap and no repeat, each the leader's; follows the stream until
 * `signal` aborts. Throws what a read throws (the caller retries from where it is).
 */
export async function* confirmedCommits(reads: StreamReads, after: number, signal: AbortSignal): AsyncIterable<CommitMessage> {
  let confirmed = after
  while (!signal.aborted) {
    let disagreed = false
    // One consumer per turn, stopped (by its own signal) when its copy disagrees with the leader.
    const turn = new AbortController()
    const stop = (): void => turn.abort()
    signal.addEventListener('abort', stop, { once: true })
    try {
      for await (const message of reads.consume(confirmed, turn.signal)) {
        if (message.position <= confirmed) continue
        if (!(await agrees(reads, confirmed, message))) {
          disagreed = true
          reads.onDisagreement?.(message.position)
          break
        }
        confirmed = message.position
        yield toCommit(message)
      }
    } finally {
      signal.removeEventListener('abort', stop)
      turn.abort()
    }
    if (!disagreed) return
    // Read past the disagreement from the leader, every position from the last confirmed commit: a commit the
    // consumer's copy lacks (it holds a part there) is then not skipped.
    const last = await reads.leaderLast()
    for (let position = confirmed + 1; position <= last && !signal.aborted; position++) {
      const message = await reads.leaderAt(position)
      if (message?.kind !== 'commit') continue
      confirmed = position
      yield toCommit(message)
    }
    confirmed = Math.max(confirmed, last)
  }
}

/** Leader reads in flight at once while a gap before a commit is checked. */
const GAP_READS = 32

/**
 * Whether the leader holds `delivered` at its position, and no commit at the positions the consumer skipped since
 * `confirmed` (other than the commit's own parts, which the applier reads from the leader and checks itself).
 */
async function agrees(reads: StreamReads, confirmed: number, delivered: StreamMessage): Promise<boolean> {
  const leader = await reads.leaderAt(delivered.position)
  if (leader === undefined || !sameCommit(leader, delivered)) return false
  const own = new Set(reads.partsOf(delivered))
  const skipped: number[] = []
  for (let position = confirmed + 1; position < delivered.position; position++) if (!own.has(position)) skipped.push(position)
  for (let start = 0; start < skipped.length; start += GAP_READS) {
    const held = await Promise.all(skipped.slice(start, start + GAP_READS).map(async (position) => reads.leaderAt(position)))
    if (held.some((message) => message?.kind === 'commit')) return false
  }
  return true
}

/** The same message: a commit with the same id (made from its bytes), or without ids, the same bytes. */
function sameCommit(leader: StreamMessage, delivered: StreamMessage): boolean {
  if (leader.kind !== 'commit') return false
  if (leader.id !== undefined || delivered.id !== undefined) return leader.id === delivered.id
  return Buffer.from(leader.data.buffer, leader.data.byteOffset, leader.data.byteLength).equals(delivered.data)
}

function toCommit({ position, provider, data, id, signatures }: StreamMessage): CommitMessage {
  return { position, provider, data, id, signatures }
}
