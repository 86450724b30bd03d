/**
 * The chart page's script (bundled into dist/page/chart.js): a symbol and a
 * window are picked, then the page asks this server for the symbol's latest
 * price (`/prices?symbol=`) and the candles of the window that ends at it
 * (`/udf/history`), and draws them with lightweight-charts, with the feed's
 * health under them (`/prices/quality`: records per bar, bars with a gap
 * over the feed's usual heartbeat marked, and how stale the feed is), its
 * prices with the decimals of its `pricescale` (`/udf/symbols`). Then it
 * follows `/prices/stream`: each new record moves the latest price and the
 * last candle (or opens a new one). Nothing is fetched from another origin.
 * Paths are asked below the prefix the page is served under (a handler's
 * `basePath`).
 */
import { CandlestickSeries, ColorType, HistogramSeries, createChart, type CandlestickData, type HistogramData, type UTCTimestamp } from 'lightweight-charts'
import { servedBasePath } from './base-path.js'
import { LastPriceLabel } from './last-price-label.js'
import { LiveFeed, type LiveState, type StreamedPrice } from './live-feed.js'
import { priceFormat, type PriceFormat } from './price-format.js'

/** Candle colours; the browser test looks for these pixels. */
const UP_COLOR = '#089981'
const DOWN_COLOR = '#f23645'
/** Feed-health bars: records per bar, and a bar holding a gap over the threshold (or no record at all). */
const HEALTH_COLOR = '#9ca3af'
const GAP_COLOR = '#d97706'

/** The prefix this page is served under, `''` for none: read now, while `currentScript` is this script. */
const BASE_PATH = servedBasePath(document.currentScript as HTMLScriptElement | null)

/** What the page shows now, on `window.priceStoreChart`, for tests and for the curious. */
interface ChartState {
  state: 'loading' | 'ready' | 'empty' | 'error'
  symbol?: string
  resolution?: string
  /** Bars in the chart's series. */
  bars: number
  /** The bars as drawn: times in UNIX seconds. */
  data: CandlestickData<UTCTimestamp>[]
  latest?: { value: number; timestamp: number }
  message?: string
  /** The feed's health over the window, when the server reports it (`/prices/quality`). */
  health?: FeedHealth
  /** How prices are written: the symbol's `pricescale`, or one from its price. */
  priceFormat?: PriceFormat
  /** The last-price label on the chart, as shown (`''` while hidden). */
  lastPriceLabel?: string
  /** Following `/prices/stream`: its state, and the records it brought since the load. */
  live?: LiveState
  updates: number
}

/** What the page shows of `/prices/quality`. */
interface FeedHealth {
  /** Ms from the newest record to the server's now. */
  age: number | null
  medianGap: number | null
  maxGap: number | null
  threshold: number | null
  /** Gaps over the threshold in the window. */
  over: number
  /** Bars drawn under the candles, and how many of them are marked (a gap over the threshold, or empty). */
  bars: number
  marked: number
}

interface QualityAnswer {
  symbols: {
    age: number | null
    gaps: { median: number | null; max: number | null; threshold: number | null; over: number }
    buckets?: { start: number; records: number; gaps: { over: number } }[]
  }[]
}

declare global {
  interface Window {
    priceStoreChart: ChartState
  }
}

interface UdfHistory {
  s: 'ok' | 'no_data' | 'error'
  t?: number[]
  o?: number[]
  h?: number[]
  l?: number[]
  c?: number[]
  errmsg?: string
}

const symbolSelect = element<HTMLSelectElement>('symbol')
const windowSelect = element<HTMLSelectElement>('window')
const latestText = element<HTMLElement>('latest')
const statusText = element<HTMLElement>('status')
// Made here, not in the page's HTML, so a page without it (an older server's) still works.
const healthText = document.createElement('p')
healthText.id = 'health'
// No aria-live: the newest record's age ticks every second, which a screen reader would read out each time.
statusText.insertAdjacentElement('afterend', healthText)
/** The health line's start, from the last report ('' when there is none), and the newest record's age when it was measured. */
let healthPrefix = ''
let newestAge: { ms: number; at: number } | null = null
const chartBox = element<HTMLElement>('chart')
/** Time the page waits for the stream to open before it loads the chart anyway (ms): a server without one still gets a chart. */
const STREAM_WAIT_MS = 5000

