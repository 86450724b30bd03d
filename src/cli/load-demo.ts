import type { PriceStore } from '../index.js'
import { countDemoRecords, generateDemoRecords, type DemoOptions } from '../demo/demo-data.js'
import type { CliIo } from './io.js'
import { Progress } from './progress.js'

/** What to generate; the provider id is always the store's own. */
export type DemoLoadOptions = Omit<DemoOptions, 'providerId'> & { readonly batchSize?: number }

/**
 * Writes the demo data set into `store` in atomic batches, showing progress
 * on a terminal. Writing it twice replaces the same records (same ids).
 */
export async function writeDemoData(
  store: PriceStore,
  io: CliIo,
  options: DemoLoadOptions = {},
): Promise<{ count: number; seconds: number; rate: string }> {
  const { batchSize = 10_000, ...rest } = options
  const demo: DemoOptions = { ...rest, providerId: store.provider.id }
  const progress = new Progress(io, 'writing demo data', countDemoRecords(demo))
  let batch: unknown[] = []
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
