/**
 * Issue 23's compressed answers: how much smaller, and what they cost.
 *
 * Over a data set of `--days` days (default 2: 100 symbols at one record
 * per 10 s, 1,728,000 records, the generator of generate.ts; built once
 * under `.data/compression-<days>d-g<generator>` and reused), served by
 * `startServer` in this process on loopback:
 * - answer sizes with no coding, gzip and brotli (the handler's defaults)
 *   for latest-1, several (all 100 symbols), a range of 10,000 records, a
 *   day of UDF history at one minute and the export of a day of one symbol;
 * - requests per second and the server's CPU per request (this process's
 *   `cpuUsage`: zlib's thread pool included) with and without compression,
 *   for latest-1, all symbols and the 10,000-record range, from a client in
 *   a process of its own (`--connections` keep-alive connections for
 *   `--seconds` each, raw sockets as in http-client.ts, plus `Accept-Encoding`).
 * Then `--levels` prints what each gzip level and brotli quality make of
 * the all-symbols answer and the range (size and compression speed): the
 * measurement the defaults were chosen by.
 *
 * Run it on a quiet machine: `cd bench && node --import tsx compression.bench.ts [--days 2] [--seconds 5] [--connections 16] [--levels]`
 * (or `npx tsx bench/compression.bench.ts` where tsx is installed at the root).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import * as http from 'node:http'
import { connect } from 'node:net'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import * as zlib from 'node:zlib'
import { PriceStore } from '../src/index.js'
import { startServer, type RunningServer } from '../src/adapters/http/node.js'
import { BENCH_PROVIDER, DAY_MS, GENERATOR_VERSION, STEP_MS, dataShape, generateBatches } from './generate.js'
import { DATA_DIR, daysTag } from './load.js'

/** One load run of the client process. */
interface LoadJob {
  readonly port: number
  readonly path: string
  readonly acceptEncoding: string | undefined
  readonly connections: number
  readonly durationMs: number
}

interface LoadResult {
  readonly requests: number
  readonly errors: number
  readonly seconds: number
  readonly bytes: number
}

const HEAD_END = Buffer.from('\r\n\r\n')

/** The client: keep-alive connections, each sending its next request once the previous answer is whole. */
function runLoad(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve) => {
    const request = `GET ${job.path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${job.acceptEncoding === undefined ? '' : `accept-encoding: ${job.acceptEncoding}\r\n`}\r\n`
    const deadline = Date.now() + job.durationMs
    const started = performance.now()
    let requests = 0
    let errors = 0
    let bytes = 0
    let open = job.connections
    for (let c = 0; c < job.connections; c++) {
      const socket = connect(job.port, '127.0.0.1')
      socket.setNoDelay(true)
      let pending: Buffer | undefined
      const send = (): void => {
        if (Date.now() >= deadline) socket.end()
        else socket.write(request)
      }
      socket.on('connect', send)
      socket.on('data', (chunk: Buffer) => {
        pending = pending === undefined ? chunk : Buffer.concat([pending, chunk])
        for (;;) {
          const length = answerLength(pending)
          if (length < 0) return
          requests++
          bytes += length
          if (!pending.subarray(0, 12).toString('latin1').startsWith('HTTP/1.1 200')) errors++
          pending = length < pending.length ? pending.subarray(length) : undefined
          send()
          if (pending === undefined) return
        }
      })
      socket.on('error', () => errors++)
      socket.on('close', () => {
        if (--open === 0) resolve({ requests, errors, seconds: (performance.now() - started) / 1000, bytes })
      })
    }
  })
}

