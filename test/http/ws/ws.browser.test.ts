/**
 * `/ws` in a real browser: a page of another origin (another port of
 * 127.0.0.1, the server allowing it with `cors`) opens a WebSocket,
 * subscribes, changes symbols without reconnecting and receives an update
 * of a commit written after. Skipped, saying why, when no chromium binary
 * is installed.
 */
import { MemoryLevel } from 'memory-level'
import type { Page } from 'puppeteer-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { PriceStore } from '../../../src/index.js'
import { T0, TEST_PROVIDER, makeRecord } from '../../../src/testing/records.js'
import { SKIP_REASON, chromium, openAppPage, type AppPage } from '../../support/browser-page.js'


/** The browser globals the page-side callbacks use: the test's own tsconfig has no DOM types. */
declare const WebSocket: new (url: string) => {
  onopen: (() => void) | null
  onmessage: ((event: { data: string }) => void) | null
  onclose: ((event: { code: number }) => void) | null
  send(text: string): void
  close(): void
}
declare const window: Record<string, unknown>

describe.skipIf(chromium === undefined)(chromium === undefined ? `/ws in a browser: SKIPPED, ${SKIP_REASON}` : '/ws in chromium', () => {
  let store: PriceStore
  let server: RunningServer
  let app: AppPage
  let page: Page

  beforeAll(async () => {
    store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
    server = await startServer({ store, cors: { origins: '*' } })
    app = await openAppPage()
    page = app.page
  }, 60_000)

  afterAll(async () => {
    await app?.close()
    await server?.close()
    await store?.close()
  })

  /** The messages the page has received so far, once there are at least `count`. */
  async function received(count: number): Promise<Record<string, unknown>[]> {
    await page.waitForFunction((n: number) => (window.received as unknown[]).length >= n, { timeout: 30_000 }, count)
    return page.evaluate(() => window.received as Record<string, unknown>[])
  }

  it('subscribes, changes symbols on the same connection and receives an update', async () => {
    await page.evaluate((url: string) => new Promise<void>((resolve, reject) => {
      const socket = new WebSocket(url)
      window.received = []
      window.socket = socket
      socket.onmessage = (event) => (window.received as unknown[]).push(JSON.parse(event.data))
      socket.onopen = () => resolve()
      socket.onclose = (event) => reject(new Error(`closed with ${event.code}`))
    }), `${server.url.replace('http', 'ws')}/ws`)
    const send = (message: unknown) => page.evaluate((text: string) => (window.socket as { send(text: string): void }).send(text), JSON.stringify(message))
    await send({ type: 'subscribe', id: 'page', symbols: ['BTC'] })
    expect((await received(1))[0]).toMatchObject({ type: 'subscribed', id: 'page', symbols: ['BTC'], unknown: ['BTC'] })
    // The same subscription, now following ETH instead.
    await send({ type: 'subscribe', id: 'page', symbols: ['ETH'] })
    expect((await received(2))[1]).toMatchObject({ type: 'subscribed', id: 'page', symbols: ['ETH'] })
    await store.putMany([makeRecord({ symbol: 'BTC', timestamp: T0 }), makeRecord({ symbol: 'ETH', timestamp: T0, value: 3210.5 })])
    const update = (await received(3))[2]
    expect(update).toMatchObject({ type: 'prices', id: 'page', position: store.position, eventId: String(store.position) })
    expect(update?.records).toEqual([expect.objectContaining({ symbol: 'ETH', value: 3210.5 })])
  }, 60_000)
})
