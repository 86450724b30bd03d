import { defineConfig, type Options } from 'tsup'

const shared = { target: 'node20', platform: 'node', sourcemap: true } as const

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

export default defineConfig([
  // The library: ESM and CommonJS, each with its own types. The shim gives
  // the CommonJS build `import.meta.url`, by which the server finds the page's script.
  { ...shared, entry: { index: 'src/index.ts' }, format: ['esm', 'cjs'], dts: true, clean: true, shims: true },
  // price-store/testing: the arbitraries and the reference model, a separate entry so the main
  // one never loads fast-check (an optional peer dependency, left external).
  { ...shared, entry: { testing: 'src/testing/index.ts' }, format: ['esm', 'cjs'], dts: true },
  // The command: ESM only, run by node through the package's bin.
  { ...shared, entry: { cli: 'src/cli/main.ts' }, format: ['esm'] },
  chartPageBuild,
])
