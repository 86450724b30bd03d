/**
 * The chart page at `/` in a real browser: Debian's chromium, driven by
 * puppeteer-core, against a real server over a store of demo data. The
 * page's script is built here first with the build's own options
 * (tsup.config.ts), since tests run before `npm run build`.
 *
 * Skipped, saying why, when no chromium binary is installed (`.ci/run`
 * installs one; set CHROMIUM_PATH to use another).
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import { build } from 'tsup'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningServer } from '../../../src/adapters/http/node.js'
import { startServer } from '../../../src/adapters/http/node.js'
import type { DemoRecord } from '../../../src/demo/demo-data.js'
import type { PriceStore } from '../../../src/index.js'
import { chartPageBuild } from '../../../tsup.config.js'
import { openDemoStore } from '../../support/http/demo-server.js'
import { referenceQuality } from '../../../src/testing/index.js'

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']
const chromium = CANDIDATES.find((path): path is string => path !== undefined && path !== '' && existsSync(path))
const SKIP_REASON = 'no chromium binary (looked for $CHROMIUM_PATH, /usr/bin/chromium, /usr/bin/chromium-browser, /usr/bin/google-chrome; `apt-get install chromium`)'
/** Where the screenshot goes (git-ignored). */
const SCREENSHOT = new URL('../../../test-results/chart-page.png', import.meta.url).pathname

/** The page's candle colours, as chart-app.ts sets them. */
const UP_RGB = [0x08, 0x99, 0x81] as const
const DOWN_RGB = [0xf2, 0x36, 0x45] as const

interface Bar {
  time: number
  open: number
  high: number
  low: number
  close: number
}

/** The browser globals the page-side callbacks use: the test's own tsconfig has no DOM types. */
interface CanvasLike {
  readonly width: number
  readonly height: number
  getContext(kind: '2d'): { getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray } } | null
}
declare const document: { querySelectorAll(selector: string): Iterable<CanvasLike> }
declare const window: { priceStoreChart?: PageState }

interface PageState {
  state: string
  symbol?: string
  resolution?: string
  bars: number
  data: Bar[]
  latest?: { value: number; timestamp: number }
  health?: { age: number | null; medianGap: number | null; maxGap: number | null; threshold: number | null; over: number; bars: number; marked: number }
}

/**
 * The bars the page should draw, computed from the raw records: the
 * window's `seconds` end just after the symbol's latest record (the page's
 * rule); every bucket of `interval` ms that overlaps it counts whole, with
 * its first and last record (by timestamp, then id) and its extremes.
 */
function expectedBars(records: readonly DemoRecord[], symbol: string, seconds: number, interval: number): Bar[] {
  const own = records.filter((record) => record.symbol === symbol)
  const latest = Math.max(...own.map((record) => record.timestamp))
  const to = (Math.floor(latest / 1000) + 1) * 1000
  const from = to - seconds * 1000
  const buckets = new Map<number, DemoRecord[]>()
  for (const record of own) {
    const start = Math.floor(record.timestamp / interval) * interval
    if (start + interval <= from || start >= to) continue
    const bucket = buckets.get(start) ?? []
    bucket.push(record)
    buckets.set(start, bucket)
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, bucket]) => {
      bucket.sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : 1))
      const values = bucket.map((record) => record.value)
      return { time: start / 1000, open: values[0]!, high: Math.max(...values), low: Math.min(...values), close: values.at(-1)! }
    })
}

// Said where CI logs show it, not only in the skipped suite's name.
if (chromium === undefined) console.warn(`chart-page.browser.test.ts: the browser test is skipped: ${SKIP_REASON}`)

