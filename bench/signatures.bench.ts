/**
 * Issue 22's signature benchmark:
 * `cd bench && node --import tsx signatures.bench.ts [--seconds 3] [--out FILE]`.
 *
 * 1. Each kind's ceiling: verifyRecord in a tight loop, one worker thread per
 *    core (os.availableParallelism()), no cache: verifications per second on
 *    all cores. For the EVM kinds with both secp256k1 backends (libsecp256k1
 *    through the `secp256k1` package's prebuilt binding, and @noble/curves),
 *    which is how the library was chosen.
 * 2. SignatureVerifier on batches of 10,000 distinct records of each kind,
 *    cache off (every signature verified), as `reject` ingest would call it:
 *    records per second, and its share of the ceiling (the issue asks 80 %).
 * 3. The same batch again with the cache on: what re-checking a range
 *    already verified costs.
 * Writes the tables to results/issue22-signatures.md (or --out) and notes
 * the load average it started with: measure on a quiet machine.
 */
import { writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { defaultBackend, type Secp256k1Backend } from '../src/trust/secp256k1-recover.js'
import { SignatureVerifier } from '../src/trust/signature-verifier.js'
import type { SignatureKind } from '../src/trust/verdict.js'
import { benchProvider, benchSigners, signedRecords, tightLoopRate, type LoopTask } from './signatures-records.js'

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, out: { type: 'string' }, batch: { type: 'string', default: '10000' } } })
const SECONDS = Number(args.seconds)
const BATCH = Number(args.batch)
const THREADS = availableParallelism()
const log = (text: string): void => void process.stderr.write(`${text}\n`)

interface Case { readonly kind: SignatureKind; readonly backend: Secp256k1Backend }
const CASES: readonly Case[] = [
  { kind: 'arweave', backend: defaultBackend() },
  { kind: 'lite-evm', backend: 'native' },
  { kind: 'lite-evm', backend: 'noble' },
  { kind: 'evm-typed', backend: 'native' },
  { kind: 'evm-typed', backend: 'noble' },
]

/** Tight-loop verifications per second on every core. */
async function ceiling(task: Omit<LoopTask, 'offset'>): Promise<number> {
  return (await tightLoopRate(task, THREADS)).rate
}

/** SignatureVerifier records per second over `rounds` runs of the batch (median). */
async function poolRate(verifier: SignatureVerifier, batch: readonly Record<string, unknown>[], rounds: number): Promise<number> {
  const rates: number[] = []
  for (let round = 0; round < rounds; round++) {
    const start = performance.now()
    const verdicts = await verifier.verifyMany(batch)
    rates.push((batch.length / (performance.now() - start)) * 1000)
    if (verdicts.some((v) => v.overall !== 'valid')) throw new Error('the pool found an invalid bench record')
  }
  return rates.sort((a, b) => a - b)[Math.floor(rates.length / 2)] as number
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US')

const load = loadavg()[0] ?? 0
log(`signatures bench: ${THREADS} threads, load average ${load.toFixed(2)} at start; signing ${BATCH} records per kind…`)
const provider = benchProvider()
const signers = benchSigners(provider)
const records = new Map<SignatureKind, Record<string, unknown>[]>()
for (const kind of ['arweave', 'lite-evm', 'evm-typed'] as const) {
  const start = performance.now()
  records.set(kind, signedRecords(provider, kind, BATCH))
  log(`  ${kind}: signed in ${((performance.now() - start) / 1000).toFixed(1)} s`)
}

const rows: string[] = []
for (const { kind, backend } of CASES) {
  const batch = records.get(kind) as Record<string, unknown>[]
  const label = kind === 'arweave' ? 'arweave (RSA-4096 PSS, node:crypto)' : `${kind} (${backend})`
  log(`  ${label}: tight loop…`)
  const top = await ceiling({ signers, records: JSON.stringify(batch), backend, seconds: SECONDS })
  const uncached = new SignatureVerifier({ signers, threads: THREADS, secp256k1: backend, cacheSize: 0 })
  const cached = new SignatureVerifier({ signers, threads: THREADS, secp256k1: backend })
  try {
    log(`  ${label}: pool…`)
    const pool = await poolRate(uncached, batch, 3)
    await cached.verifyMany(batch)
    const again = await poolRate(cached, batch, 3)
    rows.push(`| ${label} | ${fmt(top)} | ${fmt(top / THREADS)} | ${fmt(pool)} | ${((pool / top) * 100).toFixed(0)} % | ${fmt(again)} |`)
  } finally {
    await Promise.all([uncached.close(), cached.close()])
  }
  log(rows[rows.length - 1] as string)
}

const report = [
  '# Issue 22: signature verification rates',
  '',
  `${new Date().toISOString().slice(0, 10)}, ${THREADS} threads (${cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, load average ${load.toFixed(2)} at start; \`cd bench && node --import tsx signatures.bench.ts --seconds ${SECONDS}\`.`,
  '',
  `Ceiling: verifyRecord in a tight loop on every core, no cache. Pool: SignatureVerifier.verifyMany on batches of ${fmt(BATCH)} distinct records, cache off (median of 3). Cached: the same batch again with the cache on (every signature a hit).`,
  '',
  '| kind | ceiling, all cores (/s) | per core (/s) | pool, 10k batches (/s) | pool / ceiling | cached re-check (/s) |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  ...rows,
  '',
].join('\n')
process.stdout.write(report)
await writeFile(args.out ?? new URL('./results/issue22-signatures.md', import.meta.url), report)
