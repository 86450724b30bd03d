/**
 * The stream guards itself (one real JetStream server, no authorization):
 * an existing stream whose settings would lose commits is refused with
 * PRICE_LOG_UNAVAILABLE naming the setting, and left as it was; a stream a
 * node creates refuses message deletes and purges (one started at a store's
 * position on nats-server 2.9 keeps no deny_purge); an existing stream
 * without them is followed and left as it is; a guarded empty stream not
 * created by the node cannot be started at a position, and says so. Plus the connection options
 * refused before connecting, and TLS asked of a server that has none.
 */
import { jetstreamManager, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { MemoryLevel } from 'memory-level'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ClusterNode, type ClusterOptions } from '../../src/cluster.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster, type NatsCluster } from './support/nats-cluster.js'
import { timedBatch } from './support/store-fixtures.js'

const cleanup: (() => Promise<unknown>)[] = []
let nats: NatsCluster | undefined
let jsm: JetStreamManager
/** nats-server 2.10 or later: `first_seq` starts a new stream at a position, so it keeps deny_purge. */
let firstSeq = false

beforeAll(async () => {
  if (natsServerPath() === undefined) return
  nats = await startNatsCluster({ size: 1, name: 'guards' })
  const nc = await connect({ servers: [...nats.urls] })
  cleanup.push(() => nc.close())
  jsm = await jetstreamManager(nc)
  const [major = 0, minor = 0] = (nc.info?.version ?? '').split('.').map(Number)
  firstSeq = major > 2 || (major === 2 && minor >= 10)
}, 60_000)
afterAll(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
  await nats?.close()
})
const perTest: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const step of perTest.splice(0).reverse()) await step().catch(() => {})
})

async function openStore(commits = 0): Promise<PriceStore> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  perTest.push(() => store.close())
  for (let i = 0; i < commits; i++) await store.putMany(timedBatch(i * 2, 2))
  return store
}

function options(stream: string, extra: Partial<ClusterOptions> = {}): ClusterOptions {
  return { servers: nats?.urls ?? [], stream, ...extra }
}

async function startNode(store: PriceStore, stream: string, extra: Partial<ClusterOptions> = {}): Promise<ClusterNode> {
  const node = await ClusterNode.start(store, options(stream, extra))
  perTest.push(() => node.stop())
  return node
}

const subjects = (stream: string): string[] => [`price-store.${stream}.commit`, `price-store.${stream}.part`]

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string; details?: { parameter?: string } }> {
  return await promise.then(() => { throw new Error('expected a failure') }, (err: Error) => err)
}

