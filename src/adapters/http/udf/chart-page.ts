import { httpErrorAnswer, type HttpAnswer } from '../core/answer.js'
import { PackageFile, fileAnswer } from '../core/package-file.js'

/** Options of the chart page at `/` (below the handler's `basePath`). */
export interface ChartPageOptions {
  /**
   * The page's script bundle, a file (default: this package's
   * `dist/page/chart.js`, made by `npm run build`). Read once, on first use.
   */
  readonly chartScript?: string
}

/** Where the page loads its script from, below the handler's `basePath`. */
export const CHART_SCRIPT_PATH = '/page/chart.js'

/**
 * The chart page: a small HTML page at `/` and its script, a bundle of
 * `src/page/chart-app.ts` with lightweight-charts inside, so the page makes
 * no request to another origin. The script is built, not written here:
 * while it is missing, both answer 503 `HTTP_PAGE_NOT_BUILT`. Under a
 * `basePath`, the page names its script and links below it, and the script
 * asks for `/prices` and `/udf/` below the path it was loaded from.
 */
export class ChartPage {
  readonly #script: PackageFile
  readonly #html: string

  /** `basePath` as routing compares it: `''` or `/x...` without a trailing `/`. */
  constructor(options: ChartPageOptions = {}, basePath = '') {
    this.#script = new PackageFile(options.chartScript, ['dist', 'page', 'chart.js'], ['page', 'chart.js'])
    this.#html = pageHtml(escapeHtml(basePath))
  }

  /** The answer for `GET /`. */
  page(): HttpAnswer {
    if (this.#script.read() === undefined) return notBuilt()
    return fileAnswer('text/html; charset=utf-8', this.#html, {
      // The page needs nothing from elsewhere; saying so keeps it that way.
      'content-security-policy':
        "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
      'referrer-policy': 'no-referrer',
    })
  }

  /** The answer for `GET /page/chart.js`. */
  script(): HttpAnswer {
    const script = this.#script.read()
    return script === undefined ? notBuilt() : fileAnswer('text/javascript; charset=utf-8', script)
  }
}

function notBuilt(): HttpAnswer {
  return httpErrorAnswer(503, 'HTTP_PAGE_NOT_BUILT', 'the chart page is not built: run `npm run build`, which makes dist/page/chart.js')
}


/** `text` made safe inside an HTML attribute or text (a base path may hold `&`, `"`, `'`, `<`, `>`). */
function escapeHtml(text: string): string {
  return text.replace(/[&"'<>]/g, (char) => `&#${char.charCodeAt(0)};`)
}

/** The page, its paths below `base` (HTML-escaped): controls, the latest price, the chart. `chart-app.ts` fills it in. */
const pageHtml = (base: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>price-store chart</title>
<link rel="icon" href="data:,">
<style>
  /* The chart takes all the height the controls and the two lines under it leave. */
  html, body { height: 100%; }
  body { font: 15px/1.4 system-ui, sans-serif; margin: 0; color: #1f2937; background: #fff; display: flex; flex-direction: column; height: 100vh; height: 100dvh; }
  header { flex: none; display: flex; flex-wrap: wrap; gap: 0.4rem 1.25rem; align-items: center; padding: 0.4rem 0.75rem; border-bottom: 1px solid #e5e7eb; }
  h1 { font-size: 1.05rem; margin: 0; }
  form { display: flex; gap: 0.4rem 0.75rem; flex-wrap: wrap; align-items: center; }
  label { font-weight: 600; }
  select { font: inherit; padding: 0.1rem 0.3rem; }
  #latest { margin: 0; font-variant-numeric: tabular-nums; }
  main { flex: 1; min-height: 0; display: flex; flex-direction: column; padding: 0.25rem 0.5rem 0.4rem; }
  #chart { flex: 1; min-height: 200px; position: relative; }
  #last-price { position: absolute; left: 6px; z-index: 5; padding: 0 6px; border-radius: 3px; background: #1f2937; color: #fff; font: 12px/18px system-ui, sans-serif; font-variant-numeric: tabular-nums; white-space: nowrap; pointer-events: none; }
  #status, #health { flex: none; margin: 0.2rem 0 0; color: #4b5563; font-size: 0.8rem; }
  #status.error { color: #b91c1c; }
  /* A phone's title bar names the page already: the chart gets the line. */
  @media (max-width: 600px) { body { font-size: 14px; } header { gap: 0.3rem 0.75rem; } h1 { display: none; } }
</style>
<script src="${base}${CHART_SCRIPT_PATH}" defer></script>
</head>
<body>
<header>
  <h1>price-store</h1>
  <form id="controls">
    <label for="symbol">Symbol</label>
    <select id="symbol" name="symbol" disabled><option>loading…</option></select>
    <label for="window">Window</label>
    <select id="window" name="window">
      <option value="3600" data-resolution="1">1 hour, 1-minute bars</option>
      <option value="21600" data-resolution="5" selected>6 hours, 5-minute bars</option>
      <option value="86400" data-resolution="15">1 day, 15-minute bars</option>
      <option value="172800" data-resolution="30">2 days, 30-minute bars</option>
      <option value="604800" data-resolution="60">7 days, 1-hour bars</option>
      <option value="2592000" data-resolution="240">30 days, 4-hour bars</option>
    </select>
  </form>
  <!-- Not a live region: with the live stream it changes every second. -->
  <p id="latest"></p>
</header>
<main>
  <div id="chart" role="img" aria-label="Candlestick chart (loading)"></div>
  <p id="status" role="status">Loading…</p>
  <noscript><p>The chart needs JavaScript. The data is also at <a href="${base}/prices">${base}/prices</a> and <a href="${base}/udf/config">${base}/udf/</a>.</p></noscript>
</main>
</body>
</html>
`
