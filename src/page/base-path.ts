/** Where the server serves the page's script, below its `basePath` (the server's `CHART_SCRIPT_PATH`). */
const SCRIPT_PATH = '/page/chart.js'

/**
 * The path prefix the page is served under (a handler's `basePath`, `''`
 * for none), read from the URL this script was loaded from: the server
 * writes it into the page as `${basePath}/page/chart.js`, so the page's
 * requests go to `${basePath}/prices` and `${basePath}/udf/` on the same
 * origin. Read while the script first runs, the only time `currentScript` is set.
 */
export function servedBasePath(script: { readonly src?: string } | null): string {
  const src = script?.src
  if (src === undefined || src === '') return ''
  const path = new URL(src).pathname
  return path.endsWith(SCRIPT_PATH) ? path.slice(0, -SCRIPT_PATH.length) : ''
}
