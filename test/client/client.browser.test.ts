/**
 * `price-store/client` in a real browser: the client bundled for the page (tsup, for the browser platform, as
 * the package builds it), loaded by a page of another origin, with the browser's own fetch and WebSocket. Its
 * first node is a port nobody listens on, so the page's client fails over to the live server: it reads the
 * latest record, subscribes, and receives the update of a commit written after. Skipped, saying why, when no
 * chromium binary is installed.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import type { Page } from 'puppeteer-core'
import { build } from 'tsup'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../src/adapters/http/node.js'
import { PriceStore } from '../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../src/testing/records.js'
import { SKIP_REASON, chromium, openAppPage, type AppPage } from '../support/browser-page.js'


/** The page's globals: the test's own tsconfig has no DOM types. */
declare const window: Record<string, unknown>
interface PageClient {
  latest(symbol: string): Promise<unknown>
  subscribe(symbols: string[]): AsyncIterable<unknown>
  readonly node: string
}
declare const PriceStoreClient: { PriceClient: new (options: { nodes: string[] }) => PageClient }

/** A port nothing listens on: one the kernel gave and took back. */
async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

describe.skipIf(chromium === undefined)(chromium === undefined ? `price-store/client in a browser: SKIPPED, ${SKIP_REASON}` : 'price-store/client in chromium', () => {
  let dir: string
  let store: PriceStore
  let server: RunningServer
  let app: AppPage
  let page: Page

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'price-store-client-page-'))
    await build({
      entry: { client: 'src/client.ts' }, format: ['iife'], globalName: 'PriceStoreClient', platform: 'browser', target: 'es2022',
      outDir: dir, config: false, silent: true, outExtension: () => ({ js: '.js' }),
    })
    const script = await readFile(join(dir, 'client.js'))
    store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
    await store.put(makeRecord({ symbol: 'BTC', timestamp: T0, value: 100 }))
    server = await startServer({ store, cors: { origins: '*' } })
    app = await openAppPage((req, res) => {
      if (req.url === '/client.js') res.setHeader('content-type', 'text/javascript').end(script)
      else res.setHeader('content-type', 'text/html').end('<!doctype html><title>app</title><script src="/client.js"></script>')
    })
    page = app.page
  }, 60_000)

  afterAll(async () => {
    await app?.close()
    await server?.close()
    await store?.close()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  it('reads and subscribes through the browser\'s fetch and WebSocket, passing over a dead node', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`
    const latest = await page.evaluate(async (nodes: string[]) => {
      const client = new PriceStoreClient.PriceClient({ nodes })
      window.client = client
      window.updates = []
      const record = await client.latest('BTC')
      void (async () => {
        for await (const update of client.subscribe(['BTC'])) (window.updates as unknown[]).push(update)
      })().catch((err: unknown) => (window.failure = String(err)))
      return { record, node: client.node }
    }, [dead, server.url])
    expect(latest).toEqual({ record: expect.objectContaining({ symbol: 'BTC', value: 100 }), node: server.url })

    await page.waitForFunction(() => (window.updates as unknown[]).length >= 1 || window.failure !== undefined, { timeout: 30_000 })
    expect(await page.evaluate(() => window.failure)).toBeUndefined()
    expect(await page.evaluate(() => window.updates)).toEqual([{ type: 'connected', node: server.url, eventId: '1', position: 1, resumed: false, unknown: [] }])
    await store.put(makeRecord({ symbol: 'BTC', timestamp: T0 + 1_000, value: 101.5 }))
    await page.waitForFunction(() => (window.updates as unknown[]).length >= 2 || window.failure !== undefined, { timeout: 30_000 })
    const updates = await page.evaluate(() => window.updates as Record<string, unknown>[])
    expect(updates[1]).toMatchObject({ type: 'prices', node: server.url, eventId: '2', position: 2, records: [expect.objectContaining({ symbol: 'BTC', value: 101.5 })] })
  }, 60_000)
})