const chart = createChart(chartBox, {
  autoSize: true,
  layout: { background: { type: ColorType.Solid, color: '#ffffff' }, textColor: '#1f2937' },
  timeScale: { timeVisible: true, secondsVisible: false },
})
const series = chart.addSeries(CandlestickSeries, {
  upColor: UP_COLOR,
  downColor: DOWN_COLOR,
  borderUpColor: UP_COLOR,
  borderDownColor: DOWN_COLOR,
  wickUpColor: UP_COLOR,
  wickDownColor: DOWN_COLOR,
  // The last price is written at the pane's edge (LastPriceLabel), not over the axis's labels.
  lastValueVisible: false,
})
const lastPrice = new LastPriceLabel(chartBox, chart, series)
// The candles keep the top of the chart; the feed-health bars take the bottom strip on a scale of their own.
series.priceScale().applyOptions({ scaleMargins: { top: 0.1, bottom: 0.2 } })
const healthSeries = chart.addSeries(HistogramSeries, { priceScaleId: 'health', priceLineVisible: false, lastValueVisible: false })
healthSeries.priceScale().applyOptions({ scaleMargins: { top: 0.85, bottom: 0 } })

window.priceStoreChart = { state: 'loading', bars: 0, data: [], updates: 0 }
/** Each load gets a number; an answer to an older load (the user picked again meanwhile) is dropped. */
let loads = 0
/** The stream of the symbol shown, and what it brought before the load drew the chart. */
let feed: LiveFeed | undefined
let early: StreamedPrice[] | undefined = []
/** The bar size of the chart shown (ms), for the records the stream brings. */
let barMs = 300_000

void start()

async function start(): Promise<void> {
  try {
    const found = (await getJson('/udf/search')) as { symbol: string }[]
    const asked = new URLSearchParams(location.search)
    const symbols = found.map((entry) => entry.symbol)
    symbolSelect.replaceChildren(...symbols.map((symbol) => new Option(symbol, symbol)))
    symbolSelect.disabled = symbols.length === 0
    if (symbols.length === 0) {
      show({ state: 'empty', bars: 0, data: [], updates: 0, message: 'This store holds no records yet.' })
      return
    }
    const wanted = asked.get('symbol')
    symbolSelect.value = wanted !== null && symbols.includes(wanted) ? wanted : symbols.includes('BTC') ? 'BTC' : symbols[0]!
    const windowSeconds = asked.get('window')
    if (windowSeconds !== null && [...windowSelect.options].some((option) => option.value === windowSeconds)) windowSelect.value = windowSeconds
    symbolSelect.addEventListener('change', () => void load())
    windowSelect.addEventListener('change', () => void load())
    await load()
  } catch (err) {
    fail(err)
  }
}

async function load(): Promise<void> {
  const load = ++loads
  const symbol = symbolSelect.value
  const option = windowSelect.selectedOptions[0]!
  const seconds = Number(option.value)
  const resolution = option.dataset.resolution ?? '5'
  history.replaceState(null, '', `?${new URLSearchParams({ symbol, window: option.value })}`)
  statusText.className = ''
  statusText.textContent = `Loading ${symbol}…`
  try {
    // The stream first, so no commit falls between what the load reads and what the stream brings;
    // what it brings meanwhile waits in `early` and is drawn once the chart is.
    const ready = follow(symbol)
    await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, STREAM_WAIT_MS))])
    if (load !== loads) return
    const [answer, info] = await Promise.all([
      getJson(`/prices?${new URLSearchParams({ symbol })}`) as Promise<{ value: number; timestamp: number }[]>,
      (getJson(`/udf/symbols?${new URLSearchParams({ symbol })}`) as Promise<{ pricescale?: number }>).catch(() => undefined),
    ])
    const [latest] = answer
    if (load !== loads) return
    if (latest === undefined) {
      series.setData([])
      healthSeries.setData([])
      clearHealthText()
      latestText.textContent = ''
      lastPrice.hide()
      early = undefined
      show({ state: 'empty', symbol, resolution, bars: 0, data: [], message: `${symbol} has no records.`, updates: 0 })
      return
    }
    const format = priceFormat(info?.pricescale, latest.value)
    series.applyOptions({ priceFormat: { type: 'price', precision: format.precision, minMove: format.minMove } })
    latestText.textContent = latestLine(symbol, latest)
    // The window ends at the latest record, so a store of old data still shows something.
    const to = Math.floor(latest.timestamp / 1000) + 1
    const query = new URLSearchParams({ symbol, resolution, from: String(to - seconds), to: String(to) })
    const interval = Number(resolution) * 60_000
    barMs = interval
    const healthQuery = new URLSearchParams({ symbol, fromTimestamp: String((to - seconds) * 1000), toTimestamp: String(to * 1000), interval: String(interval), moves: 'false' })
    // The health is a bonus: a server without /prices/quality still draws the candles.
    const [bars, quality] = await Promise.all([getJson(`/udf/history?${query}`) as Promise<UdfHistory>, (getJson(`/prices/quality?${healthQuery}`) as Promise<QualityAnswer>).catch(() => undefined)])
    if (load !== loads) return
    const data = toCandles(bars)
    series.setData(data)
    chart.timeScale().fitContent()
    const latestPoint = { value: latest.value, timestamp: latest.timestamp }
    const message = barsMessage(symbol, data)
    const health = drawHealth(quality)
    lastPrice.show(symbol, latest.value)
    show({
      state: data.length > 0 ? 'ready' : 'empty', symbol, resolution, bars: series.data().length, data, latest: latestPoint, message,
      priceFormat: format, lastPriceLabel: lastPrice.text, updates: 0, ...(health === undefined ? {} : { health }),
      ...(window.priceStoreChart.live === undefined ? {} : { live: window.priceStoreChart.live }),
    })
    const waiting = early ?? []
    early = undefined
    addRecords(waiting)
  } catch (err) {
    if (load === loads) fail(err)
  }
}

