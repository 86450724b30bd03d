/**
 * A store on disk built once from the generator and reused by the benches
 * that read one (quality, the feed catalogue): complete once its
 * `meta.json` names as many records as the shape holds.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { PriceStore } from '../src/index.js'
import type { Limits } from '../src/types.js'
import { BENCH_PROVIDER, generateBatches, type DataShape } from './generate.js'

/** Builds the store of `shape` at `folder`/db (with `limits`) unless a complete one is there; progress on standard error. */
export async function buildBenchStore(folder: string, shape: DataShape, limits: Partial<Limits>): Promise<void> {
  const dir = join(folder, 'db')
  const meta = await readFile(join(folder, 'meta.json'), 'utf8').then((text) => JSON.parse(text) as { records: number }, () => undefined)
  if (meta?.records === shape.records && existsSync(dir)) return
  await rm(folder, { recursive: true, force: true })
  await mkdir(folder, { recursive: true })
  const started = performance.now()
  const store = await PriceStore.open(dir, { provider: BENCH_PROVIDER, limits })
  let written = 0
  for (const batch of generateBatches(shape, 10_000)) {
    written += await store.putMany(batch)
    if (written % 500_000 < 10_000) process.stderr.write(`  ${written.toLocaleString('en-US')} records\n`)
  }
  await store.close()
  const seconds = (performance.now() - started) / 1000
  process.stderr.write(`built ${written.toLocaleString('en-US')} records in ${seconds.toFixed(0)} s\n`)
  await writeFile(join(folder, 'meta.json'), JSON.stringify({ records: written, seconds }))
}
