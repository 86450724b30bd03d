/**
 * CORS in a real browser (issue 23): a page served from another origin
 * (another port of 127.0.0.1) reads `/prices` (with a header that needs a
 * preflight, `x-min-position`) and the live stream (`EventSource`) when
 * the server allows its origin, and is refused without `cors`; a write
 * from it is refused by the browser even with `cors: '*'`. Chromium also
 * decodes the brotli answers it asked for. Skipped, saying why, when no
 * chromium binary is installed.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import type { PriceStore } from '../../../src/index.js'
import { openDemoStore } from '../../support/http/demo-server.js'
import { SKIP_REASON, chromium } from '../../support/browser-page.js'

const TOKEN = 'cors-browser-token-0123456789abcdef'

/** The browser globals the page-side callbacks use: the test's own tsconfig has no DOM types. */
declare const EventSource: new (url: string) => { onmessage: unknown; addEventListener(type: string, listener: (event: { data: string }) => void): void; onerror: (() => void) | null; close(): void }

describe.skipIf(chromium === undefined)(chromium === undefined ? `CORS in a browser: SKIPPED, ${SKIP_REASON}` : 'CORS in chromium', () => {
  let store: PriceStore
  let closed: RunningServer
  let open: RunningServer
  let app: Server
  let appOrigin: string
  let browser: Browser
  let page: Page

  beforeAll(async () => {
    ;({ store } = await openDemoStore())
    closed = await startServer({ store })
    open = await startServer({ store, writeToken: TOKEN, cors: { origins: '*' } })
    // The page's own origin: a blank page, from which the test's scripts call the price servers.
    app = createServer((_req, res) => res.end('<!doctype html><title>app</title>'))
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
    appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`
    browser = await puppeteer.launch({
      executablePath: chromium!, // set whenever this suite runs
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    })
    page = await browser.newPage()
    await page.goto(`${appOrigin}/`)
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await new Promise((resolve) => app?.close(resolve))
    await Promise.all([closed?.close(), open?.close()])
    await store?.close()
  })

  /** What `fetch` from the page gives: the status and text, or the error's name when the browser refused. */
  function fetchFromPage(url: string, init: Record<string, unknown> = {}): Promise<{ status?: number; text?: string; encoding?: string | null; error?: string }> {
    return page.evaluate(async (target: string, options: Record<string, unknown>) => {
      try {
        const response = await fetch(target, options)
        return { status: response.status, text: await response.text() }
      } catch (err) {
        return { error: (err as Error).name }
      }
    }, url, init)
  }

  it('a read with a preflighted header gets through with cors, and is refused without', async () => {
    const init = { headers: { 'x-min-position': '0' } }
    const allowed = await fetchFromPage(`${open.url}/prices?symbols=BTC,ETH`, init)
    expect(allowed.status).toBe(200)
    const direct = await (await fetch(`${open.url}/prices?symbols=BTC,ETH`)).text()
    expect(allowed.text).toBe(direct) // chromium asked for br, and decoded it
    expect(await fetchFromPage(`${closed.url}/prices?symbol=BTC`)).toEqual({ error: 'TypeError' })
  })

  it('the live stream: an EventSource from the page gets its first event (ready)', async () => {
    const first = await page.evaluate((url: string) => new Promise<string>((resolve) => {
      const source = new EventSource(url)
      source.addEventListener('ready', (event) => {
        source.close()
        resolve(event.data)
      })
      source.onerror = () => {
        source.close()
        resolve('error')
      }
    }), `${open.url}/prices/stream?symbols=BTC`)
    expect(JSON.parse(first)).toHaveProperty("position")
  })

  it('a write from the page is refused by the browser, even with cors: "*"', async () => {
    const write = await fetchFromPage(`${open.url}/prices`, {
      method: 'POST', body: '[]', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    })
    expect(write).toEqual({ error: 'TypeError' })
  })
})