/** Follows `symbol`'s stream in place of the last one; resolves once it is open (or failed to open). */
function follow(symbol: string): Promise<boolean> {
  feed?.close()
  early = []
  const url = `${BASE_PATH}/prices/stream?${new URLSearchParams({ symbol })}`
  feed = new LiveFeed(url, {
    onPrices: (records) => (early === undefined ? addRecords(records) : early.push(...records)),
    // Commits were lost: the chart reads everything again.
    onReset: () => void load(),
    onState: (live) => {
      window.priceStoreChart = { ...window.priceStoreChart, live }
    },
  })
  return feed.ready
}

/**
 * Draws what the stream brought: each record newer than the latest price
 * shown moves it, and the last candle (or starts the next one); the feed
 * health's last bar counts it. Older records (already in the chart) are skipped.
 */
function addRecords(records: readonly StreamedPrice[]): void {
  const state = window.priceStoreChart
  const symbol = state.symbol
  let latest = state.latest
  if (latest === undefined || symbol === undefined) return
  const data = state.data
  let added = 0
  for (const record of records) {
    if (record.symbol !== symbol || record.timestamp <= latest.timestamp) continue
    latest = { value: record.value, timestamp: record.timestamp }
    const time = ((Math.floor(record.timestamp / barMs) * barMs) / 1000) as UTCTimestamp
    const last = data.at(-1)
    if (last !== undefined && last.time === time) {
      const bar = { ...last, high: Math.max(last.high, record.value), low: Math.min(last.low, record.value), close: record.value }
      data[data.length - 1] = bar
      series.update({ ...bar }) // a copy: the chart writes into what it is given
    } else if (last === undefined || time > last.time) {
      const bar = { time, open: record.value, high: record.value, low: record.value, close: record.value }
      data.push(bar)
      series.update({ ...bar })
    } else {
      continue
    }
    countInHealth(time)
    added++
  }
  if (added === 0) return
  // The record just came: its age is what the clocks tell (never below 0), not the one measured at load.
  newestAge = { ms: Math.max(0, Date.now() - latest.timestamp), at: performance.now() }
  showHealthText()
  latestText.textContent = latestLine(symbol, latest)
  lastPrice.show(symbol, latest.value)
  show({ ...state, state: 'ready', data, bars: data.length, latest, message: barsMessage(symbol, data), lastPriceLabel: lastPrice.text, updates: state.updates + added })
}

/** The line under the chart: how many bars of what, from when to when. */
function barsMessage(symbol: string, data: readonly CandlestickData<UTCTimestamp>[]): string {
  const first = data[0]
  const last = data.at(-1)
  const windowText = windowSelect.selectedOptions[0]?.text ?? ''
  return first === undefined || last === undefined
    ? `No ${symbol} records in this window.`
    : `${data.length} bars of ${symbol} (${windowText}), from ${formatTime(first.time * 1000)} to ${formatTime(last.time * 1000)}.`
}

/** One more record in the feed-health bar at `time` (a new bar when it is past the last). */
function countInHealth(time: UTCTimestamp): void {
  const last = healthSeries.data().at(-1) as HistogramData<UTCTimestamp> | undefined
  if (last === undefined) return
  if (last.time === time) healthSeries.update({ ...last, value: last.value + 1 })
  else if (time > last.time) healthSeries.update({ time, value: 1, color: HEALTH_COLOR })
}

function latestLine(symbol: string, latest: { value: number; timestamp: number }): string {
  return `Latest ${symbol} price: ${formatPrice(latest.value)} at ${formatTime(latest.timestamp, true)}`
}

