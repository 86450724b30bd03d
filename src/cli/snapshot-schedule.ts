/**
 * `serve --nats --snapshot-every-minutes N`: the node publishes a snapshot of
 * its store into its stream's NATS Object Store bucket every N minutes, so
 * that a new node, or one the stream's retention left behind, is seeded from
 * it (node-rebuild.ts). One publish at a time; a failure is logged and the
 * next period tries again.
 */
import type { ClusterOptions } from '../cluster/cluster-options.js'
import { publishSnapshot } from '../cluster/snapshots.js'
import type { PriceStore } from '../store/price-store.js'
import type { CliIo } from './io.js'
import { formatCount } from './progress.js'

/** How often, and how many snapshots the bucket keeps. */
export interface SnapshotPlan {
  readonly everyMs: number
  readonly keep: number
}

/** A running schedule: stop it before the store closes. */
export interface SnapshotSchedule {
  /** Stops the timer and waits for a publish in flight. */
  stop(): Promise<void>
}

/**
 * Publishes a snapshot of `store()` (read at each period: the store is replaced when the node is rebuilt) every
 * `plan.everyMs`, keeping `plan.keep` in the bucket, and logs each on standard error.
 */
export function scheduleSnapshots(store: () => PriceStore, cluster: ClusterOptions, nodeId: string, plan: SnapshotPlan, io: CliIo): SnapshotSchedule {
  let inFlight: Promise<void> | undefined
  const publish = async (): Promise<void> => {
    try {
      const { snapshot, pruned } = await publishSnapshot(store(), cluster, {
        ...(cluster.stream === undefined ? {} : { stream: cluster.stream }), nodeId, keep: plan.keep,
      })
      const removed = pruned.length === 0 ? '' : `; removed ${formatCount(pruned.length)} older`
      io.stderr.write(`published the snapshot ${snapshot.name} (position ${formatCount(snapshot.position)}, ${formatCount(snapshot.records)} records, ${formatCount(Math.ceil(snapshot.bytes / 2 ** 20))} MiB)${removed}\n`)
    } catch (err) {
      io.stderr.write(`publishing a snapshot failed (the next period tries again): ${err instanceof Error ? err.message : String(err)}\n`)
    }
  }
  const timer = setInterval(() => {
    if (inFlight === undefined) inFlight = publish().finally(() => (inFlight = undefined))
  }, plan.everyMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await inFlight
    },
  }
}
