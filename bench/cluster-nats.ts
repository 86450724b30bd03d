/**
 * NATS for the cluster bench (issue 21): the test harness's servers
 * (test/cluster/support/nats-cluster.ts: generated configs on loopback
 * ports, readiness observed, stopped by PID, a watchdog for leftovers), a
 * way to drop a case's stream so the next case starts on an empty disk,
 * a run's servers and scratch folder cleaned up whatever happens, and the reads that tell when a `serve --nats` node has applied a position.
 */
import { jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { startNatsCluster, type NatsCluster, type NatsClusterOptions } from '../test/cluster/support/nats-cluster.js'

export { startNatsCluster, natsServerPath, type NatsCluster } from '../test/cluster/support/nats-cluster.js'

/** Deletes a stream (a case's log), ignoring one that is already gone. */
export async function deleteStream(servers: readonly string[], stream: string): Promise<void> {
  const nc = await connect({ servers: [...servers], name: 'price-store bench' })
  try {
    const jsm = await jetstreamManager(nc)
    await jsm.streams.delete(stream).catch(() => false)
  } finally {
    await nc.close()
  }
}

/** The cheapest read: the newest BTC record, which any node holding data answers. */
const PROBE_PATH = '/prices?symbol=BTC&provider=redstone'

/**
 * Resolves once the node at `url` has applied `position`: a read with `minPosition` waits on the node until it
 * has (up to its own bound, then 503 `HTTP_POSITION_NOT_REACHED`, and this asks again), so the answer comes when
 * the position is applied, without polling. Connection errors (a node still starting) are retried every 20 ms.
 * @throws after `timeoutMs`, or on any other answer
 */
export async function readAtPosition(url: string, position: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    let status: number | undefined
    let body = ''
    try {
      const res = await fetch(`${url}${PROBE_PATH}&minPosition=${position}`, { signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) })
      status = res.status
      body = await res.text()
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not reach position ${position} within ${timeoutMs} ms (no answer)`)
      await delay(20)
      continue
    }
    if (status === 200) return
    if (status !== 503 || !body.includes('HTTP_POSITION_NOT_REACHED')) throw new Error(`${url} answered a read at position ${position} with ${status}: ${body.slice(0, 300)}`)
    if (Date.now() > deadline) throw new Error(`${url} did not reach position ${position} within ${timeoutMs} ms`)
  }
}

/**
 * Runs `use` with NATS servers the harness starts and a new scratch folder (`<tmp>/<scratchPrefix>...`); at the end,
 * on failure and on Ctrl-C too, the servers are stopped by PID (the harness's close) and the folder removed, once,
 * whoever asks first.
 */
export async function withNatsScratch<T>(scratchPrefix: string, cluster: NatsClusterOptions, use: (nats: NatsCluster, scratch: string) => Promise<T>): Promise<T> {
  const scratch = await mkdtemp(join(tmpdir(), scratchPrefix))
  let nats: NatsCluster | undefined
  let cleaned: Promise<void> | undefined
  const cleanup = (): Promise<void> => (cleaned ??= (async () => {
    await nats?.close()
    await rm(scratch, { recursive: true, force: true })
  })())
  const onSignal = (): void => void cleanup().finally(() => process.exit(130))
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    nats = await startNatsCluster(cluster)
    return await use(nats, scratch)
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await cleanup()
  }
}