/** The length of the whole answer at the start of `buffer`, or -1 while it is incomplete (content-length or chunked). */
function answerLength(buffer: Buffer): number {
  const headEnd = buffer.indexOf(HEAD_END)
  if (headEnd < 0) return -1
  const head = buffer.toString('latin1', 0, headEnd).toLowerCase()
  const length = /\r\ncontent-length:\s*(\d+)/.exec(head)
  if (length !== null) return buffer.length >= headEnd + 4 + Number(length[1]) ? headEnd + 4 + Number(length[1]) : -1
  let at = headEnd + 4
  for (;;) {
    const lineEnd = buffer.indexOf('\r\n', at)
    if (lineEnd < 0) return -1
    const size = Number.parseInt(buffer.toString('latin1', at, lineEnd), 16)
    at = lineEnd + 2 + size + 2
    if (buffer.length < at) return -1
    if (size === 0) return at
  }
}

// The client process: load jobs over IPC until disconnected.
if (process.argv.includes('--client')) {
  process.on('message', (job: LoadJob) => {
    void runLoad(job).then((result) => process.send?.(result))
  })
} else {
  await main()
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      days: { type: 'string', default: '2' },
      seconds: { type: 'string', default: '5' },
      connections: { type: 'string', default: '16' },
      levels: { type: 'boolean' },
    },
  })
  const days = Number(args.days)
  const shape = dataShape(days)
  const folder = join(DATA_DIR, `compression-${daysTag(days)}-g${GENERATOR_VERSION}`)
  const dir = join(folder, 'db')
  const limits = { maxLimit: 3000, maxSymbols: 1000, maxRangePoints: 10_000 }
  await build(folder, dir, shape)
  const store = await PriceStore.open(dir, { provider: BENCH_PROVIDER, limits })
  const server = await startServer({ store, maxQueuedQueries: 1000 })
  const client = fork(fileURLToPath(import.meta.url), ['--client'], { execArgv: process.execArgv })
  try {
    const last = shape.to
    const rangeFrom = last - (10_000 - 1) * STEP_MS
    const dayFrom = last - DAY_MS + STEP_MS
    const forms: readonly (readonly [string, string])[] = [
      ['latest-1', '/prices?symbol=BTC'],
      ['several: all 100 symbols', `/prices?symbols=${shape.symbols.join(',')}`],
      ['range: 10,000 records', `/prices?symbol=BTC&fromTimestamp=${rangeFrom}&toTimestamp=${last}&interval=${STEP_MS}`],
      ['UDF history: a day at 1 minute', `/udf/history?symbol=BTC&resolution=1&from=${Math.floor(dayFrom / 1000)}&to=${Math.floor(last / 1000)}`],
      ['export: a day of one symbol', `/prices/export?symbol=BTC&from=${dayFrom}&to=${last}`],
    ]
    console.log(`# Compression (issue 23)\n\n${shape.records.toLocaleString('en-US')} records (${shape.symbols.length} symbols, ${days} d); node ${process.version}; ${cpus().length} cores; load average before: ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`)
    console.log('| answer | identity | gzip | br | gzip / identity | br / identity |\n|---|---:|---:|---:|---:|---:|')
    for (const [name, path] of forms) {
      const [plain, gzip, br] = [await bodyBytes(server, path), await bodyBytes(server, path, 'gzip'), await bodyBytes(server, path, 'br')]
      console.log(`| ${name} | ${kb(plain)} | ${kb(gzip)} | ${kb(br)} | ${percent(gzip / plain)} | ${percent(br / plain)} |`)
    }
    const seconds = Number(args.seconds)
    const connections = Number(args.connections)
    console.log(`\n${connections} keep-alive connections, ${seconds} s per case, client in its own process; CPU: the server process's user + system time (zlib's threads included) per request\n`)
    console.log('| answer | Accept-Encoding | requests/s | server CPU per request | MB/s sent |\n|---|---|---:|---:|---:|')
    for (const [name, path] of forms.slice(0, 3)) {
      for (const acceptEncoding of [undefined, 'gzip', 'br']) {
        await load(client, { port: Number(new URL(server.url).port), path, acceptEncoding, connections, durationMs: 500 }) // warm-up
        const cpu = process.cpuUsage()
        const result = await load(client, { port: Number(new URL(server.url).port), path, acceptEncoding, connections, durationMs: seconds * 1000 })
        const used = process.cpuUsage(cpu)
        const perRequest = (used.user + used.system) / 1000 / Math.max(1, result.requests)
        const errors = result.errors === 0 ? '' : ` (${result.errors} errors)`
        console.log(`| ${name} | ${acceptEncoding ?? '(none)'} | ${(result.requests / result.seconds).toFixed(result.requests / result.seconds < 10 ? 1 : 0)}${errors} | ${perRequest.toFixed(2)} ms | ${(result.bytes / result.seconds / 1e6).toFixed(1)} |`)
      }
    }
    if (args.levels === true) await levels(server, forms)
  } finally {
    client.disconnect()
    await server.close()
    await store.close()
  }
}

