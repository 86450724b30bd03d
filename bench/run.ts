/**
 * `npm run bench` (7 days of data), `npm run bench:quick` (a smoke run),
 * `npm run bench:28d` (28 days, the store alone), or
 * `node --import tsx run.ts [--days N] [--quick] [--store-only] [--only latest,range,candles,fill] [--rebuild] [--write-records N]`.
 *
 * Builds (or reuses) the data sets, runs each case family in a process of
 * its own, prints the results as markdown on stdout (progress goes to
 * stderr) and writes them to bench/results/latest-<N>d.md (and .json), and
 * for a run with SQLite also to latest.md (quick.md for --quick).
 *
 * The `writes` family (issue 20, writes.bench.ts) writes its own workloads
 * into fresh stores and SQLite files (`--write-records`: the in-order-shaped
 * workloads' size, default 1 M, 50k with --quick); a run of it alone
 * builds no data set.
 *
 * `--store-only` (issue 9: how cost grows) builds and measures the store
 * alone: no SQLite data set, no floor, no HTTP (its cases compare with a
 * SQLite-backed server).
 *
 * `node --import tsx run.ts --compare results/latest-7d.json results/latest-28d.json`
 * prints the store's cost in the second run against the first (compare.ts).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { cpus, release, totalmem, type } from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { readFileSync } from 'node:fs'
import { compareFiles } from './compare.js'
import { BENCH_DIR, DATA_DIR, daysTag, ensureDataset } from './load.js'
import type { IngestResult, LoadSpec } from './load.js'
import { DEFAULT_SEED, dataShape } from './generate.js'
import { renderMarkdown } from './report.js'
import type { IngestRow, RunResults } from './report.js'
import { holdRunLock } from './run-lock.js'
import { runChild } from './spawn.js'
import { sqliteVersion } from './sqlite-baseline.js'
import type { FamilyInput, FamilyOutput, QueryFamily } from './worker.js'
import type { CaseResult } from './measure.js'
import type { HttpCaseResult } from './http.bench.js'
import type { StoreCaseResult } from './store-only.js'
import type { IngestHttpResult, IngestHttpSpec } from './ingest-http.bench.js'
import type { LiveCaseResult, StreamLatencyInput } from './stream-latency.bench.js'
import { FULL_RECORDS, QUICK_RECORDS, runWrites } from './writes.bench.js'
import type { WritesResults } from './writes.bench.js'
import { WORKLOADS } from './write-workloads.js'
import { sourceRevision } from './source-revision.js'

const QUERY_FAMILIES: readonly QueryFamily[] = ['memory', 'latest', 'several', 'range', 'candles', 'fill', 'stream', 'http']
const ALL_FAMILIES = [...QUERY_FAMILIES, 'ingest', 'ingest-http', 'stream-latency', 'writes'] as const
/** Families that bring their own data: a run of only these builds no data set. */
const DATASET_FREE_FAMILIES: readonly string[] = ['writes']
/** Families that need SQLite, left out of a store-only run. */
const SQLITE_ONLY_FAMILIES: readonly string[] = ['http']


/** The installed version of a package, found from the folder of `from` upwards. */
function versionOf(name: string, from: string): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version
    } catch {
      if (dirname(dir) === dir) return '?'
    }
  }
}

/** The families to run: `--only`'s, checked, or all of them (all but SQLite's with `--store-only`). */
function selectFamilies(only: string | undefined, storeOnly: boolean): string[] {
  const families = (only?.split(',') ?? ALL_FAMILIES.filter((f) => !(storeOnly && SQLITE_ONLY_FAMILIES.includes(f)))).map((f) => f.trim())
  for (const family of families) {
    if (!(ALL_FAMILIES as readonly string[]).includes(family)) throw new Error(`unknown family ${family}; known: ${ALL_FAMILIES.join(', ')}`)
    if (storeOnly && SQLITE_ONLY_FAMILIES.includes(family)) throw new Error(`family ${family} needs SQLite: not available with --store-only`)
  }
  return families
}

/**
 * Where the report goes: `--out` as given; otherwise latest-<N>d.md, so a
 * run of one size does not overwrite another's (the comparison reads both),
 * plus latest.md for a run with SQLite, as before issue 9; quick.md for a
 * smoke run. Each .md gets a .json twin.
 */
