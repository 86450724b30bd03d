/**
 * The replication log as a cluster node uses it: an ordered, replicated log
 * of messages numbered by position (JetStream's stream sequence), holding
 * commit messages (one per batch: the batch itself, or the list of its parts)
 * and part messages (pieces of a batch too large for one message). A node
 * applies commits in order; parts are read by position when their commit
 * comes. `JetStreamLog` is the real one; tests use an in-memory one.
 */
import type { AppliedReport } from './applied-positions.js'

/** A commit message as the log delivers it. */
export interface CommitMessage {
  /** Its position in the log: the commit position of its batch on every node. */
  readonly position: number
  /** The id of the provider whose records it carries (a header). */
  readonly provider: string | undefined
  /** The commit's bytes (see batch-codec.ts). */
  readonly data: Uint8Array
  /** The id it was appended with (JetStream's `Nats-Msg-Id`), when the log keeps ids. */
  readonly id?: string | undefined
  /**
   * The signature options its writer verified it under (`PriceStore.signatureRule`, a header), when the log carries
   * them: every node applies the commit under these, not its own.
   */
  readonly signatures?: string | undefined
}

/** A part of a batch as the log holds it. */
export interface LogPart {
  readonly data: Uint8Array
  /** The id it was appended with, when the log keeps ids. */
  readonly id?: string | undefined
}

/** What a log holds at one position: a commit or a part, and the id it was appended with. */
export interface LogMessageAt {
  readonly kind: 'commit' | 'part'
  readonly id: string | undefined
}

/** What an append got back from the log. */
export interface Appended {
  /** The position the log gave the message (the first one's, for a duplicate). */
  readonly position: number
  /** True when the log had already taken a message with this id (a retried publish): nothing new was written. */
  readonly duplicate: boolean
}

/** The first and last positions a log holds (`first > last` when it holds none). */
export interface LogBounds {
  readonly first: number
  readonly last: number
}

/** A replicated, ordered log of commits and parts. */
export interface ReplicationLog {
  /** The log's name (the JetStream stream). */
  readonly name: string
  /** Largest message body the log takes, in bytes. */
  readonly maxMessageBytes: number
  /** Whether the connection to the log is up now. */
  readonly connected: boolean
  /**
   * How many times the connection came back after it was lost (a log that cannot tell leaves it out): what the
   * log held may have changed meanwhile (a stream that lost its newest messages), so a node checks it again
   * before it writes.
   */
  readonly reconnects?: number
  /** Times the log's copy of the stream disagreed with its leader and was read past from the leader (JetStream). */
  readonly disagreements?: number
  /** True for a log this node may not append to (a follower's copy of one primary): its appends always fail. */
  readonly readOnly?: boolean

  /**
   * Appends a part of a batch.
   * @param id a deterministic id of this part: a retried append of the same id is not written twice
   */
  appendPart(data: Uint8Array, id: string): Promise<Appended>
  /**
   * Appends a commit message, which applies its batch on every node.
   * @param id a deterministic id of the batch: a retried append of the same id is not written twice
   * @param signatures the writer's signature options (`PriceStore.signatureRule`), carried with the commit
   */
  appendCommit(data: Uint8Array, id: string, provider: string, signatures?: string): Promise<Appended>
  /** A part's bytes and the id it was appended with, or `undefined` when the log holds no part there. */
  readPart(position: number): Promise<LogPart | undefined>
  /**
   * The message the log holds at `position`, or `undefined` when it holds none there; for a log that keeps the ids
   * messages were appended with (a log without this method is not checked: see history-check.ts).
   */
  messageAt?(position: number): Promise<LogMessageAt | undefined>
  /**
   * Tells the other nodes that this node applied up to `report.position` (best effort, never throws: a report lost
   * is made again within a second). For a log whose nodes take writes with a write concern.
   */
  reportApplied?(report: AppliedReport): void
  /** Calls `listener` with every node's reports, this node's own included, until the returned function is called. */
  onAppliedReport?(listener: (report: AppliedReport) => void): () => void
  /** The positions the log holds now. */
  bounds(): Promise<LogBounds>
  /** The position of the newest commit message, or 0 when the log holds none. */
  lastCommit(): Promise<number>
  /**
   * The commit messages after position `after`, in order, with no gap and no repeat, following the log as it
   * grows until `signal` aborts (then the iteration ends). Throws when the log cannot be read.
   */
  commits(after: number, signal: AbortSignal): AsyncIterable<CommitMessage>
  /**
   * Starts a log with no messages at position `next`, so that positions go on from a store's own
   * (see {@link ClusterNode.start}).
   */
  startAt(next: number): Promise<void>
  /** Closes the connection. */
  close(): Promise<void>
}
