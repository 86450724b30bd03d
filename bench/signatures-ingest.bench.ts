/**
 * Issue 22's ingest benchmark: what verifying signatures costs a store's writes.
 * `cd bench && node --import tsx signatures-ingest.bench.ts [--records 50000] [--batch 10000] [--rounds 3] [--kinds arweave] [--out FILE]`.
 *
 * The same distinct signed records (RedStone-shaped, each with the
 * signatures `--kinds` names: `arweave` (RSA-4096, the default),
 * `lite-evm`, `evm-typed`, or several, as RedStone's records carried an
 * Arweave and a lite EVM signature; signed once and kept in the temporary
 * directory, signatures-records.ts) are
 * written in batches of `--batch` into a new classic-level store: with
 * `signatures.policy` `off`, `flag` and `reject` (and `reject` with two
 * batches in flight); verified by a SignatureVerifier alone (one worker per
 * core, as the store's); and verified in a tight loop on every core (the
 * ceiling, signatures-loop.ts). Before the clock starts, each store takes
 * one batch of other records (signed alike, earlier in time, so the
 * measured ones still arrive in order) under its own policy, and the
 * verifier alone verifies it: the figure is a running service's, not that
 * of workers still starting and compiling their code. Their outcomes in
 * the cache do not help the measured records, whose signatures differ.
 * Every round runs each case in turn, starting one case later than the
 * round before, so a busy minute of a shared machine and the order of the
 * cases hit them alike. Reported: records per second (medians), `reject`
 * against the lower of the ceiling and ingest with verification off (the
 * issue asks 80 %), the same ratio taken within each round, and the CPU
 * time of the process per record (all threads), which other load disturbs
 * less than rates do. Writes results/issue22-ingest.md (or --out) with the
 * load average of each round.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { PriceStore } from '../src/index.js'
import type { NewPriceRecord } from '../src/types.js'
import { SignatureVerifier } from '../src/trust/signature-verifier.js'
import type { SignatureKind } from '../src/trust/verdict.js'
import { benchSigners, cachedSignedRecords, tightLoopRate } from './signatures-records.js'

const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '50000' }, batch: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '3' },
    kinds: { type: 'string', default: 'arweave' }, out: { type: 'string' },
  },
})
const RECORDS = Number(args.records)
const BATCH = Number(args.batch)
const ROUNDS = Number(args.rounds)
const KINDS = args.kinds.split(',') as SignatureKind[]
const KIND_NAMES: Record<SignatureKind, string> = { arweave: 'an Arweave signature (RSA-4096)', 'lite-evm': 'a lite EVM signature (secp256k1)', 'evm-typed': 'an EIP-712 signature (secp256k1)' }
if (KINDS.length === 0 || KINDS.some((kind) => !(kind in KIND_NAMES))) throw new Error(`--kinds takes a comma-separated list of ${Object.keys(KIND_NAMES).join(', ')}`)
const log = (text: string): void => void process.stderr.write(`${text}\n`)

const load = loadavg()[0]!
log(`signing ${RECORDS + BATCH} records (${KINDS.join(' and ')}), or reading them signed before…`)
const signed = await cachedSignedRecords(RECORDS + BATCH, KINDS)
const provider = signed.provider
/** One batch of other records, taken by each case's new store (or verifier) before its clock starts. */
const warmUp = signed.records.slice(0, BATCH) as unknown as NewPriceRecord[]
const records = signed.records.slice(BATCH) as unknown as NewPriceRecord[]
/** CPU µs per record of the last case run (user + system, every thread of the process). */
let cpuPerRecord = 0
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
    // Written, not only checked: checkSignatures verifies under `reject` only, and would leave `flag`'s workers cold.
    await store.putBatch(warmUp)
    const cpu = process.cpuUsage()
    const started = performance.now()
    const pending = new Set<Promise<unknown>>()
    for (const batch of batches) {
      if (pending.size >= inFlight) await Promise.race(pending)
      const write = store.putBatch(batch).finally(() => pending.delete(write))
      pending.add(write)
    }
    await Promise.all(pending)
    const seconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    cpuPerRecord = (used.user + used.system) / RECORDS
    if (policy !== 'off' && (await store.verify()).stored.valid !== RECORDS + warmUp.length) throw new Error(`${policy}: not every record was stored valid`)
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
    await verifier.verifyMany(warmUp as unknown as Record<string, unknown>[])
    const cpu = process.cpuUsage()
    const started = performance.now()
    for (const batch of batches) await verifier.verifyMany(batch as unknown as Record<string, unknown>[])
    const rate = RECORDS / ((performance.now() - started) / 1000)
    const used = process.cpuUsage(cpu)
    cpuPerRecord = (used.user + used.system) / RECORDS
    return rate
  } finally {
    await verifier.close()
  }
}

