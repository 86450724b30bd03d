import type { PriceStore } from '../store/price-store.js'
import { countDemoRecords, generateDemoRecords, type DemoOptions, type DemoRecord } from '../demo/demo-data.js'
import { markDemo, readDemoMark, type DemoRecipe } from './demo-marker.js'
import type { CliIo } from './io.js'
import { Progress, formatCount } from './progress.js'

/** What to generate; the provider id is always the store's own. */
export type DemoLoadOptions = Omit<DemoOptions, 'providerId'> & { readonly batchSize?: number }

/** What writing the demo took. */
export interface DemoWritten {
  readonly count: number
  readonly seconds: number
  readonly rate: string
}

/**
 * Writes the demo data set into `store` in atomic batches, showing progress
 * on a terminal. Writing it twice replaces the same records (same ids).
 */
export async function writeDemoData(store: PriceStore, io: CliIo, options: DemoLoadOptions = {}): Promise<DemoWritten> {
  const { batchSize = 10_000, ...rest } = options
  const demo: DemoOptions = { ...rest, providerId: store.provider.id }
  const progress = new Progress(io, 'writing demo data', { total: countDemoRecords(demo) })
  let batch: DemoRecord[] = []
  for (const record of generateDemoRecords(demo)) {
    batch.push(record)
    if (batch.length >= batchSize) {
      progress.add(await store.putMany(batch))
      batch = []
    }
  }
  if (batch.length > 0) progress.add(await store.putMany(batch))
  return progress.finish()
}

/**
 * Writes the demo into a store at `location` that holds nothing else (or
 * only an unfinished demo of the same recipe), marked as unfinished before
 * the first batch and as finished only after the last: a run interrupted
 * half way leaves a mark that says so, and the next
 * `serve --demo-if-empty` finishes it rather than serving half a demo.
 */
export async function writeMarkedDemo(
  store: PriceStore,
  location: string,
  io: CliIo,
  writtenBy: string,
  options: DemoRecipe & { readonly batchSize?: number } = {},
): Promise<DemoWritten> {
  const { batchSize, ...recipe } = options
  await markDemo(location, { finished: false, writtenBy, recipe })
  const written = await writeDemoData(store, io, batchSize === undefined ? recipe : { ...recipe, batchSize })
  await markDemo(location, { finished: true, writtenBy, recipe })
  return written
}

/**
 * `serve --demo-if-empty`: writes the demo into an empty store, and finishes
 * a demo that an earlier run left unfinished (interrupted while writing it)
 * by writing its recipe whole again: the records written before are
 * replaced by the same ones, so the store ends up with exactly the full set.
 */
export async function ensureDemo(store: PriceStore, location: string, io: CliIo): Promise<void> {
  const mark = await readDemoMark(location)
  let recipe: DemoRecipe = {}
  if (mark?.finished === false) {
    recipe = mark.recipe
    io.stderr.write(
      `the demo data set at ${location} is not finished (its writing by "${mark.writtenBy}" was interrupted): finishing it ` +
        '(writing it whole again; the records already there are replaced, not duplicated)...\n',
    )
  } else if ((await store.symbols()).length === 0) {
    io.stderr.write(`the database at ${location} is empty: writing the demo data set (run once)...\n`)
  } else {
    return
  }
  const { count, seconds } = await writeMarkedDemo(store, location, io, 'price-store serve --demo-if-empty', recipe)
  io.stderr.write(`wrote ${formatCount(count)} demo records in ${seconds.toFixed(1)} s\n`)
}
