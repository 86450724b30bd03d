/**
 * A primary served over HTTP and a follower of it (`HttpFollowLog`), as the follow tests start
 * them: each registers its stop in the test's cleanup list, run in reverse after each test.
 */
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { ClusterNode, HttpFollowLog } from '../../../src/cluster.js'
import type { PriceStore } from '../../../src/index.js'

/** Steps a test's `afterEach` runs, last first. */
export type CleanupSteps = (() => Promise<void>)[]

/** Serves `store` on a loopback port (0: a free one). */
export async function servePrimary(cleanup: CleanupSteps, store: PriceStore, port = 0): Promise<RunningServer> {
  const server = await startServer({ store, port })
  cleanup.push(() => server.close())
  return server
}

/** Makes `store` a read copy of the primary at `url`, answering writes at once (no wait for its own apply). */
export async function followPrimary(cleanup: CleanupSteps, store: PriceStore, url: string): Promise<ClusterNode> {
  const node = await ClusterNode.follow(store, new HttpFollowLog(url, store.provider), { applyWaitMs: 0 })
  cleanup.push(() => node.stop())
  return node
}
