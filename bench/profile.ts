/**
 * Where does the store's time go? Runs one store operation in a loop on an
 * already built data set (run the bench once first) under the V8 CPU
 * profiler, then prints the self time by function and by file, and writes
 * the .cpuprofile (open it in Chrome DevTools for the call tree).
 *
 *   node --import tsx profile.ts --case range-1ms [--days 1] [--seconds 10]
 *
 * Cases: latest-1, latest-100, as-of, several-20, several-100, all,
 * range-1ms, range-10min, range-1h, range-7d-1h, stream, http-latest-1 and
 * http-range-1ms (the store behind createPricesListener, loaded by the bench's HTTP client
 * process), ingest (a fresh load of --days into a scratch store). Only the JS thread is profiled:
 * LevelDB's own work runs on libuv's thread pool and shows here as idle.
 */
import { Session } from 'node:inspector/promises'
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { RequestListener } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER, DAY_MS, HOUR_MS, Random, dataShape, generateBatches } from './generate.js'
import type { GeneratedRecord } from './generate.js'
import type { LoadResult } from './http-client.js'
import { BENCH_DIR, DATA_DIR, ROOT_DIR } from './load.js'
import { holdRunLock } from './run-lock.js'
import { forkWorker } from './spawn.js'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
}
interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

function summarise(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const byFunction = new Map<string, number>()
  const byFile = new Map<string, number>()
  let total = 0
  profile.samples.forEach((id, i) => {
    const time = profile.timeDeltas[i] ?? 0
    total += time
    const frame = (byId.get(id) as ProfileNode).callFrame
    const file = frame.url === '' ? `(${frame.functionName})` : frame.url.replace(/^file:\/\//, '').split('/').slice(-3).join('/')
    const fn = `${frame.functionName || '(anonymous)'}  ${file}:${frame.lineNumber + 1}`
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + time)
    byFile.set(file, (byFile.get(file) ?? 0) + time)
  })
  const show = (map: Map<string, number>): string =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, time]) => `${((100 * time) / total).toFixed(1).padStart(5)} %  ${(time / 1000).toFixed(0).padStart(6)} ms  ${name}`)
      .join('\n')
  return `total ${(total / 1000).toFixed(0)} ms\n-- self time by function\n${show(byFunction)}\n-- self time by file\n${show(byFile)}`
}

