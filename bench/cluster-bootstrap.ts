/**
 * What seeding a new node from a snapshot costs, against importing the records:
 * `cd bench && node --import tsx cluster-bootstrap.ts [--records N] [--quick] [--out FILE]`
 * (1,000,000 records by default; --quick: 50,000, a smoke test).
 *
 * One nats-server (JetStream, R1 bucket) on loopback. A source store (classic-level in a temp folder) is filled
 * with N RedStone-shaped records (generate.ts, the write benches' stream shape) in batches of 10,000. Then, once each:
 * (a) `publishSnapshot` of the source store (a backup, packed and uploaded into the stream's Object Store bucket),
 * (b) `restoreSnapshot` of it into a new directory and `PriceStore.open` there: the node's store, ready,
 * (c) `putMany` of the same records, in batches of 10,000, into a new empty store (the records are generated again
 *     from the same seed; only the putMany calls are timed).
 * Also timed for context: `store.backup()` alone, the first part of (a). Each result is checked: the restored store
 * holds the source's position and record count, the imported one the record count.
 *
 * Prints a markdown report on stdout (progress on stderr) and writes it to results/cluster-bootstrap.md (a --quick
 * run only to --out). The NATS server is stopped by PID and every temporary folder removed at the end, on failure
 * and on Ctrl-C too.
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { restoreSnapshot } from '../src/cluster/snapshot-restore.js'
import { publishSnapshot } from '../src/cluster/snapshots.js'
import { PriceStore } from '../src/index.js'
import { natsServerPath, withNatsScratch, type NatsCluster } from './cluster-nats.js'
import { BENCH_PROVIDER, DEFAULT_SEED, generateBatches } from './generate.js'
import { loadAtStart, otherBusyProcesses, runFactLines, runMain, writeReport } from './machine-state.js'
import { sourceRevision } from './source-revision.js'
import { streamShape } from './write-workloads.js'

const log = (text: string): void => void process.stderr.write(`${text}\n`)

const FULL_RECORDS = 1_000_000
const QUICK_RECORDS = 50_000
const BATCH = 10_000
const LOAD_LIMIT = 2
const LOAD_WAIT_MS = 5 * 60_000

interface Timings {
  readonly records: number
  readonly fillMs: number
  readonly backupMs: number
  readonly publishMs: number
  readonly restoreMs: number
  readonly openMs: number
  readonly importMs: number
  readonly storeBytes: number
  readonly snapshotBytes: number
}

/** Writes the data set into `store` in batches of 10,000; resolves with the time spent in putMany alone. */
async function fill(store: PriceStore, records: number): Promise<number> {
  let spent = 0
  let done = 0
  for (const batch of generateBatches(streamShape(records), BATCH, DEFAULT_SEED)) {
    const t0 = performance.now()
    await store.putMany(batch)
    spent += performance.now() - t0
    done += batch.length
    if (done % 100_000 === 0) log(`  ${done.toLocaleString('en-US')} records`)
  }
  return spent
}

async function measure(nats: NatsCluster, scratch: string, records: number): Promise<Timings> {
  const stores: PriceStore[] = []
  const open = async (dir: string): Promise<PriceStore> => {
    const store = await PriceStore.open(dir, { provider: BENCH_PROVIDER })
    stores.push(store)
    return store
  }
  try {
    log(`filling the source store with ${records.toLocaleString('en-US')} records ...`)
    const source = await open(join(scratch, 'source'))
    const fillMs = await fill(source, records)
    const { records: held } = await source.stats()

    log('(context) store.backup() alone ...')
    let t0 = performance.now()
    const backup = await source.backup(join(scratch, 'backup'))
    const backupMs = performance.now() - t0
    const storeBytes = backup.stats.disk?.bytes ?? Number.NaN
    await rm(backup.location, { recursive: true, force: true })

    log('(a) publishSnapshot ...')
    t0 = performance.now()
    const { snapshot } = await publishSnapshot(source, { servers: nats.urls, name: 'bench bootstrap' }, { stream: 'BOOT', nodeId: 'bench-source' })
    const publishMs = performance.now() - t0

    log('(b) restoreSnapshot and open ...')
    t0 = performance.now()
    const restored = await restoreSnapshot(snapshot, join(scratch, 'restored'))
    const restoreMs = performance.now() - t0
    t0 = performance.now()
    const seeded = await open(restored.location)
    const openMs = performance.now() - t0
    const seededStats = await seeded.stats()
    if (seeded.position !== source.position || seededStats.records !== held) {
      throw new Error(`the restored store holds ${seededStats.records} records at position ${seeded.position}, not ${held} at ${source.position}`)
    }

    log('(c) putMany into an empty store ...')
    const imported = await open(join(scratch, 'imported'))
    const importMs = await fill(imported, records)
    const importedStats = await imported.stats()
    if (importedStats.records !== held) throw new Error(`the imported store holds ${importedStats.records} records, not ${held}`)
    return { records: held, fillMs, backupMs, publishMs, restoreMs, openMs, importMs, storeBytes, snapshotBytes: snapshot.bytes }
  } finally {
    await Promise.allSettled(stores.map((store) => store.close()))
  }
}

