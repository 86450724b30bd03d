/**
 * Issue 22's feed-quality report: `store.quality()` over every symbol of a
 * data set of `--days` days (default 7: 100 symbols at one record per 10 s,
 * 6,048,000 records, the generator of generate.ts), the whole window, on a
 * classic-level store on disk.
 *
 * Cases, each timed `--runs` times (default 5) after one untimed warm-up
 * run, the median and the fastest printed:
 * - the report of every symbol with `moves: false`: timestamps and ids only,
 *   read from the chunks' key columns (and with hourly buckets);
 * - the report of every symbol (timestamps and values: the chunks are read,
 *   each value from its fixed slot, no body decoded);
 * - the same with hourly buckets (`interval`: 168 buckets × 100 symbols, under a `maxRangePoints` of 20,000);
 * - one symbol with `sources: true` (every body of that symbol decoded), and
 *   without (values);
 * - `moves: false` again on a store whose heads cache (`cache.headBytes`,
 *   512 MiB) holds the week's heads entries.
 *
 * The store is built once under `.data/quality-<days>d-g<generator>` and
 * reused (a `meta.json` records its size). Run it on a quiet machine:
 * `cd bench && node --import tsx quality.bench.ts [--days 7] [--runs 5] [--build-only]`.
 */
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER, GENERATOR_VERSION, dataShape } from './generate.js'
import { buildBenchStore } from './bench-store.js'
import { DATA_DIR, daysTag } from './load.js'

const { values: args } = parseArgs({ options: { days: { type: 'string', default: '7' }, runs: { type: 'string', default: '5' }, 'build-only': { type: 'boolean' } } })
const days = Number(args.days)
const runs = Number(args.runs)
const shape = dataShape(days)
const folder = join(DATA_DIR, `quality-${daysTag(days)}-g${GENERATOR_VERSION}`)
const dir = join(folder, 'db')
const limits = { maxLimit: 3000, maxSymbols: 1000, maxRangePoints: 20_000 }

function build(): Promise<void> {
  return buildBenchStore(folder, shape, limits)
}

async function time(name: string, run: () => Promise<unknown>): Promise<void> {
  await run()
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await run()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  const median = times[Math.floor((times.length - 1) / 2)] as number
  console.log(`| ${name} | ${median.toFixed(0)} ms | ${(times[0] as number).toFixed(0)} ms |`)
}

await build()
if (args['build-only'] === true) process.exit(0)
// A week is about 2,300 table files: enough open-file slots that LevelDB keeps every table open (its default 1,000 would reopen them).
const store = await PriceStore.open(dir, { provider: BENCH_PROVIDER, limits, maxOpenFiles: 5000 })
try {
  const window = { from: shape.from, to: shape.to, now: shape.to + 10_000 }
  const report = await store.quality(window)
  const records = report.symbols.reduce((sum, s) => sum + s.records, 0)
  console.log(`${records.toLocaleString('en-US')} records, ${report.symbols.length} symbols, ${days} d; node ${process.version}; ${runs} timed runs after a warm-up; load average before: ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`)
  console.log('| case | median | fastest |\n|---|---|---|')
  await time(`every symbol, ${days} d, \`moves: false\` (timestamps and ids: key columns)`, () => store.quality({ ...window, moves: false }))
  await time(`every symbol, ${days} d, hourly buckets, \`moves: false\``, () => store.quality({ ...window, moves: false, interval: 3_600_000 }))
  await time(`every symbol, ${days} d (timestamps and values: chunks read, no body decoded)`, () => store.quality(window))
  await time(`every symbol, ${days} d, hourly buckets`, () => store.quality({ ...window, interval: 3_600_000 }))
  await time(`one symbol, ${days} d, sources: true (bodies decoded)`, () => store.quality({ ...window, symbols: ['BTC'], sources: true }))
  await time(`one symbol, ${days} d (timestamps and values)`, () => store.quality({ ...window, symbols: ['BTC'] }))
} finally {
  await store.close()
}
// A week's heads entries (about 16,800, a few KB each) overflow the default 64 MiB heads cache, so each report
// reads them again: with a cache that holds them, only the key columns are read.
const cached = await PriceStore.open(dir, { provider: BENCH_PROVIDER, limits, maxOpenFiles: 5000, cache: { headBytes: 512 * 1024 * 1024 } })
try {
  const window = { from: shape.from, to: shape.to, now: shape.to + 10_000 }
  await time(`every symbol, ${days} d, \`moves: false\`, heads cache 512 MiB`, () => cached.quality({ ...window, moves: false }))
} finally {
  await cached.close()
}