/** Builds the data set unless a complete one is there. */
async function build(folder: string, dir: string, shape: ReturnType<typeof dataShape>): Promise<void> {
  const meta = await readFile(join(folder, 'meta.json'), 'utf8').then((text) => JSON.parse(text) as { records: number }, () => undefined)
  if (meta?.records === shape.records && existsSync(dir)) return
  await rm(folder, { recursive: true, force: true })
  await mkdir(folder, { recursive: true })
  const store = await PriceStore.open(dir, { provider: BENCH_PROVIDER })
  let written = 0
  for (const batch of generateBatches(shape, 10_000)) {
    written += await store.putMany(batch)
    if (written % 500_000 < 10_000) process.stderr.write(`  ${written.toLocaleString('en-US')} records\n`)
  }
  await store.close()
  await writeFile(join(folder, 'meta.json'), JSON.stringify({ records: written }))
}

/** The bytes of one answer's body as sent (compressed when asked). */
function bodyBytes(server: RunningServer, path: string, acceptEncoding?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }
    http.get(`${server.url}${path}`, { headers, agent: false }, (res) => {
      let bytes = 0
      res.on('data', (chunk: Buffer) => (bytes += chunk.length))
      res.on('end', () => (res.statusCode === 200 ? resolve(bytes) : reject(new Error(`${path}: status ${res.statusCode}`))))
    }).on('error', reject)
  })
}

function load(client: ChildProcess, job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve) => {
    client.once('message', (result) => resolve(result as LoadResult))
    client.send(job)
  })
}

/** Each gzip level and brotli quality on two answers: size and speed (the fastest of 5 runs, one core). */
async function levels(server: RunningServer, forms: readonly (readonly [string, string])[]): Promise<void> {
  console.log('\n| answer | coding | size | ratio | MB/s |\n|---|---|---:|---:|---:|')
  for (const [name, path] of [forms[1]!, forms[2]!, forms[3]!]) {
    const body = await new Promise<Buffer>((resolve, reject) => {
      http.get(`${server.url}${path}`, { agent: false }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => resolve(Buffer.concat(chunks)))
      }).on('error', reject)
    })
    const codings: [string, () => Buffer][] = [
      ...[1, 4, 6].map((level): [string, () => Buffer] => [`gzip ${level}`, () => zlib.gzipSync(body, { level })]),
      ...[1, 3, 4, 5].map((quality): [string, () => Buffer] => [
        `br ${quality}`,
        () => zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      ]),
    ]
    for (const [coding, compress] of codings) {
      let best = Number.POSITIVE_INFINITY
      let size = 0
      for (let run = 0; run < 5; run++) {
        const started = performance.now()
        size = compress().length
        best = Math.min(best, performance.now() - started)
      }
      console.log(`| ${name} | ${coding} | ${kb(size)} | ${percent(size / body.length)} | ${(body.length / best / 1000).toFixed(0)} |`)
    }
  }
}

function kb(bytes: number): string {
  return bytes < 10_000 ? `${bytes} B` : bytes < 10_000_000 ? `${(bytes / 1024).toFixed(0)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(0)} %`
}