/** Draws the feed-health bars and says how healthy the feed is; `undefined` when the server gave no report. */
function drawHealth(quality: QualityAnswer | undefined): FeedHealth | undefined {
  const report = quality?.symbols[0]
  if (report?.buckets === undefined) {
    healthSeries.setData([])
    clearHealthText()
    return undefined
  }
  const most = Math.max(1, ...report.buckets.map((bucket) => bucket.records))
  // An empty bar is drawn full height in the gap colour: an outage must show, not vanish.
  const data: HistogramData<UTCTimestamp>[] = report.buckets.map((bucket) => {
    const marked = bucket.records === 0 || bucket.gaps.over > 0
    return { time: Math.floor(bucket.start / 1000) as UTCTimestamp, value: bucket.records === 0 ? most : bucket.records, color: marked ? GAP_COLOR : HEALTH_COLOR }
  })
  healthSeries.setData(data)
  const { gaps, age } = report
  const health: FeedHealth = {
    age, medianGap: gaps.median, maxGap: gaps.max, threshold: gaps.threshold, over: gaps.over,
    bars: data.length, marked: data.filter((bar) => bar.color === GAP_COLOR).length,
  }
  const heartbeat = gaps.median === null ? 'no gap between records' : `updates every ${formatDuration(gaps.median)} (median), longest gap ${formatDuration(gaps.max ?? 0)}`
  const outages = gaps.over === 0 ? 'no gap over the usual heartbeat' : `${gaps.over} gap${gaps.over === 1 ? '' : 's'} over ${formatDuration(gaps.threshold ?? 0)} (marked bars)`
  const empty = report.buckets.filter((bucket) => bucket.records === 0).length
  const silent = empty === 0 ? '' : `; ${empty} bar${empty === 1 ? '' : 's'} without records (marked)`
  healthPrefix = `Feed health: ${heartbeat}; ${outages}${silent}`
  newestAge = age === null ? null : { ms: age, at: performance.now() }
  showHealthText()
  return health
}


/** Writes the health line with the newest record's age as it is now: it grows while the feed is silent, and a live record resets it. */
function showHealthText(): void {
  if (healthPrefix === '') return
  const age = newestAge === null ? '—' : `${formatDuration(Math.round(newestAge.ms + performance.now() - newestAge.at))} old`
  healthText.textContent = `${healthPrefix}; newest record ${age}.`
}
setInterval(showHealthText, 1000)

function clearHealthText(): void {
  healthPrefix = ''
  healthText.textContent = ''
}

/** `9_600` -> `9.6 s`, `5_400_000` -> `1.5 h`. */
function formatDuration(ms: number): string {
  const units: [number, string][] = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'min'], [1000, 's']]
  for (const [size, unit] of units) if (Math.abs(ms) >= size) return `${Math.round((ms / size) * 10) / 10} ${unit}`
  return `${ms} ms`
}

function toCandles(bars: UdfHistory): CandlestickData<UTCTimestamp>[] {
  if (bars.s === 'error') throw new Error(bars.errmsg ?? 'the server could not answer')
  const { t = [], o = [], h = [], l = [], c = [] } = bars
  return t.map((time, i) => ({ time: time as UTCTimestamp, open: o[i]!, high: h[i]!, low: l[i]!, close: c[i]! }))
}

function show(state: ChartState): void {
  window.priceStoreChart = state
  statusText.textContent = state.message ?? ''
  chartBox.setAttribute('aria-label', state.message === undefined ? 'Candlestick chart' : `Candlestick chart: ${state.message}`)
}

function fail(err: unknown): void {
  statusText.className = 'error'
  show({ state: 'error', bars: 0, data: [], updates: 0, message: `Could not load the chart: ${err instanceof Error ? err.message : String(err)}` })
}

/** GETs JSON from this server, below its base path; an error answer becomes an Error with the server's message. */
async function getJson(path: string): Promise<unknown> {
  const response = await fetch(`${BASE_PATH}${path}`, { headers: { accept: 'application/json' } })
  const body = (await response.json()) as { error?: { message?: string } }
  if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`)
  return body
}

function formatPrice(value: number): string {
  return value.toLocaleString('en-US', { maximumSignificantDigits: 8 })
}

/** Times in UTC, as the chart draws them. */
function formatTime(ms: number, withSeconds = false): string {
  return `${new Date(ms).toISOString().slice(0, withSeconds ? 19 : 16).replace('T', ' ')} UTC`
}

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id)
  if (found === null) throw new Error(`the page has no #${id}`)
  return found as T
}
