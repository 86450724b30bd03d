import { rmSync } from 'node:fs'
import { defineConfig, type Options } from 'tsup'

// No source maps: they were two thirds of the package, and stack traces of the unminified build read as they are.
// The Parquet writer (hyparquet-writer, and the part of hyparquet it uses) is bundled: it is published as ES modules
// only, which the CommonJS build could require only on Node 20.19 and later.
const shared = { target: 'node20', platform: 'node', sourcemap: false, noExternal: [/^hyparquet/] as RegExp[] } as const

/**
 * The chart page's script: one browser file with lightweight-charts inside
 * (no CDN), served by `price-store serve` at /page/chart.js. The browser
 * test builds it with these same options.
 */
export const chartPageBuild = {
  entry: { 'page/chart': 'src/page/chart-app.ts' },
  format: ['iife'],
  platform: 'browser',
  target: 'es2020',
  minify: true,
  tsconfig: 'src/page/tsconfig.json',
  // tsup would name an IIFE `chart.global.js`.
  outExtension: () => ({ js: '.js' }),
} satisfies Options

export default defineConfig(() => {
  // dist/ is emptied here, once, before the builds start. tsup runs the builds below side by
  // side, so a build's own `clean` could delete what another one had already written (its
  // types build removes every .d.ts in dist/, price-store/testing's included). Not at import:
  // the browser test imports chartPageBuild from this file.
  rmSync('dist', { recursive: true, force: true })
  return [
    // The library, price-store and its engine, trust, http and cluster entries: ESM and CommonJS, each with its own types.
    // One build with code splitting (also for CommonJS), so the two entries share one copy of
    // the code: the adapter tells a store's DeferredAnswer by `instanceof`, and a store from
    // price-store must be the same class for price-store/http. The shim gives the CommonJS
    // build `import.meta.url`, by which the server finds the page's script from any dist/ file.
    {
      ...shared,
      entry: { index: 'src/index.ts', engine: 'src/engine.ts', trust: 'src/trust.ts', http: 'src/http.ts', cluster: 'src/cluster.ts' },
      format: ['esm', 'cjs'],
      splitting: true,
      dts: true,
      shims: true,
    },
    // price-store/testing: the arbitraries and the reference model, a separate entry so the main
    // one never loads fast-check (an optional peer dependency, left external).
    { ...shared, entry: { testing: 'src/testing/index.ts' }, format: ['esm', 'cjs'], dts: true },
    // price-store/client: browsers and Node. A build of its own, for the browser platform, so it shares no chunk
    // (and so no Node import) with the library; it needs only fetch, WebSocket and timers.
    { entry: { client: 'src/client.ts' }, format: ['esm', 'cjs'], dts: true, platform: 'browser', target: 'es2022', sourcemap: false },
    // The worker threads of SignatureVerifier (src/trust/) and of a store's signature checks at ingest
    // (src/store/signatures/): ESM only, each started by path from dist/<name>.js beside the code that starts
    // it, whichever format that code is.
    {
      ...shared,
      entry: { 'trust-worker': 'src/trust/worker/verify-worker.ts', 'ingest-worker': 'src/store/signatures/ingest-worker.ts' },
      format: ['esm'],
    },
    // The command: ESM only, run by node through the package's bin.
    { ...shared, entry: { cli: 'src/cli/main.ts' }, format: ['esm'] },
    chartPageBuild,
  ]
})