function reportFiles(out: string | undefined, quick: boolean, storeOnly: boolean, days: number): string[] {
  if (out !== undefined) return [out]
  const results = join(BENCH_DIR, 'results')
  if (quick) return [join(results, 'quick.md')]
  return [join(results, `latest-${daysTag(days)}.md`), ...(storeOnly ? [] : [join(results, 'latest.md')])]
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      days: { type: 'string' },
      quick: { type: 'boolean', default: false },
      'store-only': { type: 'boolean', default: false },
      only: { type: 'string' },
      rebuild: { type: 'boolean', default: false },
      out: { type: 'string' },
      compare: { type: 'boolean', default: false },
      'write-records': { type: 'string' },
    },
  })
  if (values.compare === true) {
    const [before, after, ...rest] = positionals
    if (before === undefined || after === undefined || rest.length > 0) throw new Error('--compare takes two results files: --compare A.json B.json')
    const markdown = await compareFiles(before, after)
    if (values.out !== undefined) await writeFile(values.out, `${markdown}\n`)
    process.stdout.write(`${markdown}\n`)
    return
  }
  if (positionals.length > 0) throw new Error(`unexpected arguments: ${positionals.join(' ')} (files are for --compare)`)
  const quick = values.quick === true
  const storeOnly = values['store-only'] === true
  const days = values.days === undefined ? (quick ? 0.1 : 1) : Number(values.days)
  if (!(days > 0)) throw new Error(`--days must be a positive number (got ${values.days})`)
  const families = selectFamilies(values.only, storeOnly)
  const started = Date.now()
  const revision = sourceRevision()
  const log = (text: string): void => void process.stderr.write(`${text}\n`)

  const writeRecords = values['write-records'] === undefined ? (quick ? QUICK_RECORDS : FULL_RECORDS) : Number(values['write-records'])
  if (!Number.isSafeInteger(writeRecords) || writeRecords < 1_000) throw new Error(`--write-records must be an integer ≥ 1,000 (got ${values['write-records']})`)

  await holdRunLock(DATA_DIR)
  const shape = dataShape(days)
  const needsData = families.some((f) => !DATASET_FREE_FAMILIES.includes(f))
  const dataset = needsData ? await ensureDataset(days, { rebuild: values.rebuild === true, runChild, storeOnly }) : undefined
  if (dataset !== undefined) log(`data set ready: ${shape.records.toLocaleString('en-US')} records (${days} d × ${shape.symbols.length} symbols, one per 10 s)`)

  const cases: CaseResult[] = []
  const storeCases: StoreCaseResult[] = []
  const http: HttpCaseResult[] = []
  const notes: string[] = []
  const familyRss: Record<string, number> = {}
  for (const family of QUERY_FAMILIES) {
    if (!families.includes(family) || dataset === undefined) continue
    log(`running ${family} ...`)
    const input: FamilyInput = {
      family,
      days,
      storeDir: dataset.storeDir,
      ...(dataset.sqliteFiles === undefined ? {} : { sqliteFiles: dataset.sqliteFiles }),
      storeOnly,
      quick,
      seed: DEFAULT_SEED,
    }
    const output = await runChild<FamilyOutput>('family', input)
    cases.push(...output.cases)
    storeCases.push(...output.storeCases)
    http.push(...output.http)
    notes.push(...output.notes)
    if (family !== 'memory') familyRss[family] = output.peakRssMB
  }

  const ingest: IngestRow[] = []
  if (families.includes('ingest') && dataset !== undefined) {
    ingest.push(...dataset.ingest)
    // Batches of 1,000: a fresh load of up to one day into throwaway targets.
    const smallDays = Math.min(days, 1)
    const scratch = join(DATA_DIR, `scratch-${process.pid}`)
    const targets: LoadSpec['target'][] = [
      { kind: 'store', dir: join(scratch, 'store') },
      ...(storeOnly
        ? []
        : ([
            { kind: 'sqlite', layout: 'clustered', file: join(scratch, 'clustered.db') },
            { kind: 'sqlite', layout: 'rowid', file: join(scratch, 'rowid.db') },
          ] as const)),
    ]
    try {
      for (const target of targets) {
        log(`ingest, batches of 1,000, ${smallDays} d: ${target.kind === 'store' ? 'store' : `SQLite ${target.layout}`} ...`)
        await mkdir(scratch, { recursive: true })
        const result = await runChild<IngestResult>('load', { target, days: smallDays, batchSize: 1000, seed: DEFAULT_SEED } satisfies LoadSpec)
        ingest.push({ ...result, reused: false })
        await rm(scratch, { recursive: true, force: true })
      }
    } finally {
      await rm(scratch, { recursive: true, force: true })
    }
  }

  const ingestHttp: IngestHttpResult[] = []
  if (families.includes('ingest-http')) {
    // Two fresh stores, one fed in-process and one over POST /prices, in the batches of an import.
    const spec: IngestHttpSpec = { days: Math.min(days, 1), batchSize: quick ? 1_000 : 10_000, seed: DEFAULT_SEED, scratchDir: join(DATA_DIR, `scratch-http-${process.pid}`) }
    log(`ingest over HTTP, ${spec.days} d, batches of ${spec.batchSize} ...`)
    ingestHttp.push(await runChild<IngestHttpResult>('ingest-http', spec))
  }

  // Issue 11: the live stream, on a fresh store of its own (the data set is not used).
  const live: LiveCaseResult[] = []
  if (families.includes('stream-latency')) {
    log('running stream-latency ...')
    live.push(await runChild<LiveCaseResult>('stream-latency', { quick } satisfies StreamLatencyInput))
  }

  // Issue 20: the write workloads, on fresh stores and SQLite files of their own.
  let writes: WritesResults | undefined
  if (families.includes('writes')) {
    log(`running writes (${WORKLOADS.join(', ')}; ${writeRecords.toLocaleString('en-US')} records in order) ...`)
    writes = await runWrites({ workloads: WORKLOADS, records: writeRecords, quick, storeOnly, seed: DEFAULT_SEED, scratchDir: join(DATA_DIR, `scratch-writes-${process.pid}`), log })
  }

  const datasetIngest = dataset?.ingest ?? []
  const reused = datasetIngest.some((row) => row.reused)
  const dataBytes = datasetIngest.map((row) => `${row.label} ${(row.bytesOnDisk / 1e9).toFixed(2)} GB`).join(', ')
  const cpu = cpus()
  const rootPackage = join(BENCH_DIR, '..', 'package.json')
  const storeVersions = `classic-level ${versionOf('classic-level', rootPackage)}, msgpackr ${versionOf('msgpackr', rootPackage)}`
  const contenders = storeOnly ? ', store only' : ''
  const results: RunResults = {
    info: {
      date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
      mode: quick ? `quick smoke run (${days} d of data${contenders}, short loops: not for conclusions)` : `${days} d of data${contenders}`,
      command: process.argv.slice(2).length > 0 ? `run.ts ${process.argv.slice(2).join(' ')}` : 'run.ts',
      machine: `${cpu.length} × ${cpu[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${type()} ${release()}`,
      node: process.version,
      source: revision,
      // sqliteVersion() loads better-sqlite3: a store-only run does not touch SQLite at all.
      versions: storeOnly ? storeVersions : `${storeVersions}, better-sqlite3 ${versionOf('better-sqlite3', join(BENCH_DIR, 'package.json'))} (SQLite ${sqliteVersion()})`,
      data:
        dataset === undefined
          ? 'no data set (the families run bring their own data)'
          : `${shape.records.toLocaleString('en-US')} records: ${shape.symbols.length} symbols × one record per 10 s × ${days} d; on disk: ${dataBytes}${reused ? ' (data sets reused from an earlier build: their ingest rows are from that build)' : ''}`,
      seconds: (Date.now() - started) / 1000,
      days,
      storeOnly,
    },
    cases,
    ...(storeOnly ? { storeCases } : {}),
    ingest,
    http,
    live,
    familyRss,
    notes,
    ...(ingestHttp.length === 0 ? {} : { ingestHttp }),
    ...(writes === undefined ? {} : { writes }),
  }
  const markdown = renderMarkdown(results)
  const files = reportFiles(values.out, quick, storeOnly, days)
  for (const out of files) {
    await mkdir(join(out, '..'), { recursive: true })
    await writeFile(out, `${markdown}\n`)
    await writeFile(out.replace(/\.md$/, '.json'), `${JSON.stringify(results, null, 2)}\n`)
  }
  process.stdout.write(`${markdown}\n`)
  log(`written to ${files.join(' and ')}`)
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exit(1)
})
