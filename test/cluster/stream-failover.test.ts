/**
 * A live-stream client failing over between price-store nodes (issue 21): a real `EventSource`
 * (package `eventsource`) follows node A's `GET /prices/stream` from the start while batches are
 * written through node C. Node B is frozen (SIGSTOP) so that it falls behind A, then A is killed with
 * SIGKILL. The client's `fetch` plays the load balancer, sending its reconnection to B; the
 * `EventSource` reconnects by itself and sends `Last-Event-ID` itself, naming a position B has not
 * applied yet when the request reaches it (B is resumed only once the request is on its way). The
 * events the client receives must be the stream of commits exactly: `prices` events with ids 1, 2, 3 ...
 * up to the stream's last commit, no gap, no duplicate, no `reset`, each equal to B's own replay of
 * that commit (`?after=0`).
 *
 * One NATS server with an R1 stream (the laptop setup); the node faults are what this is about.
 */
import { EventSource } from 'eventsource'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkNodesAgree, streamLastSequence, waitConverged } from './support/cluster-checks.js'
import { ClusterWriter } from './support/cluster-writer.js'
import { startFaultCluster, type FaultCluster } from './support/fault-cluster.js'
import { NATS_SKIP_REASON, natsServerPath, type NatsCluster } from './support/nats-cluster.js'
import { eventually, type NodeProcess } from './support/node-process.js'
import { readStream, type StreamEvent } from './support/sse-replay.js'

const STREAM = 'FAILOVER'

describe.skipIf(!natsServerPath())(`a live-stream client failing over to another node (1 NATS server, R1) ${natsServerPath() ? '' : NATS_SKIP_REASON}`, () => {
  let cluster: FaultCluster | undefined
  let nats: NatsCluster | undefined
  let nodes: readonly NodeProcess[] = []
  const context = (): string => cluster?.context() ?? ''

  beforeAll(async () => {
    cluster = await startFaultCluster({ name: 'failover', stream: STREAM, servers: 1 })
    ;({ nats, nodes } = cluster)
  }, 120_000)

  afterAll(async () => {
    await cluster?.close()
  })

  it('an EventSource following a node that is killed resumes on a node behind it with no gap and no duplicate', async () => {
    const [a, b, c] = nodes as [NodeProcess, NodeProcess, NodeProcess]
    const writer = new ClusterWriter(() => [c.url])
    const received: StreamEvent[] = []
    const requests: { node: string; lastEventId: string | undefined }[] = []
    let target = a
    let reachedB: () => void = () => {}
    const requestToB = new Promise<void>((resolve) => (reachedB = resolve))
    // The load balancer: each (re)connection goes to the current target, the URL's path and query kept.
    const source = new EventSource(`${a.url}/prices/stream?after=0`, {
      fetch: (input, init) => {
        const url = new URL(String(input))
        const node = target
        const headers = (init?.headers ?? {}) as Record<string, string>
        requests.push({ node: node.name, lastEventId: headers['Last-Event-ID'] })
        if (node === b) reachedB()
        return fetch(`${node.url}${url.pathname}${url.search}`, init)
      },
    })
    for (const type of ['ready', 'prices', 'progress', 'reset', 'overflow', 'end']) {
      source.addEventListener(type, (event) => received.push({ type, id: event.lastEventId, data: event.data }))
    }
    // Event ids are portable positions, `N.tag`: the position, and a tag of the commit's id.
    const positionOf = (id: string | undefined): number => Number((id ?? '0').split('.')[0])
    const lastPricesId = (): number => positionOf(received.filter((event) => event.type === 'prices').at(-1)?.id)
    let writing: Promise<void> | undefined
    let done = false
    let bAtPause = 0
    try {
      writing = writer.writeUntil(() => done, 2)
      await eventually('the client following a', async () => (lastPricesId() >= 10 ? true : undefined), context)
      bAtPause = (await b.replication()).position
      b.pause()
      // a goes on applying while b is frozen: the client's position passes b's.
      await eventually('the client ahead of b', async () => (lastPricesId() >= bAtPause + 10 ? true : undefined), context)
      target = b
      await a.kill()
      // The EventSource reconnects by itself; b is resumed only once that request is on its way to it.
      await eventually('the client reconnecting to b', async () => (requests.some((request) => request.node === 'b') ? true : undefined), context)
      await requestToB
      b.resume()
      const atFailover = lastPricesId()
      await eventually('the client following b', async () => (lastPricesId() >= atFailover + 10 ? true : undefined), context)
    } finally {
      done = true
      if (b.running) b.resume()
      await writing
    }
    expect(writer.failed()).toEqual([])
    const last = await waitConverged([b, c], nats!.urls, STREAM)
    expect(last).toBeGreaterThanOrEqual(writer.newestAckedPosition())
    await eventually('the client at the last commit', async () => (lastPricesId() === last ? true : undefined), context)
    source.close()

    // The reconnection named the last event received from a, which b had not applied when it was sent.
    const toB = requests.find((request) => request.node === 'b')
    const fromA = received.filter((event) => event.type !== 'ready')
    expect(positionOf(toB?.lastEventId), `requests: ${JSON.stringify(requests)}`).toBeGreaterThan(bAtPause)
    // It named a's commit as well, and b, once it had applied that position, held the same commit there: no reset.
    expect(toB?.lastEventId).toMatch(/^[0-9]+\.[0-9a-f]{8}$/)
    expect(received.filter((event) => event.type === 'reset'), 'a reset: the stream was not resumed').toEqual([])
    const prices = received.filter((event) => event.type === 'prices')
    expect(prices.map((event) => positionOf(event.id))).toEqual(Array.from({ length: last }, (_, i) => i + 1))
    expect(prices.every((event) => /^[0-9]+\.[0-9a-f]{8}$/.test(event.id))).toBe(true)
    // Each commit exactly as b replays it.
    const replay = await readStream(`${b.url}/prices/stream?after=0`, last)
    expect(prices).toEqual(replay.filter((event) => event.type === 'prices'))
    expect(fromA.length).toBeGreaterThan(0)
    expect(await streamLastSequence(nats!.urls, STREAM)).toBe(last)
    await checkNodesAgree([b, c], writer)
  }, 120_000)
})