async function storeDir(days: number): Promise<string> {
  const tag = `store-${String(days).replace('.', '_')}d-`
  const folder = (await readdir(DATA_DIR)).find((entry) => entry.startsWith(tag))
  if (folder === undefined) throw new Error(`no store data set of ${days} d under ${DATA_DIR}: run the bench with --days ${days} first`)
  return join(DATA_DIR, folder, 'db')
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      case: { type: 'string', default: 'latest-1' },
      days: { type: 'string', default: '1' },
      seconds: { type: 'string', default: '10' },
      top: { type: 'string', default: '30' },
    },
  })
  const days = Number(values.days)
  // It opens the bench's stores: a bench run making its floor twin meanwhile would link files LevelDB is writing.
  await holdRunLock(DATA_DIR)
  const shape = dataShape(days)
  const random = new Random(42)
  const symbol = (): string => shape.symbols[random.int(shape.symbols.length)] as string
  const name = values.case ?? 'latest-1'
  let store: PriceStore | undefined
  let scratch: string | undefined
  let operation: () => Promise<unknown>
  let cleanup = async (): Promise<void> => {}
  if (name === 'http-latest-1' || name === 'http-range-1ms') {
    store = await PriceStore.open(await storeDir(days), { provider: BENCH_PROVIDER })
    const { createPricesListener } = (await import(pathToFileURL(join(ROOT_DIR, 'src', 'adapters', 'http', 'node.ts')).href)) as {
      createPricesListener: (s: PriceStore) => RequestListener
    }
    const server = createServer(createPricesListener(store))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    const span = Math.min(DAY_MS, shape.to - shape.from)
    const paths = Array.from({ length: 256 }, () => {
      if (name === 'http-latest-1') return `/prices?symbol=${encodeURIComponent(symbol())}&provider=redstone`
      const from = shape.from + Math.floor(random.next() * Math.max(1, shape.to - shape.from - span))
      return `/prices?symbol=${encodeURIComponent(symbol())}&fromTimestamp=${from}&toTimestamp=${from + span - 1}&interval=1&provider=redstone`
    })
    const client = forkWorker('http-client', {})
    const load = (durationMs: number): Promise<LoadResult> =>
      new Promise((resolve) => {
        client.once('message', (result) => resolve(result as LoadResult))
        client.send({ port, paths, concurrency: 16, durationMs })
      })
    await load(1000)
    let done = false
    operation = async () => {
      if (done) return undefined
      done = true
      const result = await load(Number(values.seconds) * 1000)
      process.stdout.write(`${name}: ${Math.round(result.requestsPerSecond)} req/s, median ${Math.round(result.medianUs)} µs\n`)
      return result
    }
    cleanup = async () => {
      client.disconnect()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  } else if (name === 'ingest') {
    scratch = join(DATA_DIR, `profile-scratch-${process.pid}`)
    await rm(scratch, { recursive: true, force: true })
    await mkdir(scratch, { recursive: true })
    store = await PriceStore.open(scratch, { provider: BENCH_PROVIDER })
    const batches: GeneratedRecord[][] = [...generateBatches(shape, 10_000)]
    let next = 0
    const opened = store
    operation = async () => (next < batches.length ? opened.putMany(batches[next++] as GeneratedRecord[]) : undefined)
  } else {
    store = await PriceStore.open(await storeDir(days), { provider: BENCH_PROVIDER })
    const s = store
    const window = (span: number, interval: number) => () => {
      const from = shape.from + Math.floor(random.next() * Math.max(1, shape.to - shape.from - span))
      return s.range(symbol(), { from, to: from + span - 1, interval })
    }
    const operations: Record<string, () => Promise<unknown>> = {
      'latest-1': () => s.latest(symbol()),
      'latest-100': () => s.latest(symbol(), { limit: 100 }),
      'as-of': () => s.latest(symbol(), { to: shape.from + Math.floor(random.next() * (shape.to - shape.from)) }),
      'several-20': () => s.several(random.shuffled(shape.symbols).slice(0, 20)),
      'several-100': () => s.several(random.shuffled(shape.symbols)),
      all: () => s.several(),
      'range-1ms': window(Math.min(DAY_MS, shape.to - shape.from), 1),
      'range-10min': window(Math.min(DAY_MS, shape.to - shape.from), 600_000),
      'range-1h': window(Math.min(DAY_MS, shape.to - shape.from), HOUR_MS),
      'range-7d-1h': window(Math.min(7 * DAY_MS, shape.to - shape.from), HOUR_MS),
      stream: async () => {
        let count = 0
        for await (const _ of s.rangeStream(symbol(), { from: shape.from, to: shape.to, interval: 1 })) count++
        return count
      },
    }
    const chosen = operations[name]
    if (chosen === undefined) throw new Error(`unknown case ${name}; known: ${[...Object.keys(operations), 'ingest'].join(', ')}`)
    operation = chosen
    for (let i = 0; i < 200; i++) await operation() // warm caches and the JIT
  }

  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 100 })
  await session.post('Profiler.start')
  const started = Date.now()
  let calls = 0
  while (Date.now() - started < Number(values.seconds) * 1000) {
    const result = await operation()
    if (result === undefined && (name === 'ingest' || name.startsWith('http-'))) break
    calls++
  }
  const elapsed = (Date.now() - started) / 1000
  const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile }
  session.disconnect()
  await cleanup()
  await store.close()
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })

  const out = join(BENCH_DIR, 'results', `profile-${name}.cpuprofile`)
  await mkdir(join(BENCH_DIR, 'results'), { recursive: true })
  await writeFile(out, JSON.stringify(profile))
  process.stdout.write(`${name}: ${calls} calls in ${elapsed.toFixed(1)} s = ${((elapsed / calls) * 1e6).toFixed(0)} µs per call\n`)
  process.stdout.write(`${summarise(profile, Number(values.top))}\nprofile written to ${out}\n`)
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  process.exit(1)
})
