import { defineConfig } from 'tsup'

const shared = { target: 'node20', platform: 'node', sourcemap: true } as const

export default defineConfig([
  // The library: ESM and CommonJS, each with its own types.
  { ...shared, entry: { index: 'src/index.ts' }, format: ['esm', 'cjs'], dts: true, clean: true },
  // The command: ESM only, run by node through the package's bin.
  { ...shared, entry: { cli: 'src/cli/main.ts' }, format: ['esm'] },
])
