/**
 * Child process of watch-crash.test.ts: writes the crash plan's batches
 * into a store until it is killed, printing each acknowledged commit's
 * position.
 *
 *   node watch-writer.cjs <dir> <firstBatch> <openBytes|default> <minutes|hours>
 *
 * Prints `READY` once the store is open, `BEGIN <n>` before batch n goes to
 * `putMany`, and `ACK <n> <position>` once it has resolved (nothing else
 * writes, so `store.position` is then that batch's commit).
 */
import { PriceStore } from '../../src/index.js'
import { CRASH_PROVIDER, batchRecords } from './crash-plan.js'
import type { CrashLayout } from './crash-plan.js'

async function main(): Promise<void> {
  const [dir, first, openBytes = 'default', layout = 'minutes'] = process.argv.slice(2)
  if (dir === undefined || first === undefined || (layout !== 'minutes' && layout !== 'hours')) {
    throw new Error('usage: watch-writer <dir> <firstBatch> [openBytes|default] [minutes|hours]')
  }
  const store = await PriceStore.open(dir, { provider: CRASH_PROVIDER, ...(openBytes === 'default' ? {} : { openBytes: Number(openBytes) }) })
  process.stdout.write('READY\n')
  for (let n = Number(first); n < Number(first) + 100_000; n++) {
    process.stdout.write(`BEGIN ${n}\n`)
    await store.putMany(batchRecords(n, layout as CrashLayout))
    process.stdout.write(`ACK ${n} ${store.position}\n`)
  }
  await store.close()
}

main().catch((err: unknown) => {
  process.stderr.write(`watch-writer failed: ${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(3)
})
