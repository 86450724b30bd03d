/**
 * A new `serve --nats` node joins a cluster whose stream no longer holds its first commits (its
 * retention, `--nats-max-bytes`, trimmed them) by itself: it finds a snapshot in the stream's
 * bucket, restores it, applies the stream's commits after it, and serves every acknowledged write.
 * Without the snapshot such a node could not start (tested in rebuild.test.ts). Then that node is
 * stopped while the retention removes the commits after its position: started again, it finds the
 * gap and rebuilds from a newer snapshot before it serves; frozen (SIGSTOP) instead, resumed, it finds
 * the gap while it runs and rebuilds while it serves. The snapshots are published from a
 * stopped node's store, as `--snapshot-every-minutes` publishes them from a running node's. Every
 * wait is for an observable state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { publishSnapshot } from '../../src/cluster.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { checkNodesAgree, waitConverged } from './support/cluster-checks.js'
import { ClusterWriter } from './support/cluster-writer.js'
import { streamFirstSequence } from './support/stream-first.js'
import { startFaultCluster, type FaultCluster } from './support/fault-cluster.js'
import { NATS_SKIP_REASON, natsServerPath, type NatsCluster } from './support/nats-cluster.js'
import { type NodeProcess } from './support/node-process.js'

const STREAM = 'SERVE_SNAPSHOT'

describe.skipIf(!natsServerPath())(`a new serve node seeded from a snapshot ${natsServerPath() ? '' : NATS_SKIP_REASON}`, () => {
  let cluster: FaultCluster | undefined
  let nats: NatsCluster | undefined
  let nodes: readonly NodeProcess[] = []

  beforeAll(async () => {
    cluster = await startFaultCluster({ name: 'serve-snapshot', stream: STREAM, servers: 1, nodes: ['a', 'b'], start: false, extraArgs: ['--nats-max-bytes', String(64 * 1024)] })
    ;({ nats, nodes } = cluster)
  }, 120_000)

  afterAll(async () => {
    await cluster?.close()
  })

  it('joins a cluster whose stream retention trimmed its first commits, from the newest snapshot, and holds every acknowledged write', async () => {
    const [a, b] = nodes as [NodeProcess, NodeProcess]
    await a.start()
    const frozen = new Set<NodeProcess>()
    const writer = new ClusterWriter(() => nodes.filter((node) => node.serving && !frozen.has(node)).map((node) => node.url), { batchSize: 40 })
    await writer.writeMany(12)
    const position = await waitConverged([a], nats!.urls, STREAM)
    await a.stop()
    const store = await PriceStore.open(a.dbDir, { provider: TEST_PROVIDER })
    const { snapshot } = await publishSnapshot(store, { servers: nats!.urls }, { stream: STREAM, nodeId: 'a' }).finally(() => store.close())
    expect(snapshot.position).toBe(position)
    await a.start()
    await writer.writeMany(1)
    // The stream no longer holds its first commit (an empty node could not replay it), and still holds the snapshot's.
    const first = await streamFirstSequence(nats!.urls, STREAM)
    expect(first).toBeGreaterThan(1)
    expect(first).toBeLessThanOrEqual(snapshot.position)

    await b.start()
    expect(b.output()).toMatch(/a new node: its store is seeded from the newest snapshot/)
    expect(b.output()).toContain(`from the snapshot ${snapshot.name}`)
    await writer.writeMany(2)
    await waitConverged(nodes, nats!.urls, STREAM)

    // b is stopped while the stream's retention removes the commits after its position, and a newer snapshot is
    // published: started again, b finds the gap, and rebuilds its store from that snapshot before it serves.
    const stoppedAt = (await b.replication()).position
    await b.stop()
    await writer.writeMany(30)
    const ahead = await waitConverged([a], nats!.urls, STREAM)
    expect(await streamFirstSequence(nats!.urls, STREAM)).toBeGreaterThan(stoppedAt + 1) // b's next commit is gone
    await a.stop()
    const again = await PriceStore.open(a.dbDir, { provider: TEST_PROVIDER })
    const newer = (await publishSnapshot(again, { servers: nats!.urls }, { stream: STREAM, nodeId: 'a' }).finally(() => again.close())).snapshot
    expect(newer.position).toBe(ahead)
    await a.start()
    await b.start()
    expect(b.output()).toMatch(/the stream no longer holds the commits after this node's position/)
    expect(b.output()).toContain(`from the snapshot ${newer.name}`)
    await writer.writeMany(2)
    await waitConverged(nodes, nats!.urls, STREAM)

    // b is frozen (SIGSTOP) while the retention removes the commits after its position and a newer snapshot is
    // published: resumed, the running node finds the gap (what its consumer was sent before the trim, the leader no
    // longer holds), and rebuilds its store from that snapshot while it serves, on the same port.
    const frozenAt = (await b.replication()).position
    frozen.add(b)
    b.pause()
    await writer.writeMany(30)
    const later = await waitConverged([a], nats!.urls, STREAM)
    expect(await streamFirstSequence(nats!.urls, STREAM)).toBeGreaterThan(frozenAt + 1)
    await a.stop()
    const last = await PriceStore.open(a.dbDir, { provider: TEST_PROVIDER })
    const newest = (await publishSnapshot(last, { servers: nats!.urls }, { stream: STREAM, nodeId: 'a' }).finally(() => last.close())).snapshot
    expect(newest.position).toBe(later)
    await a.start()
    b.resume()
    frozen.delete(b)
    await waitConverged(nodes, nats!.urls, STREAM)
    expect(b.output()).toMatch(/the stream no longer holds the commits after this node's position[^\n]*\nrebuilding this node's store from the stream at [^\n]*, while it serves what it holds/)
    expect(b.output()).toContain(`from the snapshot ${newest.name}`)
    await writer.writeMany(2)
    await waitConverged(nodes, nats!.urls, STREAM)
    expect(writer.failed()).toEqual([])
    await checkNodesAgree(nodes, writer)
    expect((await b.replication()).state).toBe('applying')
  }, 300_000)
})