const int = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—')
const seconds = (ms: number): string => (ms / 1000).toFixed(1)
const mib = (bytes: number): string => (Number.isFinite(bytes) ? (bytes / 2 ** 20).toFixed(0) : '—')
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`

function report(t: Timings): string[] {
  const seed = t.restoreMs + t.openMs
  const row = (what: string, ms: number): string => `| ${what} | ${seconds(ms)} | ${int(t.records / (ms / 1000))} | ${ratio(ms, t.importMs)} |`
  return [
    '| step | seconds | records/s | time vs (c) import |',
    '|---|--:|--:|--:|',
    row('(a) publishSnapshot (backup, pack, SHA-256, upload, prune)', t.publishMs),
    row('  of which store.backup() alone (measured apart, before)', t.backupMs),
    row('(b) restoreSnapshot + PriceStore.open (download, SHA-256, unpack, fsync, rename; open)', seed),
    row('  of which PriceStore.open', t.openMs),
    row('(a) + (b): a snapshot made for one new node', t.publishMs + seed),
    row('(c) putMany into an empty store, batches of 10,000', t.importMs),
    '',
    `A new node seeded from a snapshot already in the bucket pays (b): **${ratio(seed, t.importMs)}** of an import's time ` +
      `(${ratio(t.importMs, seed)} faster). Making the snapshot as well, (a) + (b), is ${ratio(t.publishMs + seed, t.importMs)} of it.`,
    '',
    `Sizes: the backup directory ${mib(t.storeBytes)} MiB (${int(t.storeBytes / t.records)} bytes a record); the snapshot object ${mib(t.snapshotBytes)} MiB. ` +
      `Filling the source store (putMany, the same way as (c), on a cold start) took ${seconds(t.fillMs)} s.`,
  ]
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, records: { type: 'string' }, out: { type: 'string' } } })
  const quick = values.quick === true
  const records = values.records === undefined ? (quick ? QUICK_RECORDS : FULL_RECORDS) : Number(values.records)
  if (!Number.isSafeInteger(records) || records < BATCH) throw new Error(`--records must be a whole number of at least ${BATCH}`)
  // Now, as the modules were just loaded: others commit to this tree while a run goes on.
  const source = sourceRevision()
  const binary = natsServerPath()
  if (binary === undefined) throw new Error('nats-server not found on PATH nor at /usr/sbin/nats-server')
  const load = await loadAtStart(quick, LOAD_LIMIT, LOAD_WAIT_MS)
  const busy = otherBusyProcesses('cluster-bootstrap.ts')
  const startedAt = Date.now()
  log('starting one NATS server ...')
  const timings = await withNatsScratch('price-store-bootstrap-', { size: 1, name: 'bench-bootstrap' }, (nats, scratch) => measure(nats, scratch, records))

  const markdown = [
    '# Cluster: seeding a node from a snapshot',
    '',
    ...runFactLines({ script: 'cluster-bootstrap.ts', quick, startedAt, binary, source, load, busy }),
    '',
    `${int(timings.records)} RedStone-shaped records (generate.ts: 684-character signatures, 5–30 sources) in a classic-level store. ` +
      'One nats-server with JetStream on this machine (loopback), the bucket R1 on its file store. The steps run one after another, ' +
      'in the order of the table, in one process; the restore reads the object back from the same server it was uploaded to.',
    '',
    ...report(timings),
    '',
    'What it cannot show: one run, so no spread; the bucket on one server (an R3 bucket writes every piece on three servers, ' +
      'which here would share the same disk and cores); loopback instead of a network between a node and NATS; the page cache ' +
      'holds the files the snapshot was packed from and the bytes just uploaded.',
  ].join('\n')
  await writeReport(markdown, { out: values.out, quick, name: 'cluster-bootstrap.md' })
}

runMain(main)
