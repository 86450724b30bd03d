/**
 * Reopening after `kill -9` (issue 20's target: under 1 s at 6 M records,
 * whatever was written). A child writes a workload's batches
 * (write-workloads.ts) into a copy of a built store and is killed with
 * SIGKILL once `batches` are acknowledged; `PriceStore.open` of the copy
 * is then timed in a fresh process, twice (the first opener exits without
 * closing, as a crash would).
 *
 * `node --import tsx reopen-after-kill.ts STORE_DIR WORKLOAD BATCHES`, e.g. with the
 * 7-day store `run.ts` builds: `.data/store-7d-g2-<hash>/db adversarial 150`.
 */
import { execFileSync, spawn } from 'node:child_process'
import { cp, rm } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER } from './generate.js'
import { WORKLOADS, workloadBatches, type WorkloadName } from './write-workloads.js'

const SELF = fileURLToPath(import.meta.url)
const [mode, dir, workload] = process.argv.slice(2)

if (mode === '--write') await writeUntilKilled(dir as string, workload as WorkloadName)
else if (mode === '--open') await timeOpen(dir as string)
else await main(mode as string, dir as WorkloadName, Number(workload))

async function writeUntilKilled(copy: string, name: WorkloadName): Promise<void> {
  const store = await PriceStore.open(copy, { provider: BENCH_PROVIDER })
  let written = 0
  for (const batch of workloadBatches({ name, records: 2_000_000, seed: 7 })) {
    await store.putMany(batch)
    process.stdout.write(`W ${++written}\n`)
  }
  process.stdout.write('END\n')
}

async function timeOpen(copy: string): Promise<void> {
  const started = performance.now()
  const store = await PriceStore.open(copy, { provider: BENCH_PROVIDER })
  const openMs = Math.round(performance.now() - started)
  const stats = await store.stats()
  console.log(JSON.stringify({ openMs, records: stats.records, unsealed: stats.unsealedRecords }))
  process.exit(0) // no close: the store is left as a crash leaves it
}

async function main(source: string, name: WorkloadName, count: number): Promise<void> {
  if (!WORKLOADS.includes(name) || !(count > 0)) throw new Error(`usage: reopen-after-kill.ts STORE_DIR (${WORKLOADS.join('|')}) BATCHES`)
  const copy = `${source}-reopen-copy`
  await rm(copy, { recursive: true, force: true })
  await cp(source, copy, { recursive: true })
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', SELF, '--write', copy, name], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    let acknowledged = 0
    let ended = false
    for await (const chunk of child.stdout) {
      const text = String(chunk)
      acknowledged += (text.match(/^W /gm) ?? []).length
      ended ||= text.includes('END')
      if (acknowledged >= count || ended) break
    }
    child.kill('SIGKILL')
    await exited
    for (let trial = 1; trial <= 2; trial++) {
      const answer = execFileSync(process.execPath, ['--import', 'tsx', SELF, '--open', copy]).toString().trim()
      console.log(`${name}, killed after ${acknowledged} acknowledged batches; open ${trial}: ${answer}`)
    }
  } finally {
    await rm(copy, { recursive: true, force: true })
  }
}
