/**
 * Child process of crash.test.ts: writes the crash plan's batches into a
 * store until it is killed.
 *
 *   node crash-writer.cjs <dir> <firstBatch> <sync: 0|1> <recordsPerSymbol> [openBytes|default] [minutes|hours]
 *
 * Prints `READY` once the store is open, `BEGIN <n>` before it hands batch n
 * to `putMany`, and `ACK <n>` after that `putMany` has resolved (stdout is a pipe, which Node writes
 * synchronously on Linux, so a printed ACK is in the pipe before the next
 * batch starts). Every few batches it also reads, so the hot tails are
 * loaded and merged while it writes, as in a serving process. Hours are
 * sealed in the store's write queue right after each batch (at once with
 * `openBytes` 0, or once time has moved past them), so a kill shortly after
 * an ACK often lands in a seal.
 */
import { PriceStore } from '../../src/index.js'
import type { PriceStoreOptions } from '../../src/index.js'
import { CRASH_PROVIDER, CRASH_SYMBOLS, batchRecords } from './crash-plan.js'
import type { CrashLayout } from './crash-plan.js'

async function main(): Promise<void> {
  const [dir, first, sync, perSymbol, openBytes = 'default', layout = 'minutes'] = process.argv.slice(2)
  if (dir === undefined || first === undefined || (layout !== 'minutes' && layout !== 'hours')) {
    throw new Error('usage: crash-writer <dir> <firstBatch> [sync] [recordsPerSymbol] [openBytes|default] [minutes|hours]')
  }
  const options: PriceStoreOptions = {
    provider: CRASH_PROVIDER,
    sync: sync === '1',
    cache: { recordsPerSymbol: Number(perSymbol ?? 128) },
    ...(openBytes === 'default' ? {} : { openBytes: Number(openBytes) }),
  }
  const store = await PriceStore.open(dir, options)
  process.stdout.write('READY\n')
  for (let n = Number(first); n < Number(first) + 100_000; n++) {
    process.stdout.write(`BEGIN ${n}\n`)
    await store.putMany(batchRecords(n, layout as CrashLayout))
    process.stdout.write(`ACK ${n}\n`)
    if (n % 3 === 0) await store.several(CRASH_SYMBOLS)
  }
  await store.close()
}

main().catch((err: unknown) => {
  process.stderr.write(`crash-writer failed: ${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(3)
})
