/** What a cluster node reports about its replication (the HTTP service's `/health`, `/metrics` and `/stats` show it). */
export interface ReplicationStatus {
  /**
   * `applying` (connected to the stream, following it), `connecting` (no connection: reads are served from
   * what this node applied, writes are refused), `failed` (applying stopped on an error an operator must
   * handle: see `error`), `stopped`.
   */
  readonly state: 'applying' | 'connecting' | 'failed' | 'stopped'
  /** The stream's name. */
  readonly stream: string
  /** The newest position applied to this node's store. */
  readonly position: number
  /** The newest commit position of the stream this node knows of (undefined until known). */
  readonly streamPosition?: number | undefined
  /** `streamPosition - position`: how far behind the stream this node is, in stream positions. */
  readonly lag?: number | undefined
  /** Batches applied since this node started. */
  readonly appliedBatches: number
  /** Records applied since this node started. */
  readonly appliedRecords: number
  /** When `state` is `failed`: the error's code and message. */
  readonly error?: { readonly code: string; readonly message: string } | undefined
}
