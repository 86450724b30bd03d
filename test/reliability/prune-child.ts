/**
 * Child process of prune-crash.test.ts: writes the late records of its
 * prune (`ACK` once written), then prunes until it is killed.
 *
 *   node prune-child.cjs <dir> <before> [symbol]
 *
 * Prints `PRUNING` when the prune starts, `STEP <records>` between its
 * turns and `DONE <result as JSON>` when it has finished.
 */
import { PriceStore } from '../../src/index.js'
import { CRASH_PROVIDER } from './crash-plan.js'
import { lateRecords } from './prune-plan.js'

async function main(): Promise<void> {
  const [dir, beforeText, symbol] = process.argv.slice(2)
  if (dir === undefined || beforeText === undefined) throw new Error('usage: prune-child <dir> <before> [symbol]')
  const before = Number(beforeText)
  const store = await PriceStore.open(dir, { provider: CRASH_PROVIDER })
  await store.putMany(lateRecords(before))
  process.stdout.write('ACK\nPRUNING\n')
  const result = await store.prune({
    before, ...(symbol === undefined ? {} : { symbol }),
    onProgress: (progress) => process.stdout.write(`STEP ${progress.records}\n`),
  })
  process.stdout.write(`DONE ${JSON.stringify(result)}\n`)
  await store.close()
}

main().catch((err: unknown) => {
  process.stderr.write(`prune-child failed: ${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(3)
})