describe.skipIf(natsServerPath() === undefined)(`the stream guards itself${natsServerPath() === undefined ? ` (${NATS_SKIP_REASON})` : ''}`, () => {
  const unsafe: [string, string, Partial<StreamConfig>, Partial<ClusterOptions>][] = [
    ['storage', 'memory', { storage: 'memory' as StreamConfig['storage'] }, {}],
    ['retention', 'work-queue', { retention: 'workqueue' as StreamConfig['retention'] }, {}],
    ['retention', 'interest', { retention: 'interest' as StreamConfig['retention'] }, {}],
    ['discard', 'new', { discard: 'new' as StreamConfig['discard'] }, {}],
    ['max_msgs_per_subject', 'set', { max_msgs_per_subject: 10 }, {}],
    ['num_replicas', 'fewer than asked', {}, { replicas: 3 }],
    ['subjects', 'a subject missing', { subjects: ['price-store.S7.commit'] }, {}],
  ]
  it.each(unsafe.map(([setting, what, config, extra], i) => ({ setting, what, config, extra, stream: `S${i + 1}` })))(
    'refuses an existing stream with $setting $what, naming it, and changes nothing', async ({ setting, config, extra, stream }) => {
      await jsm.streams.add({ name: stream, subjects: subjects(stream), ...config })
      const before = await jsm.streams.info(stream)
      const store = await openStore(2)
      const err = await failure(ClusterNode.start(store, options(stream, extra)))
      expect(err).toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE', details: { parameter: setting } })
      expect(err.message).toContain(`(${setting}`)
      const after = await jsm.streams.info(stream)
      expect(after.config).toEqual(before.config)
      expect(after.state.last_seq).toBe(0)
      expect(store.position).toBe(2)
    })

  it('a stream the node creates refuses message deletes and purges', async () => {
    const node = await startNode(await openStore(), 'NEW')
    expect((await jsm.streams.info('NEW')).config).toMatchObject({ deny_delete: true, deny_purge: true })
    const { position } = await node.putBatch(timedBatch(0, 2))
    await expect(jsm.streams.purge('NEW')).rejects.toThrow(/purge not permitted/)
    await expect(jsm.streams.deleteMessage('NEW', position)).rejects.toThrow(/not permitted/)
  })

  it('a store with commits and a new stream: the stream starts after the store position, refusing message deletes (and purges from 2.10)', async () => {
    const store = await openStore(3)
    const node = await startNode(store, 'ADOPT', { adoptEmptyStream: true })
    const info = await jsm.streams.info('ADOPT')
    expect(info.config).toMatchObject({ deny_delete: true, deny_purge: firstSeq })
    expect(info.state).toMatchObject({ messages: 0, first_seq: 4 })
    expect((await node.putBatch(timedBatch(10, 1))).position).toBe(4)
  })

  it('an existing stream without the guards is followed and left as it is', async () => {
    await jsm.streams.add({ name: 'OPEN', subjects: subjects('OPEN') })
    const nc = await connect({ servers: [...(nats?.urls ?? [])] })
    perTest.push(() => nc.close())
    // A part alone: the stream holds a message, and nodes apply nothing of it.
    await nc.request('price-store.OPEN.part', new Uint8Array([1]))
    const before = (await jsm.streams.info('OPEN')).config
    const node = await startNode(await openStore(), 'OPEN')
    expect((await node.putBatch(timedBatch(0, 1))).position).toBe(2)
    // An update of deny_purge would make a restarting nats-server 2.9.10 of a replicated stream crash.
    expect((await jsm.streams.info('OPEN')).config).toEqual(before)
  })

  it('a guarded empty stream cannot be started after a store position: PRICE_LOG_UNAVAILABLE naming deny_purge, nothing changed', async () => {
    await jsm.streams.add({ name: 'SHUT', subjects: subjects('SHUT'), deny_purge: true, deny_delete: true })
    const before = await jsm.streams.info('SHUT')
    const store = await openStore(2)
    const err = await failure(ClusterNode.start(store, options('SHUT', { adoptEmptyStream: true })))
    expect(err).toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE', details: { parameter: 'deny_purge' } })
    expect(err.message).toMatch(/cannot be started after this store's position 2/)
    expect((await jsm.streams.info('SHUT')).state).toEqual(before.state)
    expect(store.position).toBe(2)
  })

  it('TLS asked of a server without it is refused', async () => {
    const url = (nats?.urls[0] ?? '').replace('nats://', 'tls://')
    for (const given of [options('TLS', { tls: {} }), { servers: url, stream: 'TLS' }]) {
      const err = await failure(ClusterNode.start(await openStore(), given))
      expect(err).toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE' })
      expect(err.message).toMatch(/server does not support 'tls'/)
    }
    await expect(jsm.streams.info('TLS')).rejects.toThrow(/stream not found/)
  })

  it('refuses connection options it cannot use before connecting, naming the option and never a secret', async () => {
    const store = await openStore()
    const cases: [Partial<ClusterOptions>, string][] = [
      [{ auth: { user: 'u' } as never }, 'auth'],
      [{ auth: { user: 'u', password: 'secret-1', token: 'secret-2' } as never }, 'auth'],
      [{ auth: { token: '' } }, 'auth.token'],
      [{ servers: 'nats://u:secret-1@127.0.0.1:1', auth: { token: 'secret-2' } }, 'auth'],
      [{ servers: 'nats://u:secret-1@127.0.0.1:1,nats://v:secret-2@127.0.0.1:2' }, 'servers'],
      [{ tls: { certFile: 'cert.pem' } }, 'tls'],
      [{ tls: { ca: 'x' } as never }, 'tls'],
      [{ auth: { credsFile: '/nonexistent/node.creds' } }, 'auth.credsFile'],
      [{ auth: { nkeySeedFile: '/nonexistent/node.nk' } }, 'auth.nkeySeedFile'],
      [{ tls: { caFile: '/nonexistent/ca.pem' } }, 'tls.caFile'],
    ]
    for (const [given, parameter] of cases) {
      const err = await failure(ClusterNode.start(store, { ...options('NONE'), ...given }))
      expect(err, parameter).toMatchObject({ code: 'PRICE_INVALID_OPTIONS', details: { parameter } })
      expect(err.message).not.toMatch(/secret-/)
    }
    await expect(jsm.streams.info('NONE')).rejects.toThrow(/stream not found/)
  })
})
