/**
 * The chart page at `/` in a real browser: Debian's chromium, driven by
 * puppeteer-core, against a real server over a store of demo data. The
 * page's script is built here first with the build's own options
 * (tsup.config.ts), since tests run before `npm run build`. The second
 * suite writes records while the page is open (it follows
 * /prices/stream), and checks the decimals of a sub-dollar symbol and the
 * layout at two viewport sizes.
 *
 * Skipped, saying why, when no chromium binary is installed (`.ci/run`
 * installs one; set CHROMIUM_PATH to use another).
 */
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
import { END, PROVIDER, openDemoStore } from '../../support/http/demo-server.js'
import { referenceQuality } from '../../../src/testing/index.js'
import { SKIP_REASON, chromium } from '../../support/browser-page.js'

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
interface RectLike {
  readonly left: number
  readonly top: number
  readonly right: number
  readonly bottom: number
  readonly width: number
  readonly height: number
}
interface ElementLike {
  readonly hidden: boolean
  readonly textContent: string | null
  getBoundingClientRect(): RectLike
  querySelectorAll(selector: string): Iterable<ElementLike>
}
interface CanvasLike extends ElementLike {
  readonly width: number
  readonly height: number
  getContext(kind: '2d'): { getImageData(x: number, y: number, width: number, height: number): { data: Uint8ClampedArray } } | null
}
declare const document: {
  querySelectorAll(selector: string): Iterable<CanvasLike>
  getElementById(id: string): ElementLike | null
  readonly documentElement: { readonly scrollHeight: number; readonly scrollWidth: number }
}
declare const window: { priceStoreChart?: PageState; readonly innerWidth: number; readonly innerHeight: number }

