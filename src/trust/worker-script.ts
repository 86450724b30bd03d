/**
 * Where the worker's code is. From the built package, dist/trust-worker.js
 * beside the file that holds this code (tsup writes every entry and chunk
 * into dist/). From sources (tests, tsx) Node cannot run the TypeScript
 * worker, so it is bundled once with esbuild, a development dependency that
 * is there whenever the sources are, into node_modules/.cache/ (so its bare
 * imports resolve from the project's node_modules), named by a hash of its
 * code so concurrent test processes share one file and a changed source
 * gets a new one.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The worker entry's file name in dist/ (tsup.config.ts builds it). */
export const WORKER_FILE = 'trust-worker.js'

let fromSources: Promise<URL> | undefined

/** The URL to start SignatureVerifier's workers from. */
export function workerScriptUrl(): Promise<URL> {
  const here = import.meta.url
  if (!/\.[cm]?ts$/.test(new URL(here).pathname)) return Promise.resolve(new URL(`./${WORKER_FILE}`, here))
  fromSources ??= bundleFromSources(here)
  return fromSources
}

interface EsbuildLike {
  build(options: Record<string, unknown>): Promise<{ outputFiles: { contents: Uint8Array }[] }>
}

async function bundleFromSources(here: string): Promise<URL> {
  // A name in a variable, so no bundler of the package follows this import.
  const name = 'esbuild'
  const esbuild = (await import(name)) as EsbuildLike
  const result = await esbuild.build({
    entryPoints: [fileURLToPath(new URL('./worker/verify-worker.ts', here))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  })
  const code = (result.outputFiles[0] as { contents: Uint8Array }).contents
  const dir = fileURLToPath(new URL('../../node_modules/.cache/price-store-trust/', here))
  const file = `${dir}verify-worker-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`
  if (!existsSync(file)) {
    await mkdir(dir, { recursive: true })
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
    await writeFile(partial, code)
    await rename(partial, file)
  }
  return pathToFileURL(file)
}
