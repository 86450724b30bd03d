/**
 * TLS to three clustered NATS servers (routes on TLS too) that verify
 * clients, with a CA and certificates the test makes with openssl in the
 * harness's temp folder: a node with the CA and its client certificate
 * starts on an R3 stream and takes writes (tls:// URLs too); without the CA
 * the servers' certificate is refused; a client without TLS options cannot
 * connect. (A node without a client certificate is not tested: nats.js 3.4
 * never settles its connect when the server drops it after a TLS 1.3
 * handshake.)
 */
import { connect } from '@nats-io/transport-node'
import { MemoryLevel } from 'memory-level'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ClusterNode, type NatsTls } from '../../src/cluster.js'
import { PriceStore } from '../../src/index.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster, type NatsCluster } from './support/nats-cluster.js'
import { timedBatch } from './support/store-fixtures.js'

let nats: NatsCluster | undefined
const cleanup: (() => Promise<unknown>)[] = []

beforeAll(async () => {
  if (natsServerPath() !== undefined) nats = await startNatsCluster({ size: 3, name: 'tls', tls: { verifyClients: true } })
}, 120_000)
afterAll(async () => {
  await nats?.close()
})
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {})
})

function files(): { full: NatsTls; noCa: NatsTls } {
  const certs = nats?.certificates
  if (certs === undefined) throw new Error('the cluster was started without certificates')
  return {
    full: { caFile: certs.caFile, certFile: certs.clientCertFile, keyFile: certs.clientKeyFile },
    noCa: { certFile: certs.clientCertFile, keyFile: certs.clientKeyFile },
  }
}

async function openStore(): Promise<PriceStore> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  cleanup.push(() => store.close())
  return store
}

async function failure(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  return await promise.then(() => { throw new Error('expected a failure') }, (err: Error) => err)
}

describe.skipIf(natsServerPath() === undefined)(`TLS to a NATS cluster that verifies clients${natsServerPath() === undefined ? ` (${NATS_SKIP_REASON})` : ''}`, () => {
  it('a node with the test CA and its client certificate starts on an R3 stream and takes writes; tls:// URLs too', async () => {
    const urls = nats?.urls ?? []
    const a = await openStore()
    const b = await openStore()
    const nodeA = await ClusterNode.start(a, { servers: urls, tls: files().full })
    cleanup.push(() => nodeA.stop())
    const nodeB = await ClusterNode.start(b, { servers: urls.map((url) => url.replace('nats://', 'tls://')), tls: files().full })
    cleanup.push(() => nodeB.stop())
    const { position } = await nodeA.putBatch(timedBatch(0, 3))
    expect(await nodeB.waitForPosition(position, 20_000)).toBe(true)
    expect(b.position).toBe(position)
    expect(nodeA.replication()).toMatchObject({ state: 'applying', position })
  })

  it("without the CA, the servers' certificate is refused", async () => {
    const err = await failure(ClusterNode.start(await openStore(), { servers: nats?.urls ?? [], stream: 'NOCA', tls: files().noCa }))
    expect(err).toMatchObject({ code: 'PRICE_LOG_UNAVAILABLE' })
    expect(err.message).toMatch(/certificate/i)
  })

  it('a client without TLS options cannot connect', async () => {
    await expect(connect({ servers: [...(nats?.urls ?? [])] })).rejects.toThrow()
  })
})
