/**
 * `reject` ingest of this checkout against another one, batch by batch in
 * one process: `cd bench && node --import tsx signatures-ab.ts --base ../../other-checkout [--runs 8] [--kinds arweave]`.
 *
 * The machine these benches run on changes speed by 15–25 % within
 * minutes, so two runs of signatures-ingest.bench.ts cannot tell a change of
 * a few per cent from the weather. Here each run opens one store from each
 * checkout (`--base` names its root; its sources are loaded through tsx
 * like these), writes one batch of other records into each, then times
 * four batches of 10,000 distinct signed records into each in turn, the
 * order swapped every batch, so a slow second hits both alike. Each run
 * prints the base's time over this checkout's (above 1: this one is
 * faster); the median of `--runs` runs ends the output. Two copies of one
 * checkout gave 0.97–1.06 a run, so read medians of several runs. The two
 * stores share one event loop: a change to when a store runs its seal steps
 * is not measured fairly here (a step one store defers lands in the other's
 * batch); measure such a change with signatures-ingest.bench.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { PriceStore } from '../src/index.js'
import type { NewPriceRecord } from '../src/types.js'
import type { SignatureKind } from '../src/trust/verdict.js'
import { cachedSignedRecords } from './signatures-records.js'

const { values: args } = parseArgs({ options: { base: { type: 'string' }, runs: { type: 'string', default: '8' }, kinds: { type: 'string', default: 'arweave' } } })
if (args.base === undefined) throw new Error('--base names the root of the checkout to compare with')
const BATCH = 10_000
/** Even: each checkout goes first as often as second (the second of a pair meets what the first left: its seal, its garbage). */
const BATCHES = 4
const RUNS = Number(args.runs)
const base = (await import(pathToFileURL(resolve(args.base, 'src/index.ts')).href)) as { PriceStore: typeof PriceStore }
// The 60,000 records signatures-ingest.bench.ts signs and keeps (the first 50,000 used here).
const signed = await cachedSignedRecords(60_000, args.kinds.split(',') as SignatureKind[])
const records = signed.records as unknown as NewPriceRecord[]
const { provider } = signed

interface Opened { readonly store: PriceStore; readonly dir: string; elapsed: number }

async function open(Store: typeof PriceStore): Promise<Opened> {
  const dir = await mkdtemp(join(tmpdir(), 'price-store-sig-ab-'))
  const store = await Store.open(join(dir, 'db'), {
    provider: { name: 'bench', id: provider.id, publicKey: provider.publicKey },
    signatures: { policy: 'reject', evmSigners: [provider.evmAddress] },
  })
  // Workers started and compiled before the clock, as in signatures-ingest.bench.ts.
  await store.putBatch(records.slice(0, BATCH))
  return { store, dir, elapsed: 0 }
}

const ratios: number[] = []
for (let run = 0; run < RUNS; run++) {
  const pair = [await open(base.PriceStore), await open(PriceStore)] as const
  try {
    for (let batch = 1; batch <= BATCHES; batch++) {
      for (const side of batch % 2 === 0 ? pair : [...pair].reverse()) {
        const started = performance.now()
        await side.store.putBatch(records.slice(batch * BATCH, (batch + 1) * BATCH))
        side.elapsed += performance.now() - started
      }
    }
  } finally {
    for (const side of pair) {
      await side.store.close()
      await rm(side.dir, { recursive: true, force: true })
    }
  }
  ratios.push(pair[0].elapsed / pair[1].elapsed)
  process.stdout.write(`run ${run + 1}: base ${pair[0].elapsed.toFixed(0)} ms, this checkout ${pair[1].elapsed.toFixed(0)} ms: ×${ratios.at(-1)!.toFixed(3)}\n`)
}
const sorted = [...ratios].sort((a, b) => a - b)
const median = ((sorted[Math.floor((RUNS - 1) / 2)] as number) + (sorted[Math.ceil((RUNS - 1) / 2)] as number)) / 2
process.stdout.write(`median ×${median.toFixed(3)} over ${RUNS} runs (above 1: this checkout is faster)\n`)