describe.skipIf(chromium === undefined)(chromium === undefined ? `chart page: SKIPPED, ${SKIP_REASON}` : 'the chart page in chromium', () => {
  let dir: string
  let store: PriceStore
  let records: DemoRecord[]
  let server: RunningServer
  let browser: Browser
  let page: Page
  const requests: string[] = []
  const problems: string[] = []
  const suiteStarted = Date.now()

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'price-store-chart-page-'))
    await build({ ...chartPageBuild, outDir: dir, config: false, silent: true })
    ;({ store, records } = await openDemoStore())
    server = await startServer({ store, chartScript: join(dir, 'page', 'chart.js') })
    browser = await puppeteer.launch({
      executablePath: chromium!, // set whenever this suite runs
      headless: true,
      // Root in a container has no user namespaces for the sandbox; /dev/shm may be tiny.
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--force-device-scale-factor=1'],
      defaultViewport: { width: 1000, height: 700 },
    })
    page = await browser.newPage()
    page.on('request', (request) => requests.push(request.url()))
    page.on('console', (message) => {
      // Errors only: the pixel check's own canvas readbacks make chromium warn.
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`)
    })
    page.on('pageerror', (err) => problems.push(`page error: ${err instanceof Error ? err.message : String(err)}`))
  })

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await store?.close()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  async function waitForChart(symbol: string, resolution: string): Promise<PageState> {
    await page.waitForFunction(
      (s, r) => {
        const state = window.priceStoreChart
        return state !== undefined && state.state !== 'loading' && state.symbol === s && state.resolution === r
      },
      { timeout: 15_000 },
      symbol,
      resolution,
    )
    return page.evaluate(() => window.priceStoreChart!)
  }

  /** Pixels of each candle colour on the chart's canvases. */
  function candlePixels(): Promise<{ up: number; down: number; canvases: number }> {
    return page.evaluate(
      (up, down) => {
        let upCount = 0
        let downCount = 0
        const canvases = [...document.querySelectorAll('#chart canvas')]
        for (const canvas of canvases) {
          if (canvas.width === 0 || canvas.height === 0) continue
          const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data
          for (let i = 0; i < pixels.length; i += 4) {
            if (pixels[i + 3] !== 255) continue
            if (pixels[i] === up[0] && pixels[i + 1] === up[1] && pixels[i + 2] === up[2]) upCount++
            else if (pixels[i] === down[0] && pixels[i + 1] === down[1] && pixels[i + 2] === down[2]) downCount++
          }
        }
        return { up: upCount, down: downCount, canvases: canvases.length }
      },
      UP_RGB,
      DOWN_RGB,
    )
  }

  it('loads /, draws the candles of BTC (6 hours of 5-minute bars by default) and its latest price', async () => {
    const response = await page.goto(`${server.url}/`, { waitUntil: 'load' })
    expect(response?.status()).toBe(200)
    const state = await waitForChart('BTC', '5')
    await mkdir(join(SCREENSHOT, '..'), { recursive: true })
    await page.screenshot({ path: SCREENSHOT as `${string}.png` })

    const expected = expectedBars(records, 'BTC', 21_600, 300_000)
    expect(expected.length).toBeGreaterThan(10)
    expect(state.state).toBe('ready')
    expect(state.bars).toBe(expected.length)
    expect(state.data).toEqual(expected)

    const btc = records.filter((record) => record.symbol === 'BTC').sort((a, b) => b.timestamp - a.timestamp)[0]!
    expect(state.latest).toEqual({ value: btc.value, timestamp: btc.timestamp })
    const latestText = await page.$eval('#latest', (element) => element.textContent ?? '')
    expect(latestText).toContain('BTC')
    expect(latestText).toContain(new Date(btc.timestamp).toISOString().slice(0, 16).replace('T', ' '))
    expect(await page.$eval('#status', (element) => element.textContent ?? '')).toContain(`${expected.length} bars of BTC`)

    // Drawn, not only handed over: both candle colours are on the canvas, as the data says.
    const rising = expected.filter((bar) => bar.close > bar.open).length
    const falling = expected.filter((bar) => bar.close < bar.open).length
    expect(rising).toBeGreaterThan(0)
    expect(falling).toBeGreaterThan(0)
    const pixels = await candlePixels()
    expect(pixels.canvases).toBeGreaterThan(0)
    expect(pixels.up).toBeGreaterThan(rising * 10)
    expect(pixels.down).toBeGreaterThan(falling * 10)
  })

  it('shows the feed health under the candles: records per bar from /prices/quality, gaps over the heartbeat marked, the age', async () => {
    const state = await waitForChart('BTC', '5')
    const health = state.health!
    const btc = records.filter((record) => record.symbol === 'BTC')
    const latest = Math.max(...btc.map((record) => record.timestamp))
    const to = (Math.floor(latest / 1000) + 1) * 1000
    // What the reference model says of that window, on the page's grid (5-minute bars).
    const want = referenceQuality(records as never, { symbols: ['BTC'], from: to - 21_600_000, to, now: suiteStarted, interval: 300_000, moves: false }) as {
      symbols: { gaps: { median: number; max: number; threshold: number; over: number }; buckets: { records: number; gaps: { over: number } }[] }[]
    }
    const [expected] = want.symbols
    expect(health).toMatchObject({ bars: expected!.buckets.length, medianGap: expected!.gaps.median, maxGap: expected!.gaps.max, threshold: expected!.gaps.threshold, over: expected!.gaps.over })
    expect(health.marked).toBe(expected!.buckets.filter((bucket) => bucket.records === 0 || bucket.gaps.over > 0).length)
    expect(health.bars).toBeGreaterThan(60)
    // Its newest record is long past (2024): the age is measured from the server's clock, while this suite ran.
    expect(health.age).toBeGreaterThanOrEqual(suiteStarted - latest)
    expect(health.age).toBeLessThanOrEqual(Date.now() - latest)
    const text = await page.$eval('#health', (element) => element.textContent ?? '')
    expect(text).toMatch(/^Feed health: updates every \S+ s \(median\), longest gap .*; (no gap over the usual heartbeat|\d+ gaps? over .* \(marked bars\))(; \d+ bars? without records \(marked\))?; newest record .* old\.$/)
    // Drawn: the health bars' colour is on the canvas.
    const grey = await page.evaluate(() => {
      let count = 0
      for (const canvas of document.querySelectorAll('#chart canvas')) {
        if (canvas.width === 0 || canvas.height === 0) continue
        const pixels = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data
        for (let i = 0; i < pixels.length; i += 4) if (pixels[i] === 0x9c && pixels[i + 1] === 0xa3 && pixels[i + 2] === 0xaf && pixels[i + 3] === 255) count++
      }
      return count
    })
    expect(grey).toBeGreaterThan(health.bars * 5)
    expect(requests.some((url) => new URL(url).pathname === '/prices/quality')).toBe(true)
  })

  it('picking another symbol and window redraws from the server', async () => {
    await page.select('#symbol', 'ETH')
    await page.select('#window', '3600')
    const state = await waitForChart('ETH', '1')
    const expected = expectedBars(records, 'ETH', 3_600, 60_000)
    expect(state.state).toBe('ready')
    expect(state.data).toEqual(expected)
    expect(state.bars).toBe(expected.length)
    expect(new URL(page.url()).search).toBe('?symbol=ETH&window=3600')
    const pixels = await candlePixels()
    expect(pixels.up + pixels.down).toBeGreaterThan(expected.length * 10)
  })

  it('made no request to another origin, and logged no error', () => {
    expect(requests.length).toBeGreaterThan(0)
    expect(requests.filter((url) => !url.startsWith(`${server.url}/`))).toEqual([])
    expect(requests).toContain(`${server.url}/page/chart.js`)
    expect(problems).toEqual([])
  })

  it('works under a basePath: the page, its script and every request it makes stay below the prefix', async () => {
    const basePath = '/charts/v1'
    // A short grace: chromium may hold a preconnected socket that sends nothing, which close() would otherwise wait for.
    const based = await startServer({ store, basePath, chartScript: join(dir, 'page', 'chart.js'), graceMs: 100 })
    const basedPage = await browser.newPage()
    const basedRequests: string[] = []
    const basedProblems: string[] = []
    basedPage.on('request', (request) => basedRequests.push(request.url()))
    basedPage.on('console', (message) => {
      if (message.type() === 'error') basedProblems.push(`console error: ${message.text()}`)
    })
    basedPage.on('pageerror', (err) => basedProblems.push(`page error: ${err instanceof Error ? err.message : String(err)}`))
    try {
      // Without the trailing "/" too: the page names its script by the whole prefix, not relative to the page's URL.
      for (const pagePath of [`${basePath}/`, basePath]) {
        basedRequests.length = 0
        const response = await basedPage.goto(`${based.url}${pagePath}`, { waitUntil: 'load' })
        expect(response?.status(), pagePath).toBe(200)
        await basedPage.waitForFunction(
          () => {
            const state = window.priceStoreChart
            return state !== undefined && state.state !== 'loading' && state.symbol === 'BTC' && state.resolution === '5'
          },
          { timeout: 15_000 },
        )
        const state = await basedPage.evaluate(() => window.priceStoreChart!)
        const expected = expectedBars(records, 'BTC', 21_600, 300_000)
        expect(state.state, pagePath).toBe('ready')
        expect(state.data, pagePath).toEqual(expected)
        const btc = records.filter((record) => record.symbol === 'BTC').sort((a, b) => b.timestamp - a.timestamp)[0]!
        expect(state.latest, pagePath).toEqual({ value: btc.value, timestamp: btc.timestamp })

        const paths = basedRequests.map((url) => new URL(url).pathname)
        expect(paths, pagePath).toContain(`${basePath}/page/chart.js`)
        expect(paths, pagePath).toContain(`${basePath}/udf/search`)
        expect(paths, pagePath).toContain(`${basePath}/prices`)
        expect(paths, pagePath).toContain(`${basePath}/udf/history`)
        expect(basedRequests.filter((url) => !url.startsWith(`${based.url}${basePath}`)), pagePath).toEqual([])
      }
      expect(basedProblems).toEqual([])
    } finally {
      await basedPage.close()
      await based.close()
    }
  })
})
