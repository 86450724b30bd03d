/**
 * The chart page's script (bundled into dist/page/chart.js): a symbol and a
 * window are picked, then the page asks this server for the symbol's latest
 * price (`/prices?symbol=`) and the candles of the window that ends at it
 * (`/udf/history`), and draws them with lightweight-charts. Nothing is
 * fetched from another origin. Paths are asked below the prefix the page
 * is served under (a handler's `basePath`).
 */
import { CandlestickSeries, ColorType, createChart, type CandlestickData, type UTCTimestamp } from 'lightweight-charts'
import { servedBasePath } from './base-path.js'

/** Candle colours; the browser test looks for these pixels. */
const UP_COLOR = '#089981'
const DOWN_COLOR = '#f23645'

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
const chartBox = element<HTMLElement>('chart')

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
})

window.priceStoreChart = { state: 'loading', bars: 0, data: [] }
/** Each load gets a number; an answer to an older load (the user picked again meanwhile) is dropped. */
let loads = 0

void start()

async function start(): Promise<void> {
  try {
    const found = (await getJson('/udf/search')) as { symbol: string }[]
    const asked = new URLSearchParams(location.search)
    const symbols = found.map((entry) => entry.symbol)
    symbolSelect.replaceChildren(...symbols.map((symbol) => new Option(symbol, symbol)))
    symbolSelect.disabled = symbols.length === 0
    if (symbols.length === 0) {
      show({ state: 'empty', bars: 0, data: [], message: 'This store holds no records yet.' })
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
    const [latest] = (await getJson(`/prices?${new URLSearchParams({ symbol })}`)) as { value: number; timestamp: number }[]
    if (load !== loads) return
    if (latest === undefined) {
      series.setData([])
      latestText.textContent = ''
      show({ state: 'empty', symbol, resolution, bars: 0, data: [], message: `${symbol} has no records.` })
      return
    }
    latestText.textContent = `Latest ${symbol} price: ${formatPrice(latest.value)} at ${formatTime(latest.timestamp, true)}`
    // The window ends at the latest record, so a store of old data still shows something.
    const to = Math.floor(latest.timestamp / 1000) + 1
    const query = new URLSearchParams({ symbol, resolution, from: String(to - seconds), to: String(to) })
    const bars = (await getJson(`/udf/history?${query}`)) as UdfHistory
    if (load !== loads) return
    const data = toCandles(bars)
    series.setData(data)
    chart.timeScale().fitContent()
    const latestPoint = { value: latest.value, timestamp: latest.timestamp }
    const first = data[0]
    const last = data.at(-1)
    const message = first === undefined || last === undefined
      ? `No ${symbol} records in this window.`
      : `${data.length} bars of ${symbol} (${option.text}), from ${formatTime(first.time * 1000)} to ${formatTime(last.time * 1000)}.`
    show({ state: data.length > 0 ? 'ready' : 'empty', symbol, resolution, bars: series.data().length, data, latest: latestPoint, message })
  } catch (err) {
    if (load === loads) fail(err)
  }
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
  show({ state: 'error', bars: 0, data: [], message: `Could not load the chart: ${err instanceof Error ? err.message : String(err)}` })
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