/** The tight loop on every core for 3 s, over the first 10,000 records (as signatures.bench.ts measures it). */
async function ceiling(): Promise<number> {
  const loop = await tightLoopRate({ signers: benchSigners(provider), records: JSON.stringify(records.slice(0, 10_000)), backend: 'native', seconds: 3 }, availableParallelism())
  cpuPerRecord = loop.cpuPerRecord
  return loop.rate
}

/** Each figure the median of `--rounds` runs, taken in turn with the other cases' (so a slow minute of the machine hits every case alike). */
const cases = {
  ceiling: () => ceiling(),
  verifier: () => verifierAlone(),
  off: () => ingest('off'),
  flag: () => ingest('flag'),
  reject: () => ingest('reject'),
  rejectPipelined: () => ingest('reject', 2),
}
type CaseName = keyof typeof cases
const runs: Record<CaseName, number[]> = { ceiling: [], verifier: [], off: [], flag: [], reject: [], rejectPipelined: [] }
const cpu: Record<CaseName, number[]> = { ceiling: [], verifier: [], off: [], flag: [], reject: [], rejectPipelined: [] }
const roundLines: string[] = []
for (let round = 0; round < ROUNDS; round++) {
  const roundLoad = loadavg()[0]!
  const order = Object.entries(cases) as [CaseName, () => Promise<number>][]
  for (const [name, run] of [...order.slice(round % order.length), ...order.slice(0, round % order.length)]) {
    runs[name].push(await run())
    cpu[name].push(cpuPerRecord)
    log(`round ${round + 1}: ${name} ${Math.round(runs[name].at(-1)!)} records/s, ${cpuPerRecord.toFixed(1)} CPU µs/record`)
  }
  const of = (name: CaseName): string => ((runs[name][round]! / Math.min(runs.ceiling[round]!, runs.off[round]!)) * 100).toFixed(0)
  roundLines.push(`| ${round + 1} | ${roundLoad.toFixed(2)} | ${Math.round(runs.ceiling[round]!).toLocaleString('en-US')} | ${of('verifier')} % | ${of('reject')} % | ${of('rejectPipelined')} % |`)
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const rates = Object.fromEntries(Object.entries(runs).map(([name, values]) => [name, median(values)])) as Record<CaseName, number>
const cpus = Object.fromEntries(Object.entries(cpu).map(([name, values]) => [name, median(values)])) as Record<CaseName, number>
const floor = Math.min(rates.ceiling, rates.off)
const share = (rate: number): string => `${Math.round((rate / floor) * 100)} %`
const format = (rate: number): string => Math.round(rate).toLocaleString('en-US')
const report = `# Ingest with signature verification (issue 22)

\`cd bench && node --import tsx signatures-ingest.bench.ts --records ${RECORDS} --batch ${BATCH} --rounds ${ROUNDS} --kinds ${KINDS.join(',')}\`, ${new Date().toISOString()},
${availableParallelism()} cores, load average ${load.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end.
${RECORDS.toLocaleString('en-US')} distinct RedStone-shaped records with ${KINDS.map((kind) => KIND_NAMES[kind]).join(' and ')}, written
in batches of ${BATCH.toLocaleString('en-US')} by one writer into a new classic-level store, after one batch of other records (earlier
in time) written under the same policy; each figure the median of ${ROUNDS} runs taken in turn, each round starting one case
later (all runs: ${Object.entries(runs).map(([name, values]) => `${name} ${values.map((v) => Math.round(v)).join('/')}`).join(', ')}).
Ceiling: verifyRecord in a tight loop on every core, no cache (signatures-loop.ts). CPU: user + system time of the
process (all threads) per record.

| | records/s | of min(ceiling, off) | CPU µs/record |
|---|---|---|---|
| tight loop, ${availableParallelism()} threads (the ceiling) | ${format(rates.ceiling)} | ${share(rates.ceiling)} | ${cpus.ceiling.toFixed(1)} |
| SignatureVerifier alone (${availableParallelism()} workers, no cache) | ${format(rates.verifier)} | ${share(rates.verifier)} | ${cpus.verifier.toFixed(1)} |
| ingest, \`signatures.policy: 'off'\` | ${format(rates.off)} | ${share(rates.off)} | ${cpus.off.toFixed(1)} |
| ingest, \`'flag'\` | ${format(rates.flag)} | ${share(rates.flag)} | ${cpus.flag.toFixed(1)} |
| ingest, \`'reject'\` | ${format(rates.reject)} | ${share(rates.reject)} | ${cpus.reject.toFixed(1)} |
| ingest, \`'reject'\`, 2 batches in flight | ${format(rates.rejectPipelined)} | ${share(rates.rejectPipelined)} | ${cpus.rejectPipelined.toFixed(1)} |

Within each round (each case against that round's ceiling, so a busy minute counts against both):

| round | load at start | ceiling (/s) | verifier | reject | reject, 2 in flight |
|---|---|---|---|---|---|
${roundLines.join('\n')}
`
await writeFile(args.out ?? new URL('./results/issue22-ingest.md', import.meta.url), report)
process.stdout.write(report)
