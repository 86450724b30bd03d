/**
 * Proves the NATS test harness (support/nats-cluster.ts) against real nats-server processes:
 * a 3-server JetStream cluster keeps an R3 stream writable while one server is SIGKILLed,
 * brings the restarted server's copy up to date, and keeps everything across a full stop and
 * start; one server with an R1 stream keeps its messages across restarts.
 */
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { setTimeout as delay } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster, type NatsCluster } from './support/nats-cluster.js'

const hasNats = natsServerPath() !== undefined
/**
 * Bounds each wait below; only a failure ever takes this long. A lost stream leader is replaced
 * after nats-server's RAFT election timeout (4-9 s), a split vote adds a round.
 */
const DEADLINE_MS = 45_000
/**
 * Per request: a request sent while the client is reconnecting can be lost (nats.js then
 * times out), so a short timeout and a retry beat the 5 s default.
 */
const REQUEST_TIMEOUT_MS = 2_000
/** A full stop and start of 3 servers elects a meta leader and then the stream's leader. */
const CLUSTER_TEST_TIMEOUT_MS = 180_000
const POLL_MS = 50
const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Polls `check` until it returns a value other than undefined; throws with the last reason at the deadline. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS
  let last = 'no attempt'
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
      last = 'not yet'
    } catch (err) {
      last = (err as Error).message
    }
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${DEADLINE_MS} ms (last: ${last})`)
    await delay(POLL_MS)
  }
}

/**
 * Publishes one message and returns its stream sequence, retrying on errors (a stream leader
 * moving, a reconnect) as a real writer does. The message id makes a retry of a publish that
 * did land a duplicate the server drops, so each message is stored once.
 */
async function publishWithRetry(js: JetStreamClient, subject: string, body: string, msgID: string): Promise<number> {
  return eventually(`publish ${msgID}`, async () => {
    const ack = await js.publish(subject, encoder.encode(body), { msgID, timeout: REQUEST_TIMEOUT_MS })
    return ack.seq
  })
}

async function publishRange(js: JetStreamClient, subject: string, from: number, to: number): Promise<number[]> {
  const seqs: number[] = []
  for (let n = from; n < to; n++) seqs.push(await publishWithRetry(js, subject, `message ${n}`, `m-${n}`))
  return seqs
}

/** The number of messages server i's own copy of `stream` holds, from its monitoring endpoint. */
async function messagesOnServer(cluster: NatsCluster, i: number, stream: string): Promise<number | undefined> {
  const response = await fetch(`${cluster.monitorUrl(i)}/jsz?accounts=true&streams=true`, { signal: AbortSignal.timeout(2_000) })
  const jsz = (await response.json()) as {
    account_details?: { stream_detail?: { name: string; state?: { messages?: number } }[] }[]
  }
  for (const account of jsz.account_details ?? []) {
    for (const detail of account.stream_detail ?? []) {
      if (detail.name === stream) return detail.state?.messages ?? 0
    }
  }
  return undefined
}

/** Waits until every server holds exactly `count` messages of `stream`. */
async function expectEveryServerHolds(cluster: NatsCluster, stream: string, count: number): Promise<void> {
  for (let i = 0; i < cluster.size; i++) {
    await eventually(`server ${cluster.serverName(i)} holding ${count} messages of ${stream}`, async () => {
      const held = await messagesOnServer(cluster, i, stream)
      return held === count ? true : undefined
    })
  }
}

/** Reads messages 1..count back through the client and checks each body. */
async function expectStreamContent(jsm: JetStreamManager, stream: string, count: number): Promise<void> {
  const info = await eventually(`stream info of ${stream}`, () => jsm.streams.info(stream))
  expect(info.state.messages).toBe(count)
  expect(info.state.first_seq).toBe(1)
  expect(info.state.last_seq).toBe(count)
  for (let seq = 1; seq <= count; seq++) {
    const msg = await eventually(`message ${seq} of ${stream}`, async () => (await jsm.streams.getMessage(stream, { seq })) ?? undefined)
    expect(decoder.decode(msg.data)).toBe(`message ${seq - 1}`)
  }
}

async function connectTo(cluster: NatsCluster): Promise<NatsConnection> {
  // Every url: the client moves to a live server when its own dies, and never gives up.
  return connect({ servers: [...cluster.urls], maxReconnectAttempts: -1, reconnectTimeWait: 100, name: 'nats-harness-test' })
}

describe.skipIf(!hasNats)(`NATS harness: 3-server JetStream cluster${hasNats ? '' : ` (${NATS_SKIP_REASON})`}`, () => {
  const stream = 'HARNESS3'
  let cluster: NatsCluster | undefined
  let nc: NatsConnection | undefined

  beforeAll(async () => {
    cluster = await startNatsCluster({ size: 3, name: 'harness3' })
    nc = await connectTo(cluster)
  })

  afterAll(async () => {
    await nc?.close()
    await cluster?.close()
  })

  it('starts three clustered servers on distinct loopback ports with one meta leader', async () => {
    const c = cluster!
    expect(c.size).toBe(3)
    expect(new Set(c.urls).size).toBe(3)
    for (const url of c.urls) expect(url).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/)
    for (let i = 0; i < 3; i++) expect(c.pid(i)).toBeGreaterThan(0)
    const leaders = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const jsz = (await (await fetch(`${c.monitorUrl(i)}/jsz`)).json()) as { meta_cluster?: { leader?: string; cluster_size?: number } }
        return jsz.meta_cluster?.leader
      }),
    )
    expect(new Set(leaders).size).toBe(1)
    expect(['n0', 'n1', 'n2']).toContain(leaders[0])
  })

  it('keeps an R3 stream writable through a SIGKILLed server, its restart and a full stop/start', async () => {
    const c = cluster!
    const js = jetstream(nc!, { timeout: REQUEST_TIMEOUT_MS })
    const jsm = await jetstreamManager(nc!, { timeout: REQUEST_TIMEOUT_MS })
    await jsm.streams.add({ name: stream, subjects: ['harness3.>'], num_replicas: 3 })

    expect(await publishRange(js, 'harness3.prices', 0, 100)).toEqual(Array.from({ length: 100 }, (_, k) => k + 1))
    await expectEveryServerHolds(c, stream, 100)

    const killedPid = c.pid(0)!
    await c.kill(0)
    expect(c.pid(0)).toBeUndefined()
    expect(() => process.kill(killedPid, 0)).toThrow()
    // Two of three servers are a quorum: writes go on (retried while the stream leader moves).
    expect(await publishRange(js, 'harness3.prices', 100, 150)).toEqual(Array.from({ length: 50 }, (_, k) => k + 101))

    await c.start(0)
    expect(c.pid(0)).toBeGreaterThan(0)
    await expectEveryServerHolds(c, stream, 150)
    await expectStreamContent(jsm, stream, 150)

    await c.stopAll()
    for (let i = 0; i < 3; i++) expect(c.pid(i)).toBeUndefined()
    await c.startAll()
    await expectEveryServerHolds(c, stream, 150)
    await expectStreamContent(jsm, stream, 150)
    // And it still takes writes after the restart.
    expect(await publishWithRetry(js, 'harness3.prices', 'message 150', 'm-150')).toBe(151)
    await expectEveryServerHolds(c, stream, 151)
  }, CLUSTER_TEST_TIMEOUT_MS)
})

describe.skipIf(!hasNats)(`NATS harness: 1 server, R1 stream${hasNats ? '' : ` (${NATS_SKIP_REASON})`}`, () => {
  const stream = 'HARNESS1'
  let cluster: NatsCluster | undefined
  let nc: NatsConnection | undefined

  beforeAll(async () => {
    cluster = await startNatsCluster({ size: 1, name: 'harness1' })
    nc = await connectTo(cluster)
  })

  afterAll(async () => {
    await nc?.close()
    await cluster?.close()
  })

  it('keeps an R1 stream across a SIGKILL, a stop/start and a pause', async () => {
    const c = cluster!
    expect(c.urls).toHaveLength(1)
    const js = jetstream(nc!, { timeout: REQUEST_TIMEOUT_MS })
    const jsm = await jetstreamManager(nc!, { timeout: REQUEST_TIMEOUT_MS })
    await jsm.streams.add({ name: stream, subjects: ['harness1.>'], num_replicas: 1 })
    expect(await publishRange(js, 'harness1.prices', 0, 50)).toEqual(Array.from({ length: 50 }, (_, k) => k + 1))

    await c.kill(0)
    await c.start(0)
    await expectEveryServerHolds(c, stream, 50)

    await c.stopAll()
    await c.startAll()
    await expectEveryServerHolds(c, stream, 50)
    await expectStreamContent(jsm, stream, 50)

    // SIGSTOP is pause(), not a kill: kill() only takes signals that end the process.
    await expect(c.kill(0, 'SIGSTOP')).rejects.toThrow(RangeError)
    c.pause(0)
    c.resume(0)
    await c.waitReady()
    await expectEveryServerHolds(c, stream, 50)
  })

  it('removes its folder on close', async () => {
    const { existsSync } = await import('node:fs')
    const other = await startNatsCluster({ size: 1, name: 'harness-close' })
    const pid = other.pid(0)!
    expect(existsSync(other.dir)).toBe(true)
    await other.close()
    expect(existsSync(other.dir)).toBe(false)
    expect(() => process.kill(pid, 0)).toThrow()
    await other.close()
  })
})
