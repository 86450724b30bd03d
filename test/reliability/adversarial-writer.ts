/**
 * Child process of crash-adversarial.test.ts: writes the batches of the
 * adversarial history (bench/adversarial-history.ts, a pure function of its
 * seed) into a store until it is killed.
 *
 *   node adversarial-writer.cjs <dir> <firstBatch> <seed> <batches> <openBytes>
 *
 * Prints `READY` once the store is open, `BEGIN <n>` before it hands batch n
 * (0-based) to `putMany`, `ACK <n>` after it resolved, and `DONE` after the
 * last batch (then waits to be killed). A small `openBytes` makes hours
 * sealed while it writes, so late records, backfills and rewrites into
 * sealed hours become delta parts or chunk rewrites under the kill.
 */
import { adversarialHistory } from '../../bench/adversarial-history.js'
import { BENCH_PROVIDER } from '../../bench/generate.js'
import { PriceStore } from '../../src/index.js'

async function main(): Promise<void> {
  const [dir, first, seed, batches, openBytes] = process.argv.slice(2)
  if (dir === undefined || first === undefined || seed === undefined || batches === undefined || openBytes === undefined) {
    throw new Error('usage: adversarial-writer <dir> <firstBatch> <seed> <batches> <openBytes>')
  }
  const history = adversarialHistory(Number(seed), { batches: Number(batches), provider: BENCH_PROVIDER.id })
  const store = await PriceStore.open(dir, { provider: BENCH_PROVIDER, openBytes: Number(openBytes) })
  process.stdout.write('READY\n')
  for (let n = Number(first); n < history.length; n++) {
    process.stdout.write(`BEGIN ${n}\n`)
    await store.putMany(history[n] as NonNullable<(typeof history)[number]>)
    process.stdout.write(`ACK ${n}\n`)
  }
  process.stdout.write('DONE\n')
  // Stay alive (and keep sealing) until killed.
  setInterval(() => {}, 1_000)
}

main().catch((err: unknown) => {
  process.stderr.write(`adversarial-writer failed: ${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(3)
})
