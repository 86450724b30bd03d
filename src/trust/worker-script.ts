/**
 * Where a worker's code is. From the built package, its file in dist/ (for
 * SignatureVerifier's own, dist/trust-worker.js) beside the file that holds
 * this code (tsup writes every entry and chunk into dist/). From sources
 * (tests, tsx) Node cannot run the TypeScript worker, so it is bundled once
 * with esbuild, a development dependency that is there whenever the sources
 * are, into node_modules/.cache/ (so its bare imports resolve from the
 * project's node_modules), named by a hash of its code so concurrent test
 * processes share one file and a changed source gets a new one.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * A worker thread's code: its file in dist/ (tsup.config.ts builds it), and where its source is, for running from
 * sources. A function: `import.meta.url` is read only when the source is needed (a bundle into CommonJS, as the
 * reliability tests' children are, has none).
 */
export interface WorkerEntry {
  readonly file: string
  readonly source: () => URL
}

/** SignatureVerifier's own worker: records sent as JSON. */
export const VERIFY_WORKER: WorkerEntry = { file: 'trust-worker.js', source: () => new URL('./worker/verify-worker.ts', import.meta.url) }

const fromSources = new Map<string, Promise<URL>>()

/** The URL to start the workers of `entry` from. */
export function workerScriptUrl(entry: WorkerEntry = VERIFY_WORKER): Promise<URL> {
  const here = import.meta.url
  if (!/\.[cm]?ts$/.test(new URL(here).pathname)) return Promise.resolve(new URL(`./${entry.file}`, here))
  const source = entry.source()
  let url = fromSources.get(source.href)
  if (url === undefined) fromSources.set(source.href, (url = bundleFromSources(source, here)))
  return url
}

interface EsbuildLike {
  build(options: Record<string, unknown>): Promise<{ outputFiles: { contents: Uint8Array }[] }>
}

async function bundleFromSources(source: URL, here: string): Promise<URL> {
  // A name in a variable, so no bundler of the package follows this import.
  const name = 'esbuild'
  const esbuild = (await import(name)) as EsbuildLike
  const result = await esbuild.build({
    entryPoints: [fileURLToPath(source)],
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
  const base = source.pathname.slice(source.pathname.lastIndexOf('/') + 1).replace(/\.[cm]?ts$/, '')
  const file = `${dir}${base}-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`
  if (!existsSync(file)) {
    await mkdir(dir, { recursive: true })
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
    await writeFile(partial, code)
    await rename(partial, file)
  }
  return pathToFileURL(file)
}