interface PageState {
  state: string
  symbol?: string
  resolution?: string
  bars: number
  data: Bar[]
  latest?: { value: number; timestamp: number }
  health?: { age: number | null; medianGap: number | null; maxGap: number | null; threshold: number | null; over: number; bars: number; marked: number }
  priceFormat?: { pricescale: number; precision: number; minMove: number }
  lastPriceLabel?: string
  live?: string
  updates: number
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

/** Whether two boxes share any area. */
function intersects(a: RectLike, b: RectLike): boolean {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom
}

/** A record of `symbol` as a writer would send it. */
function priceRecord(symbol: string, timestamp: number, value: number): DemoRecord {
  return { id: `live-${symbol}-${timestamp}`, symbol, provider: PROVIDER.id, value, signature: 'c2ln', permawebTx: 'tx', version: '0.4', source: { test: value }, timestamp }
}

/** The sub-dollar symbol: a price of about 0.0001234, a record every 5 minutes for an hour before END. */
const TINY = Array.from({ length: 12 }, (_, i) => priceRecord('TINY', END - 3_600_000 + i * 300_000 + 1000, Number((0.0001234 + i * 0.0000001).toPrecision(8))))

describe.skipIf(chromium === undefined)(chromium === undefined ? `chart page, live: SKIPPED, ${SKIP_REASON}` : 'the chart page follows the stream; decimals and layout', () => {
  let dir: string
  let store: PriceStore
  let records: DemoRecord[]
  let server: RunningServer
  let browser: Browser
  const problems: string[] = []

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'price-store-chart-live-'))
    await build({ ...chartPageBuild, outDir: dir, config: false, silent: true })
    ;({ store, records } = await openDemoStore())
    await store.putMany(TINY)
    // A short grace: a reconnecting page may hold a socket that sends nothing, which close() would otherwise wait for.
    server = await startServer({ store, chartScript: join(dir, 'page', 'chart.js'), graceMs: 100 })
    browser = await puppeteer.launch({
      executablePath: chromium!,
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--force-device-scale-factor=1'],
    })
  })

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await store?.close()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  /** A page of the given size showing `path`, once its chart is drawn and its stream open. */
  async function open(path: string, width: number, height: number, { consoleErrors = true } = {}): Promise<Page> {
    const page = await browser.newPage()
    page.on('console', (message) => {
      if (consoleErrors && message.type() === 'error') problems.push(`console error: ${message.text()}`)
    })
    page.on('pageerror', (err) => problems.push(`page error: ${err instanceof Error ? err.message : String(err)}`))
    await page.setViewport({ width, height })
    await page.goto(`${server.url}${path}`, { waitUntil: 'load' })
    await page.waitForFunction(() => window.priceStoreChart?.state === 'ready' && window.priceStoreChart.live === 'open', { timeout: 15_000 })
    return page
  }

  it('draws a record written while the page is open: a new candle, then the same candle moved, and the latest price with it', async () => {
    const page = await open('/?symbol=BTC&window=3600', 1280, 900)
    try {
      const before = await page.evaluate(() => window.priceStoreChart!)
      expect(before.resolution).toBe('1')
      const latest = before.latest!
      // 90 s after the latest record: past the last 1-minute bar, so a new one.
      const first = priceRecord('BTC', latest.timestamp + 90_000, Math.round(latest.value * 101) / 100)
      await store.putMany([first])
      await page.waitForFunction((t) => window.priceStoreChart!.latest?.timestamp === t, { timeout: 15_000 }, first.timestamp)
      const grown = await page.evaluate(() => window.priceStoreChart!)
      const time = Math.floor(first.timestamp / 60_000) * 60
      expect(grown.bars).toBe(before.bars + 1)
      expect(grown.data.slice(0, -1)).toEqual(before.data)
      expect(grown.data.at(-1)).toEqual({ time, open: first.value, high: first.value, low: first.value, close: first.value })
      expect(grown.latest).toEqual({ value: first.value, timestamp: first.timestamp })
      expect(grown.lastPriceLabel).toBe(`BTC ${first.value.toFixed(2)}`)
      const text = await page.$eval('#latest', (element) => element.textContent ?? '')
      expect(text).toContain(first.value.toLocaleString('en-US', { maximumSignificantDigits: 8 }))
      expect(text).toContain(new Date(first.timestamp).toISOString().slice(0, 19).replace('T', ' '))

      // A second record in the same minute, lower, and one of another symbol: the last candle moves, no new one.
      const second = priceRecord('BTC', first.timestamp + 1000, first.value - 50)
      await store.putMany([priceRecord('ETH', second.timestamp, 1), second])
      await page.waitForFunction((t) => window.priceStoreChart!.latest?.timestamp === t, { timeout: 15_000 }, second.timestamp)
      const moved = await page.evaluate(() => window.priceStoreChart!)
      expect(moved.bars).toBe(grown.bars)
      expect(moved.data.at(-1)).toEqual({ time, open: first.value, high: first.value, low: second.value, close: second.value })
      expect(moved.updates).toBe(2)
    } finally {
      await page.close()
    }
  })

  it('writes prices with the decimals of their pricescale: a sub-dollar symbol and a stablecoin keep their significant digits', async () => {
    const tiny = await open('/?symbol=TINY&window=21600', 1280, 900)
    try {
      const state = await tiny.evaluate(() => window.priceStoreChart!)
      const last = TINY.at(-1)!
      expect(state.priceFormat).toEqual({ pricescale: 1e9, precision: 9, minMove: 1e-9 })
      // The label uses the price axis's own formatter: the axis writes its prices the same way.
      expect(state.lastPriceLabel).toBe(`TINY ${last.value.toFixed(9)}`)
      expect(state.lastPriceLabel).toContain('0.000124')
      expect(await tiny.$eval('#latest', (element) => element.textContent ?? '')).toContain(String(last.value))
    } finally {
      await tiny.close()
    }
    const stable = await open('/?symbol=USDC.e', 1280, 900)
    try {
      const state = await stable.evaluate(() => window.priceStoreChart!)
      const usdc = records.filter((record) => record.symbol === 'USDC.e').sort((a, b) => b.timestamp - a.timestamp)[0]!
      // About six significant digits (/udf/symbols' pricescale): 6 decimals below 1, 5 from 1 up.
      const precision = usdc.value < 1 ? 6 : 5
      expect(state.priceFormat?.precision).toBe(precision)
      expect(state.lastPriceLabel).toBe(`USDC.e ${usdc.value.toFixed(precision)}`)
      expect(state.lastPriceLabel).not.toBe('USDC.e 1.00')
    } finally {
      await stable.close()
    }
  })

  it.each([
    [1280, 900],
    [390, 844],
  ])('at %ix%i the chart fills the viewport, and the last-price label stays off both axes', async (width, height) => {
    const page = await open('/?symbol=BTC', width, height)
    try {
      await page.waitForFunction(() => document.getElementById('last-price')?.hidden === false, { timeout: 15_000 })
      const layout = await page.evaluate(() => {
        const rect = (element: ElementLike): RectLike => {
          const { left, top, right, bottom, width, height } = element.getBoundingClientRect()
          return { left, top, right, bottom, width, height }
        }
        const chart = document.getElementById('chart')!
        // lightweight-charts lays the chart out as a table: the pane and its axes, each a cell.
        const cells = [...chart.querySelectorAll('tr')].map((row) => [...row.querySelectorAll('td')].map(rect))
        const canvases = [...document.querySelectorAll('#chart canvas')].map(rect)
        return {
          viewport: { width: window.innerWidth, height: window.innerHeight },
          page: { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight },
          chart: rect(chart),
          cells,
          canvases,
          label: rect(document.getElementById('last-price')!),
        }
      })
      // Most of the viewport is chart, and nothing needs scrolling.
      expect(layout.chart.width * layout.chart.height).toBeGreaterThan(0.65 * width * height)
      expect(layout.page).toEqual({ width, height })
      const drawn = {
        left: Math.min(...layout.canvases.map((c) => c.left)),
        top: Math.min(...layout.canvases.map((c) => c.top)),
        right: Math.max(...layout.canvases.map((c) => c.right)),
        bottom: Math.max(...layout.canvases.map((c) => c.bottom)),
      }
      expect((drawn.right - drawn.left) * (drawn.bottom - drawn.top)).toBeGreaterThan(0.95 * layout.chart.width * layout.chart.height)

      const [[, pane, priceAxis], timeAxis] = layout.cells as [[RectLike, RectLike, RectLike], RectLike[]]
      expect(priceAxis.width).toBeGreaterThan(0)
      const axes = [priceAxis, ...timeAxis].filter((cell) => cell.width > 0 && cell.height > 0)
      expect(axes.length).toBeGreaterThanOrEqual(2)
      expect(layout.label.width).toBeGreaterThan(0)
      for (const axis of axes) expect(intersects(layout.label, axis), JSON.stringify({ label: layout.label, axis })).toBe(false)
      expect(layout.label.left).toBeGreaterThanOrEqual(pane.left)
      expect(layout.label.right).toBeLessThanOrEqual(pane.right)
      expect(layout.label.top).toBeGreaterThanOrEqual(pane.top)
      expect(layout.label.bottom).toBeLessThanOrEqual(pane.bottom)
    } finally {
      await page.close()
    }
  })

  it('reconnects after losing the stream (the server restarted) and draws what was written meanwhile', async () => {
    // Chromium logs the refused reconnections as console errors: expected here.
    const page = await open('/?symbol=ETH&window=3600', 1280, 900, { consoleErrors: false })
    try {
      const { port } = new URL(server.url)
      await server.close()
      // A record written while no server runs: the stream replays it on reconnecting (Last-Event-ID).
      const latest = (await page.evaluate(() => window.priceStoreChart!)).latest!
      const missed = priceRecord('ETH', latest.timestamp + 5_000, latest.value + 1)
      await store.putMany([missed])
      server = await startServer({ store, port: Number(port), chartScript: join(dir, 'page', 'chart.js'), graceMs: 100 })
      await page.waitForFunction((t) => window.priceStoreChart!.latest?.timestamp === t, { timeout: 15_000 }, missed.timestamp)
      await page.waitForFunction(() => window.priceStoreChart!.live === 'open', { timeout: 15_000 })
      const after = priceRecord('ETH', missed.timestamp + 1000, missed.value + 1)
      await store.putMany([after])
      await page.waitForFunction((t) => window.priceStoreChart!.latest?.timestamp === t, { timeout: 15_000 }, after.timestamp)
      expect((await page.evaluate(() => window.priceStoreChart!)).data.at(-1)!.close).toBe(after.value)
    } finally {
      await page.close()
    }
  })

  it("keeps the feed health's newest-record age current: a live record resets it, and it grows while the feed is silent", async () => {
    // A symbol of its own, so the other tests' windows stay as they were.
    await store.putMany([priceRecord('AGE', END - 60_000, 10), priceRecord('AGE', END, 11)])
    const page = await open('/?symbol=AGE&window=3600', 1280, 900)
    try {
      const health = (): Promise<string> => page.$eval('#health', (element) => element.textContent ?? '')
      expect(await health()).toMatch(/newest record \S+ d old\.$/) // END is in 2024
      await page.waitForFunction(() => window.priceStoreChart!.live === 'open', { timeout: 15_000 })
      const fresh = priceRecord('AGE', Date.now(), 12)
      await store.putMany([fresh])
      await page.waitForFunction((t) => window.priceStoreChart!.latest?.timestamp === t, { timeout: 15_000 }, fresh.timestamp)
      const reset = await health()
      expect(reset).toMatch(/newest record [0-9.]+ (ms|s) old\.$/)
      // The line is rewritten each second: the age it shows goes on growing, with no new record.
      await page.waitForFunction((shown) => document.getElementById('health')!.textContent !== shown, { timeout: 15_000 }, reset)
      expect(await health()).toMatch(/newest record [0-9.]+ (ms|s|min) old\.$/)
    } finally {
      await page.close()
    }
  })

  it('logged no error', () => {
    expect(problems).toEqual([])
  })
})
