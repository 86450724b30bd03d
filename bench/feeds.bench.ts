/**
 * The feed catalogue (`store.feeds()`, `GET /feeds`) on a store of 1,000
 * symbols: `--hours` hours (default 6) of one record per symbol every 10 s
 * (2,160,000 records by default, the generator of generate.ts with 1,000
 * symbols), on a classic-level store on disk, reopened (every hour sealed).
 *
 * Cases:
 * - the first call after the store opens (one run: the catalogue is read,
 *   heads entries and the newest records' chunks from disk);
 * - a call after a commit (one record written before each run): the
 *   catalogue is read again, the chunks now mostly in the store's caches;
 * - the cached call (no commit between runs): a page of 100, and of 1,000;
 * - `stats()`, for comparison: the per-symbol counts the catalogue starts
 *   from, plus the directory's size.
 *
 * The store is built once under `.data/feeds-<hours>h-g<generator>` and
 * reused. Run it on a quiet machine:
 * `cd bench && node --import tsx feeds.bench.ts [--hours 6] [--runs 20] [--build-only]`.
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { PriceStore } from '../src/index.js'
import { feedBuilds } from '../src/store/services/feeds.js'
import { BENCH_PROVIDER, GENERATOR_VERSION, STEP_MS, dataShape, generateBatches, type DataShape } from './generate.js'
import { buildBenchStore } from './bench-store.js'
import { DATA_DIR } from './load.js'

const { values: args } = parseArgs({ options: { hours: { type: 'string', default: '6' }, runs: { type: 'string', default: '20' }, 'build-only': { type: 'boolean' } } })
const hours = Number(args.hours)
const runs = Number(args.runs)
const SYMBOL_COUNT = 1000
const symbols = Array.from({ length: SYMBOL_COUNT }, (_, i) => `F${String(i).padStart(4, '0')}`)
const base = dataShape(hours / 24)
const shape: DataShape = { ...base, symbols, records: base.ticks * SYMBOL_COUNT }
const folder = join(DATA_DIR, `feeds-${hours}h-g${GENERATOR_VERSION}`)
const dir = join(folder, 'db')
const limits = { maxLimit: 3000, maxSymbols: 1000, maxRangePoints: 20_000 }

function build(): Promise<void> {
  return buildBenchStore(folder, shape, limits)
}

function summary(name: string, times: number[]): void {
  times.sort((a, b) => a - b)
  const median = times[Math.floor((times.length - 1) / 2)] as number
  const ms = (t: number): string => (t < 1 ? t.toFixed(3) : t.toFixed(1))
  console.log(`| ${name} | ${ms(median)} ms | ${ms(times[0] as number)} ms | ${times.length} |`)
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await run()
  return performance.now() - started
}

await build()
if (args['build-only'] === true) process.exit(0)
const store = await PriceStore.open(dir, { provider: BENCH_PROVIDER, limits })
try {
  const now = shape.to + 5_000
  const first = await timed(() => store.feeds({ now }))
  const page = await store.feeds({ now, limit: 1000 })
  console.log(`${shape.records.toLocaleString('en-US')} records, ${page.total} symbols, ${hours} h; node ${process.version}; load average before: ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`)
  console.log('| case | median | fastest | runs |')
  console.log('|---|---|---|---|')
  summary('first call after open (catalogue read, page of 100)', [first])
  const afterCommit: number[] = []
  let tick = shape.to
  for (let i = 0; i < runs; i++) {
    tick += STEP_MS
    const [record] = generateBatches({ ...shape, symbols: [symbols[i % SYMBOL_COUNT] as string], ticks: 1, records: 1, from: tick, to: tick }, 1).next().value ?? []
    await store.putMany([record as never])
    const builds = feedBuilds.count
    afterCommit.push(await timed(() => store.feeds({ now })))
    if (feedBuilds.count !== builds + 1) throw new Error('a commit did not read the catalogue again')
  }
  summary('after a commit (catalogue read again, page of 100)', afterCommit)
  const builds = feedBuilds.count
  const cached100: number[] = []
  const cached1000: number[] = []
  for (let i = 0; i < runs * 10; i++) {
    cached100.push(await timed(() => store.feeds({ now, cursor: symbols[(i * 97) % SYMBOL_COUNT] as string })))
    cached1000.push(await timed(() => store.feeds({ now, limit: 1000 })))
  }
  if (feedBuilds.count !== builds) throw new Error('a cached call read the catalogue')
  summary('cached, page of 100', cached100)
  summary('cached, page of 1,000', cached1000)
  const stats: number[] = []
  for (let i = 0; i < runs; i++) stats.push(await timed(() => store.stats()))
  summary('stats(), for comparison', stats)
  const json = JSON.stringify(page)
  console.log(`\na page of 1,000 feeds is ${(json.length / 1024).toFixed(0)} KiB of JSON`)
} finally {
  await store.close()
}
