/**
 * Issue 22's ingest benchmark: what verifying signatures costs a store's writes.
 * `cd bench && node --import tsx signatures-ingest.bench.ts [--records 30000] [--batch 10000] [--out FILE]`.
 *
 * The same distinct Arweave-signed records (RSA-4096, RedStone-shaped) are
 * written in batches of `--batch` into a new classic-level store three times:
 * with `signatures.policy` `off`, `flag` and `reject` (and `reject` with two
 * batches in flight); and verified by a
 * SignatureVerifier alone (one worker per core, as the store's). Reported:
 * records per second of each, and `reject` against the lower of the
 * verifier's rate and ingest with verification off (the issue asks 80 %).
 * Writes results/issue22-ingest.md (or --out) with the load average it
 * started with: measure on a quiet machine.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { PriceStore } from '../src/index.js'
import type { NewPriceRecord } from '../src/types.js'
import { SignatureVerifier } from '../src/trust/signature-verifier.js'
import { benchProvider, benchSigners, signedRecords } from './signatures-records.js'

const { values: args } = parseArgs({ options: { records: { type: 'string', default: '30000' }, batch: { type: 'string', default: '10000' }, out: { type: 'string' } } })
const RECORDS = Number(args.records)
const BATCH = Number(args.batch)
const log = (text: string): void => void process.stderr.write(`${text}\n`)

const load = loadavg()[0]!
log(`signing ${RECORDS} records (RSA-4096)…`)
const provider = benchProvider()
const records = signedRecords(provider, 'arweave', RECORDS) as unknown as NewPriceRecord[]
const batches = Array.from({ length: Math.ceil(RECORDS / BATCH) }, (_, i) => records.slice(i * BATCH, (i + 1) * BATCH))

/**
 * Records per second of writing every batch into a new store: one after another as a writer that waits for each
 * does (`inFlight` 1), or keeping `inFlight` batches given at once (the store writes them in the order given, and
 * verifies one while it writes another).
 */
async function ingest(policy: 'off' | 'flag' | 'reject', inFlight = 1): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), `price-store-sig-ingest-${policy}-`))
  const store = await PriceStore.open(join(dir, 'db'), {
    provider: { name: 'bench', id: provider.id, publicKey: provider.publicKey },
    signatures: { policy, evmSigners: [provider.evmAddress] },
  })
  try {
    // The first batch starts the workers; a warm-up of 100 records keeps their start out of the figure.
    if (policy !== 'off') await store.checkSignatures(records.slice(0, 100))
    const started = performance.now()
    const pending = new Set<Promise<unknown>>()
    for (const batch of batches) {
      if (pending.size >= inFlight) await Promise.race(pending)
      const write = store.putBatch(batch).finally(() => pending.delete(write))
      pending.add(write)
    }
    await Promise.all(pending)
    const seconds = (performance.now() - started) / 1000
    if (policy !== 'off' && (await store.verify()).stored.valid !== RECORDS) throw new Error(`${policy}: not every record was stored valid`)
    return RECORDS / seconds
  } finally {
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
}

/** Records per second of SignatureVerifier alone on the same batches (no cache: every signature verified). */
async function verifierAlone(): Promise<number> {
  const verifier = new SignatureVerifier({ signers: benchSigners(provider), cacheSize: 0 })
  try {
    await verifier.verifyMany(records.slice(0, 100))
    const started = performance.now()
    for (const batch of batches) await verifier.verifyMany(batch as unknown as Record<string, unknown>[])
    return RECORDS / ((performance.now() - started) / 1000)
  } finally {
    await verifier.close()
  }
}

/** The median of three runs, taken in turn with the other cases' (so a slow minute of the machine hits every case alike). */
const ROUNDS = 3
const cases = {
  verifier: () => verifierAlone(),
  off: () => ingest('off'),
  flag: () => ingest('flag'),
  reject: () => ingest('reject'),
  rejectPipelined: () => ingest('reject', 2),
}
const runs: Record<keyof typeof cases, number[]> = { verifier: [], off: [], flag: [], reject: [], rejectPipelined: [] }
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(cases) as [keyof typeof cases, () => Promise<number>][]) {
    runs[name].push(await run())
    log(`round ${round + 1}: ${name} ${Math.round(runs[name].at(-1)!)} records/s`)
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const rates = Object.fromEntries(Object.entries(runs).map(([name, values]) => [name, median(values)])) as Record<keyof typeof cases, number>
const floor = Math.min(rates.verifier, rates.off)
const share = (rate: number): string => `${Math.round((rate / floor) * 100)} %`
const format = (rate: number): string => Math.round(rate).toLocaleString('en-US')
const report = `# Ingest with signature verification (issue 22)

\`cd bench && node --import tsx signatures-ingest.bench.ts --records ${RECORDS} --batch ${BATCH}\`, ${new Date().toISOString()},
${availableParallelism()} cores, load average ${load.toFixed(2)} at the start.
${RECORDS.toLocaleString('en-US')} distinct RedStone-shaped records with an Arweave signature (RSA-4096), written
in batches of ${BATCH.toLocaleString('en-US')} by one writer into a new classic-level store; each figure the median of
${ROUNDS} runs taken in turn (all runs: ${Object.entries(runs).map(([name, values]) => `${name} ${values.map((v) => Math.round(v)).join('/')}`).join(', ')}).

| | records/s | of min(verifier, off) |
|---|---|---|
| SignatureVerifier alone (${availableParallelism()} workers, no cache) | ${format(rates.verifier)} | ${share(rates.verifier)} |
| ingest, \`signatures.policy: 'off'\` | ${format(rates.off)} | ${share(rates.off)} |
| ingest, \`'flag'\` | ${format(rates.flag)} | ${share(rates.flag)} |
| ingest, \`'reject'\` | ${format(rates.reject)} | ${share(rates.reject)} |
| ingest, \`'reject'\`, 2 batches in flight | ${format(rates.rejectPipelined)} | ${share(rates.rejectPipelined)} |
`
await writeFile(args.out ?? new URL('./results/issue22-ingest.md', import.meta.url), report)
process.stdout.write(report)
