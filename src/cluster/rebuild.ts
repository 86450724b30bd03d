/**
 * A node's store rebuilt from the stream, to replace a store whose history
 * forked from it.
 *
 * A store forks from its stream when the stream lost commits the store
 * applied and gave their positions to other writes (lost-commits.ts): the
 * store holds other commits than the stream at those positions, and since a
 * position names one commit for good, it can never apply the stream again.
 * Its lost records are in the stream by then (the node sent them again
 * before it said it forked), so a store that follows the stream from its
 * first commit holds every record the forked one held, and every other.
 *
 * The new store starts from the newest snapshot in the stream's bucket that
 * the stream follows on from (its commit at its position is the stream's;
 * snapshots.ts), and applies only the stream's commits after it; without
 * one, it applies the stream from its first commit. The same path seeds a
 * new node, and a node whose position retention trimmed from the stream.
 *
 * The new store is built beside the old one, at `<location>.rebuild`, while
 * the old one goes on serving reads; then, with the old store closed,
 * {@link installRebuilt} puts it in place by two renames. Each step leaves
 * the directories in a state the next start finishes, so a process killed at
 * any point loses nothing:
 * - the rebuild carries a marker file until it reached its target and was
 *   closed (fsynced); a marked rebuild is removed at the next start;
 * - unmarked, it is complete: the old store goes to `<location>.forked`, the
 *   rebuild to `<location>`, and `<location>.forked` is removed.
 */
import { mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { PriceStoreError, isPriceStoreError } from '../errors.js'
import type { PriceStore } from '../store/price-store.js'
import { ClusterNode } from './cluster-node.js'
import { resolveClusterOptions, type ClusterOptions, type ResolvedClusterOptions } from './cluster-options.js'
import { openLog } from './follow-checks.js'
import { readOnlyView } from './read-only-log.js'
import type { Snapshot } from './snapshot-names.js'
import { restoreSnapshot } from './snapshot-restore.js'
import { listSnapshots } from './snapshots.js'

/** The file that marks `<location>.rebuild` as not complete yet. */
export const REBUILD_PARTIAL_MARKER = 'PRICE-STORE-REBUILD-PARTIAL'
/** How often a rebuild reports its progress (ms). */
const PROGRESS_EVERY_MS = 1_000

/** How far a rebuild has got. */
export interface RebuildProgress {
  /** The position the rebuilt store applied up to. */
  readonly position: number
  /** The stream's newest commit when the rebuild started: the rebuild is complete there. */
  readonly target: number
  /** The snapshot the rebuilt store started from, if any (else it applied the stream from its first commit). */
  readonly snapshot?: Snapshot | undefined
}

/** Options of {@link rebuildFromStream}. */
export interface RebuildOptions {
  /**
   * Opens (creating it) a store at a path, with the options of the store it replaces (the provider, the signature
   * policy): `path => PriceStore.open(path, options)`.
   */
  readonly open: (path: string) => Promise<PriceStore>
  /** The stream to rebuild from, and how to reach it (as the node's own options; its callbacks are not called). */
  readonly cluster: ClusterOptions
  /**
   * Whether to start from the newest snapshot in the stream's bucket that the stream follows on from (default true;
   * see `publishSnapshot`): restored, it applies only the stream's commits after it. Without a usable one, the
   * rebuild applies the stream from its first commit.
   */
  readonly fromSnapshots?: boolean
  /** Called about once a second while the rebuild applies the stream. */
  readonly onProgress?: (progress: RebuildProgress) => void
  /** Called with each snapshot passed over, and why (the stream does not follow on from it, it is damaged). */
  readonly onSnapshotSkipped?: (snapshot: Snapshot, reason: PriceStoreError) => void
  /** Ends the rebuild early (it throws the signal's reason, and leaves a marked directory the next rebuild removes). */
  readonly signal?: AbortSignal
}

/** The directory a store at `location` is rebuilt in. */
export function rebuildPathOf(location: string): string {
  return join(dirname(location), `${basename(location)}.rebuild`)
}

/** Where a snapshot is restored before it is marked and moved to the rebuild's directory. */
function seedPathOf(location: string): string {
  return join(dirname(location), `${basename(location)}.snapshot`)
}

/**
 * Builds, at `<location>.rebuild`, a store that applied the stream up to its newest commit as of the start, from the
 * newest usable snapshot or from the stream's first commit, and closes it; {@link installRebuilt} puts it in place of
 * the store at `location` once that one is closed. The store at `location` is not touched (it may go on serving).
 * @throws PriceStoreError `PRICE_REPLICA_DIVERGED` when no snapshot is usable and the stream no longer holds its
 *   first commit (retention trimmed it: restore a backup instead), `PRICE_LOG_UNAVAILABLE`, or the error that
 *   stopped the rebuilt store from applying the stream
 */
export async function rebuildFromStream(location: string, options: RebuildOptions): Promise<RebuildProgress> {
  const resolved = resolveClusterOptions({ ...options.cluster, startTimeoutMs: 0 })
  const snapshots = options.fromSnapshots === false ? [] : await listSnapshots(options.cluster, { stream: resolved.stream })
  for (const snapshot of snapshots) {
    try {
      return await buildFrom(location, snapshot, resolved, options)
    } catch (err) {
      // A snapshot the stream does not follow on from (trimmed past it, or another history), or a damaged one, is
      // passed over for an older one, and at last for the stream itself; anything else is the rebuild's failure.
      if (!isPriceStoreError(err) || !UNUSABLE_SNAPSHOT.has(err.code)) throw err
      options.onSnapshotSkipped?.(snapshot, err)
    }
  }
  return buildFrom(location, undefined, resolved, options)
}

/** What makes a snapshot unusable for a rebuild, rather than the rebuild fail. */
const UNUSABLE_SNAPSHOT: ReadonlySet<string> = new Set(['PRICE_REPLICA_DIVERGED', 'PRICE_CORRUPT_VALUE', 'PRICE_PROVIDER_MISMATCH', 'PRICE_UNSUPPORTED_FORMAT'])

/** One try: the store at `<location>.rebuild`, from `snapshot` (or empty), following the stream up to its newest commit. */
async function buildFrom(location: string, snapshot: Snapshot | undefined, resolved: ResolvedClusterOptions, options: RebuildOptions): Promise<RebuildProgress> {
  const path = rebuildPathOf(location)
  const seed = seedPathOf(location)
  await rm(path, { recursive: true, force: true })
  await rm(seed, { recursive: true, force: true })
  if (snapshot === undefined) {
    await mkdir(path, { recursive: true })
    await markPartial(path)
  } else {
    // Restored whole, then marked, then moved: a kill at any point leaves no unmarked directory at `path`.
    await restoreSnapshot(snapshot, seed)
    await markPartial(seed)
    await rename(seed, path)
  }
  const store = await options.open(path)
  try {
    // Read only, and with no reports of what it applied: a store that is not serving yet must not count for a write
    // concern, nor send anything to the stream.
    const log = readOnlyView(await openLog(resolved))
    const node = await ClusterNode.follow(store, log, { nodeId: resolved.nodeId, applyWaitMs: 0 }).catch(async (err: unknown) => {
      await log.close().catch(() => {})
      throw err
    })
    try {
      const target = await log.lastCommit()
      await applyUpTo(node, target, snapshot, options)
    } finally {
      await node.stop()
    }
    const progress = { position: store.position, target: store.position, snapshot }
    await store.close()
    await rm(join(path, REBUILD_PARTIAL_MARKER))
    await syncDirectory(path)
    return progress
  } finally {
    await store.close().catch(() => {})
  }
}

function markPartial(path: string): Promise<void> {
  return writeFile(join(path, REBUILD_PARTIAL_MARKER), 'a store being rebuilt from its stream: removed at the next rebuild or start\n')
}

/** Waits until the node applied `target`, reporting progress; throws what stopped it from applying. */
async function applyUpTo(node: ClusterNode, target: number, snapshot: Snapshot | undefined, options: RebuildOptions): Promise<void> {
  for (;;) {
    options.signal?.throwIfAborted()
    const reached = await node.waitForPosition(target, PROGRESS_EVERY_MS, options.signal)
    const status = node.replication()
    options.onProgress?.({ position: status.position, target, snapshot })
    if (reached) return
    if (status.state === 'failed' || status.state === 'stopped') {
      throw new PriceStoreError(status.error?.code === 'PRICE_REPLICA_DIVERGED' ? 'PRICE_REPLICA_DIVERGED' : 'PRICE_LOG_UNAVAILABLE',
        `rebuilding from the stream ${node.stream} stopped at position ${status.position}: ${status.error?.message ?? 'the node stopped applying'}`,
        { details: { position: status.position } })
    }
  }
}

/**
 * Finishes what a rebuild left beside the store at `location` (closed): a complete rebuild replaces the store, a
 * partial one is removed, and so is a forked store a finished swap left. Call it before opening the store.
 * @returns whether a rebuilt store was put in place
 */
export async function installRebuilt(location: string): Promise<boolean> {
  const path = rebuildPathOf(location)
  const forked = join(dirname(location), `${basename(location)}.forked`)
  await rm(seedPathOf(location), { recursive: true, force: true })
  let installed = false
  if (await exists(path)) {
    if (await exists(join(path, REBUILD_PARTIAL_MARKER))) {
      await rm(path, { recursive: true, force: true })
    } else {
      // The old store (absent if a swap was cut short after this first rename) goes aside before the new one moves in.
      if (await exists(location)) {
        await rm(forked, { recursive: true, force: true })
        await rename(location, forked)
      }
      await rename(path, location)
      await syncDirectory(dirname(location))
      installed = true
    }
  }
  await rm(forked, { recursive: true, force: true })
  return installed
}

/** Whether the error says the store forked from its stream, which holds every record the store holds. */
export function isForkedFromStream(err: unknown): boolean {
  return isPriceStoreError(err, 'PRICE_REPLICA_DIVERGED') && err.details.forked === true
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined
}

/** Makes the directory's entries (a file removed, a rename) durable. */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
