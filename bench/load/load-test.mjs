#!/usr/bin/env node
/**
 * A bounded load test of `price-store serve` (issue 5): N concurrent
 * keep-alive clients on loopback for a fixed time, a mix of every query form
 * including the largest allowed range (maxRangePoints records) and the
 * several-tokens form over all symbols. Reports, per form, the count, the
 * errors (must be 0: any non-200, a broken or wrongly shaped body, a network
 * error) and latency p50/p90/p99/max; and the server's RSS before, at its
 * peak, and after, with its anonymous part (RssAnon: heap and caches, not
 * the page cache of mapped table files; issue 20's memory target). Exits 1
 * on any error or when the peak RSS passes --max-rss-mb (or, when given,
 * the peak anonymous memory passes --max-anon-mb). Not part of `npm test`:
 * timings belong to benchmarks.
 *
 *   node bench/load/load-test.mjs [--seconds 25] [--clients 32] [--days 2] [--seed 1]
 *        [--mix default|issue12] [--symbols 20]
 *        [--db DIR] [--cli dist/cli.js] [--max-rss-mb 1536] [--max-anon-mb MB] [--json FILE] [--cpu-prof DIR]
 *        [--read-key KEY] [-- SERVE-FLAGS...]
 *
 * --read-key KEY sends `x-api-key: KEY` with every request, for a server
 * started with read keys (`-- --read-keys FILE`): the admission cost of
 * read keys is this run against one without either.
 *
 * --mix issue12 runs issue 12's scenario: by default 50 symbols over 3 days
 * (about 1.3 M records, written by write-data.ts, bundled from src/ the same
 * way), and issue 12's mix (latest, latest-100, as-of, several x20, all
 * symbols, 24 h ranges at 1 min / 10 min / 1 h, 10,000-record ranges and
 * about 2 % malformed requests, which must be answered 400 with a JSON
 * error). A 503 with `retry-after` and a JSON error body is a documented
 * outcome, counted apart, not an error; any other 503 is an error.
 * --symbols N (N > 20) writes that data set with the default mix too.
 *
 * The server is `price-store serve` in a child process of its own (so its
 * RSS and CPU are its own), on 127.0.0.1 port 0, over a database holding the
 * demo data set (`price-store demo --days D`, written into a temporary
 * directory that is removed afterwards; --db DIR keeps it in DIR instead,
 * written on the first run and reused by the next ones).
 * By default the CLI is bundled from src/ with esbuild (so it is never
 * stale); --cli dist/cli.js runs the built package instead (`npm run build`
 * first). Flags after `--` go to `serve` (e.g. `-- --max-concurrent-queries 8`).
 * The child is stopped by its PID with SIGINT (a graceful stop), never by name.
 * Only node built-ins and the project's own esbuild are used.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import { createRequire } from 'node:module'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Worker } from 'node:worker_threads'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const DAY_MS = 86_400_000
const STEP_MS = 10_000 // the demo data set: one record per token every 10 s

const { values: args, positionals: serveFlags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '25' },
    clients: { type: 'string', default: '32' },
    days: { type: 'string' },
    symbols: { type: 'string' },
    mix: { type: 'string', default: 'default' },
    seed: { type: 'string', default: '1' },
    db: { type: 'string' },
    cli: { type: 'string' },
    'max-range-points': { type: 'string', default: '10000' },
    'max-rss-mb': { type: 'string', default: '1536' },
    'max-anon-mb': { type: 'string' },
    json: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'read-key': { type: 'string' },
    help: { type: 'boolean' },
  },
  allowPositionals: true,
})
if (args.help) {
  process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0].replace(/^#!.*\n\/\*\*\n/, '').replace(/^ \* ?/gm, ''))
  process.exit(0)
}
const SECONDS = positiveNumber('seconds', args.seconds)
/** Sent with every request: a read key, for a server started with read keys. */
const READ_HEADERS = args['read-key'] === undefined ? {} : { 'x-api-key': args['read-key'] }
const CLIENTS = positiveNumber('clients', args.clients)
const MIX = args.mix
if (MIX !== 'default' && MIX !== 'issue12') fail(`--mix must be default or issue12 (got ${JSON.stringify(MIX)})`)
const DAYS = positiveNumber('days', args.days ?? (MIX === 'issue12' ? '3' : '2'))
const SYMBOLS = positiveNumber('symbols', args.symbols ?? (MIX === 'issue12' ? '50' : '20'))
if (!Number.isSafeInteger(SYMBOLS) || SYMBOLS < 20 || SYMBOLS > 50) fail(`--symbols must be a whole number 20..50 (got ${args.symbols})`)
/** A file in --db saying which data set the load test wrote there, so a rerun with other settings does not reuse it. */
const DATA_MARK = 'LOAD-TEST-DATA.json'
const MAX_RANGE_POINTS = positiveNumber('max-range-points', args['max-range-points'])
const MAX_RSS_MB = positiveNumber('max-rss-mb', args['max-rss-mb'])
const MAX_ANON_MB = args['max-anon-mb'] === undefined ? undefined : positiveNumber('max-anon-mb', args['max-anon-mb'])

function positiveNumber(name, text) {
  const value = Number(text)
  if (!Number.isFinite(value) || value <= 0) fail(`--${name} must be a positive number (got ${JSON.stringify(text)})`)
  return value
}

function fail(message) {
  process.stderr.write(`load-test: ${message}\n`)
  process.exit(2)
}

const log = (line) => process.stderr.write(`${line}\n`)

// ------------------------------------------------------------------ setup

const temp = await mkdtemp(join(os.tmpdir(), 'price-store-load-'))
let server
try {
  const cli = args.cli ?? (await bundleCli(temp))
  const db = args.db ?? join(temp, 'db')
  const recipe = { symbols: SYMBOLS, days: DAYS, stepMs: STEP_MS }
  if (args.db === undefined || !existsSync(args.db)) {
    log(`writing the ${SYMBOLS === 20 ? 'demo ' : ''}data set (${SYMBOLS} symbols, ${DAYS} days) into ${db} ...`)
    const started = performance.now()
    if (SYMBOLS === 20) await runToEnd(cli, ['demo', '--db', db, '--days', String(DAYS)])
    else await runToEnd(await bundleEntry(temp, 'bench/load/write-data.ts', 'write-data.mjs'), [db, String(SYMBOLS), String(DAYS)])
    writeFileSync(join(db, DATA_MARK), `${JSON.stringify(recipe)}\n`)
    log(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  } else {
    // A --db written by an older load test (no mark) is reused as before; one marked with another recipe is not.
    const mark = existsSync(join(db, DATA_MARK)) ? JSON.parse(readFileSync(join(db, DATA_MARK), 'utf8')) : undefined
    if (mark !== undefined && (mark.symbols !== recipe.symbols || mark.days !== recipe.days)) {
      fail(`${db} holds the load test's data set of ${mark.symbols} symbols over ${mark.days} days, not ${SYMBOLS} over ${DAYS}: choose another --db`)
    }
    log(`reusing the data set in ${db}`)
  }
  server = await startServe(cli, ['serve', '--port', '0', '--db', db, ...serveFlags])
  log(`server ${server.url} (pid ${server.pid})`)
  const atStart = readProc(server.pid)

  const data = await describeData(server.url)
  log(`${data.symbols.length} symbols, ${new Date(data.from).toISOString()} .. ${new Date(data.to).toISOString()}`)
  const forms = MIX === 'issue12' ? makeIssue12Forms(data) : makeForms(data)
  await checkLargestRange(server.url, forms)
  await checkMalformed(server.url, forms)

  // Warm up (caches, JIT), then measure from a settled RSS.
  await runLoad(server.url, forms, { seconds: Math.min(3, SECONDS / 5), clients: CLIENTS, seed: Number(args.seed) + 1 })
  await idle(1_000)
  const loadAverage = os.loadavg()[0]
  const before = readProc(server.pid)
  const sampler = sampleRss(server.pid, 100, Math.max(1, Math.round(SECONDS / 5)) * 1000)
  const result = await runLoad(server.url, forms, { seconds: SECONDS, clients: CLIENTS, seed: Number(args.seed) })
  const { peak: peakDuringLoad, windows, peakAnon: peakAnonDuringLoad, anonWindows } = sampler.stop()
  const afterLoad = readProc(server.pid)
  await idle(3_000)
  const afterIdle = readProc(server.pid)

  const exitCode = await server.stop()
  server = undefined
  const report = {
    date: new Date().toISOString(),
    commit: gitCommit(),
    machine: { ...machine(), loadAverage1mBeforeRun: +loadAverage.toFixed(2) },
    settings: { mix: MIX, seconds: SECONDS, clients: CLIENTS, days: DAYS, symbols: data.symbols.length, records: data.symbols.length * Math.floor((DAYS * DAY_MS) / STEP_MS), seed: Number(args.seed), maxRangePoints: MAX_RANGE_POINTS, serveFlags, cli: args.cli ?? 'bundled from src/' },
    forms: result.forms,
    malformedByReason: result.reasons,
    total: result.total,
    lightForms: result.light,
    status503: result.status503,
    rssMb: {
      atStart: mb(atStart.rssKb),
      before: mb(before.rssKb),
      peakPerWindow: windows.map(mb),
      peakSampled: mb(peakDuringLoad),
      peakHighWaterMark: mb(afterIdle.hwmKb),
      afterLoad: mb(afterLoad.rssKb),
      afterIdle3s: mb(afterIdle.rssKb),
    },
    // RssAnon: the server's anonymous resident memory (heap, caches), without mapped files' page cache.
    anonMb: {
      atStart: mb(atStart.anonKb),
      before: mb(before.anonKb),
      peakPerWindow: anonWindows.map(mb),
      peakSampled: mb(peakAnonDuringLoad),
      afterLoad: mb(afterLoad.anonKb),
      afterIdle3s: mb(afterIdle.anonKb),
    },
    serverCpuSeconds: +((afterLoad.cpuTicks - before.cpuTicks) / clockTicks()).toFixed(1),
    serverExit: exitCode,
  }
  process.stdout.write(`${formatReport(report)}\n`)
  if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`)
  const problems = []
  if (result.total.errors > 0) problems.push(`${result.total.errors} errors: ${JSON.stringify(result.errorSamples)}`)
  if (report.rssMb.peakHighWaterMark > MAX_RSS_MB) problems.push(`peak RSS ${report.rssMb.peakHighWaterMark} MB over --max-rss-mb ${MAX_RSS_MB}`)
  if (MAX_ANON_MB !== undefined && report.anonMb.peakSampled > MAX_ANON_MB) problems.push(`peak anonymous memory ${report.anonMb.peakSampled} MB over --max-anon-mb ${MAX_ANON_MB}`)
  if (exitCode !== 0) problems.push(`the server exited with ${exitCode} after SIGINT`)
  for (const problem of problems) log(`FAIL: ${problem}`)
  process.exitCode = problems.length === 0 ? 0 : 1
} finally {
  if (server !== undefined) await server.stop().catch(() => {})
  await rm(temp, { recursive: true, force: true })
}

// --------------------------------------------------------------- the server

/** Bundles src/cli/main.ts into `dir` with esbuild; runtime deps stay external, by absolute path. */
function bundleCli(dir) {
  return bundleEntry(dir, 'src/cli/main.ts', 'cli.mjs')
}

/** Bundles `entry` (relative to the project's root) into `dir/name` with esbuild, as bundleCli does. */
async function bundleEntry(dir, entry, name) {
  const requireFromRoot = createRequire(join(ROOT, 'package.json'))
  const { build } = await import(requireFromRoot.resolve('esbuild'))
  const outfile = join(dir, name)
  await build({
    entryPoints: [join(ROOT, entry)],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
    plugins: [
      {
        name: 'dependencies-by-absolute-path',
        setup(builder) {
          // Native modules, and packages whose CommonJS parts call require() (nats), which an ESM bundle cannot.
          builder.onResolve({ filter: /^(classic-level|abstract-level|msgpackr|memory-level|prom-client|secp256k1|@nats-io\/[^/]+)(\/.*)?$/ }, (a) => ({ path: requireFromRoot.resolve(a.path), external: true }))
          // ws is CommonJS that requires Node's modules; its ES module wrapper is what an import of it loads.
          builder.onResolve({ filter: /^ws$/ }, () => ({ path: join(requireFromRoot.resolve('ws/package.json'), '..', 'wrapper.mjs'), external: true }))
        },
      },
    ],
  })
  return outfile
}

function runToEnd(cli, argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cli} ${argv[0]} exited with ${code}: ${stderr}`))))
  })
}

/** Starts `serve` and resolves once it prints its URL; `stop()` sends SIGINT to its PID and resolves with the exit code. */
function startServe(cli, argv) {
  return new Promise((resolve, reject) => {
    // --cpu-prof DIR: the server writes a V8 CPU profile there when it stops (open it in Chrome DevTools).
    const profile = args['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']]
    const child = spawn(process.execPath, [...profile, cli, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const exited = new Promise((done) => child.on('close', (code, signal) => done(code ?? signal)))
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk
      const match = /^ {2}(http:\/\/\S+)\/prices$/m.exec(stdout)
      if (match !== null && stdout.includes('Press Ctrl+C')) {
        resolve({
          url: match[1],
          pid: child.pid,
          stderr: () => stderr,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGINT')
            return exited
          },
        })
      }
    })
    child.on('error', reject)
    void exited.then((code) => reject(new Error(`serve exited with ${code} before listening: ${stderr}`)))
  })
}

// ----------------------------------------------------------------- the data

function getJson(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: READ_HEADERS }, (res) => {
        const chunks = []
        res.on('data', (chunk) => chunks.push(chunk))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode} ${text}`))
          else resolve(JSON.parse(text))
        })
      })
      .on('error', reject)
  })
}

/** The symbols and the time span of the stored data, asked of the server itself. */
async function describeData(url) {
  const all = await getJson(`${url}/prices`)
  const symbols = Object.keys(all)
  const to = Math.min(...Object.values(all).map((record) => record.timestamp))
  // The range form is oldest first: with interval 1 and limit 1 it gives the oldest record.
  const [oldest] = await getJson(`${url}/prices?symbol=${encodeURIComponent(symbols[0])}&fromTimestamp=0&toTimestamp=${to}&interval=1&limit=1`)
  return { symbols, from: oldest.timestamp, to }
}

/** The query forms and their share of requests. Each returns a path for a PRNG. */
function makeForms({ symbols, from, to }) {
  const symbol = (rnd) => encodeURIComponent(symbols[Math.floor(rnd() * symbols.length)])
  const time = (rnd) => from + Math.floor(rnd() * (to - from))
  // The largest allowed range: maxRangePoints buckets of 10 s (one record each) at a random place,
  // or as many as the data holds when it spans less. No `limit` (it is capped at maxLimit, 3000).
  const buckets = Math.min(MAX_RANGE_POINTS, Math.floor((to - from) / STEP_MS) - 1)
  const rangeWidth = buckets * STEP_MS
  const expectedLargest = buckets
  return [
    { name: 'latest', weight: 25, path: (rnd) => `/prices?symbol=${symbol(rnd)}`, expect: { kind: 'array', min: 1, max: 1 } },
    { name: 'latest-100', weight: 10, path: (rnd) => `/prices?symbol=${symbol(rnd)}&limit=100`, expect: { kind: 'array', min: 100, max: 100 } },
    { name: 'history (as-of)', weight: 15, path: (rnd) => `/prices?symbol=${symbol(rnd)}&toTimestamp=${time(rnd)}`, expect: { kind: 'array', min: 1, max: 1 } },
    {
      name: 'range, 1 h buckets, whole span',
      weight: 10,
      path: (rnd) => `/prices?symbol=${symbol(rnd)}&fromTimestamp=${from}&toTimestamp=${to}&interval=3600000`,
      expect: { kind: 'array', min: Math.floor((to - from) / 3_600_000), max: Math.ceil((to - from) / 3_600_000) + 1, minutes: true },
    },
    {
      name: `range max (${expectedLargest} records)`,
      weight: 5,
      path: (rnd) => {
        // Aligned to the 10 s buckets: the window holds exactly `buckets` of them, one record each.
        const start = Math.ceil((from + Math.floor(rnd() * Math.max(1, to - from - rangeWidth))) / STEP_MS) * STEP_MS
        return `/prices?symbol=${symbol(rnd)}&fromTimestamp=${start}&toTimestamp=${start + rangeWidth - 1}&interval=${STEP_MS}`
      },
      expect: { kind: 'array', min: Math.floor(expectedLargest * 0.99), max: MAX_RANGE_POINTS, minutes: true },
      largest: true,
    },
    { name: 'several, 3 named', weight: 15, path: (rnd) => `/prices?symbols=${[symbol(rnd), symbol(rnd), symbol(rnd)].join(',')}`, expect: { kind: 'object', min: 1, max: 3 } },
    { name: `several, all ${symbols.length}`, weight: 10, path: () => '/prices', expect: { kind: 'object', min: symbols.length, max: symbols.length } },
    { name: `several, all ${symbols.length}, as of a time`, weight: 10, path: (rnd) => `/prices?toTimestamp=${time(rnd)}`, expect: { kind: 'object', min: symbols.length, max: symbols.length } },
  ]
}

/**
 * Issue 12's mix: the light forms (latest, latest-100, as-of, several x20,
 * all symbols) most of the traffic, 24 h ranges at 1 min / 10 min / 1 h,
 * a few % of maxRangePoints-record ranges, and about 2 % malformed requests
 * (answered 400 with a JSON error: a correct answer, not an error).
 */
function makeIssue12Forms({ symbols, from, to }) {
  const symbol = (rnd) => encodeURIComponent(symbols[Math.floor(rnd() * symbols.length)])
  const time = (rnd) => from + Math.floor(rnd() * (to - from))
  const severalCount = Math.min(20, symbols.length)
  const several = (rnd) => {
    const pool = [...symbols]
    for (let i = 0; i < severalCount; i++) {
      const j = i + Math.floor(rnd() * (pool.length - i))
      ;[pool[i], pool[j]] = [pool[j], pool[i]]
    }
    return pool.slice(0, severalCount).map(encodeURIComponent).join(',')
  }
  const buckets = Math.min(MAX_RANGE_POINTS, Math.floor((to - from) / STEP_MS) - 1)
  const rangeWidth = buckets * STEP_MS
  // 24 h, or the whole span when the data holds less (a short --days run).
  const window = Math.min(DAY_MS, to - from)
  const dayRange = (interval) => {
    const perWindow = window / interval
    return {
      path: (rnd) => {
        const start = from + Math.floor(rnd() * Math.max(1, to - from - window))
        return `/prices?symbol=${symbol(rnd)}&fromTimestamp=${start}&toTimestamp=${start + window - 1}&interval=${interval}`
      },
      expect: { kind: 'array', min: Math.max(1, Math.floor(perWindow) - 1), max: Math.ceil(perWindow) + 1, minutes: true },
    }
  }
  // Malformed: each is a 400 for a different reason (a bad number, a bad interval, conflicting parameters, an unknown one).
  const malformed = [
    (rnd) => `/prices?symbol=${symbol(rnd)}&limit=many`,
    (rnd) => `/prices?symbol=${symbol(rnd)}&fromTimestamp=${from}&toTimestamp=${to}&interval=-5`,
    (rnd) => `/prices?symbol=${symbol(rnd)}&toTimestamp=yesterday`,
    (rnd) => `/prices?symbol=${symbol(rnd)}&symbols=${symbol(rnd)}`,
  ]
  return [
    { name: 'latest', weight: 25, light: true, path: (rnd) => `/prices?symbol=${symbol(rnd)}`, expect: { kind: 'array', min: 1, max: 1 } },
    { name: 'latest-100', weight: 10, light: true, path: (rnd) => `/prices?symbol=${symbol(rnd)}&limit=100`, expect: { kind: 'array', min: 100, max: 100 } },
    { name: 'history (as-of)', weight: 13, light: true, path: (rnd) => `/prices?symbol=${symbol(rnd)}&toTimestamp=${time(rnd)}`, expect: { kind: 'array', min: 1, max: 1 } },
    { name: `several, ${severalCount} named`, weight: 12, light: true, path: (rnd) => `/prices?symbols=${several(rnd)}`, expect: { kind: 'object', min: severalCount, max: severalCount } },
    { name: `several, all ${symbols.length}`, weight: 10, light: true, path: () => '/prices', expect: { kind: 'object', min: symbols.length, max: symbols.length } },
    { name: 'range 24 h, 1 min buckets', weight: 8, ...dayRange(60_000) },
    { name: 'range 24 h, 10 min buckets', weight: 8, ...dayRange(600_000) },
    { name: 'range 24 h, 1 h buckets', weight: 8, ...dayRange(3_600_000) },
    {
      name: `range max (${buckets} records)`,
      weight: 4,
      path: (rnd) => {
        const start = Math.ceil((from + Math.floor(rnd() * Math.max(1, to - from - rangeWidth))) / STEP_MS) * STEP_MS
        return `/prices?symbol=${symbol(rnd)}&fromTimestamp=${start}&toTimestamp=${start + rangeWidth - 1}&interval=${STEP_MS}`
      },
      expect: { kind: 'array', min: Math.floor(buckets * 0.99), max: MAX_RANGE_POINTS, minutes: true },
      largest: true,
    },
    { name: 'malformed (400 expected)', weight: 2, status: 400, path: (rnd) => malformed[Math.floor(rnd() * malformed.length)](rnd), expect: { kind: 'error' }, reason: malformedReason },
  ]
}

/** Which of the malformed requests a path is, for the breakdown of their latencies (issue 23: which ones wait). */
function malformedReason(path) {
  if (path.includes('limit=many')) return 'bad limit'
  if (path.includes('interval=-')) return 'negative interval'
  if (path.includes('toTimestamp=yesterday')) return 'bad toTimestamp'
  if (path.includes('&symbols=')) return 'symbol with symbols'
  return 'other'
}

/** Every malformed form must really be answered 400 with a JSON error (else the mix measures something else). */
async function checkMalformed(url, forms) {
  const form = forms.find((candidate) => candidate.status === 400)
  if (form === undefined) return
  const rnd = mulberry32(11)
  for (let i = 0; i < 40; i++) {
    const path = form.path(rnd)
    const outcome = await request(url + path, undefined)
    let body
    try {
      body = JSON.parse(outcome.body.toString('utf8'))
    } catch {}
    if (outcome.status !== 400 || typeof body?.error?.code !== 'string') fail(`${path} answered ${outcome.status} ${outcome.body?.toString('utf8').slice(0, 200)}, not 400 with a JSON error`)
  }
}

/** A 503 as documented: `retry-after` and a JSON body { error: { code, message } }. */
function documented503(outcome) {
  if (outcome.retryAfter === undefined || !outcome.contentType?.startsWith('application/json')) return false
  try {
    const { error } = JSON.parse(outcome.body.toString('utf8'))
    return typeof error?.code === 'string' && typeof error?.message === 'string'
  } catch {
    return false
  }
}

/** The largest form must really answer maxRangePoints records (else --max-range-points is wrong for this server). */
async function checkLargestRange(url, forms) {
  const largest = forms.find((form) => form.largest)
  const body = await getJson(`${url}${largest.path(mulberry32(7))}`)
  if (!Array.isArray(body) || body.length < largest.expect.min || body.length > largest.expect.max) fail(`the largest range answered ${Array.isArray(body) ? body.length : typeof body} records, not about ${largest.name}; pass --max-range-points`)
}

// ----------------------------------------------------------------- the load

/** N clients, each on its own keep-alive connection, sending back to back until the time is up. */
async function runLoad(url, forms, { seconds, clients, seed }) {
  const totalWeight = forms.reduce((sum, form) => sum + form.weight, 0)
  const stats = new Map(forms.map((form) => [form.name, { latencies: [], errors: 0, bytes: 0, busy: 0 }]))
  // Forms with a `reason` (the malformed ones) are also tallied per reason: `  form: reason` rows.
  const reasons = new Map()
  const errorSamples = []
  const status503 = { documented: 0, undocumented: 0, codes: {} }
  const validator = startValidator()
  const deadline = performance.now() + seconds * 1000
  const started = performance.now()
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      const rnd = mulberry32(seed * 1_000 + client)
      try {
        while (performance.now() < deadline) {
          let pick = rnd() * totalWeight
          const form = forms.find((candidate) => (pick -= candidate.weight) < 0) ?? forms[0]
          const path = form.path(rnd)
          const stat = stats.get(form.name)
          const t0 = performance.now()
          const outcome = await request(url + path, agent)
          const latency = performance.now() - t0
          let problem = outcome.error
          if (problem === undefined && outcome.status === 503) {
            // Documented (retry-after and a JSON error): counted apart, not an error, not in the latencies.
            if (documented503(outcome)) {
              status503.documented++
              stat.busy++
              const code = JSON.parse(outcome.body.toString('utf8')).error.code
              status503.codes[code] = (status503.codes[code] ?? 0) + 1
              continue
            }
            status503.undocumented++
            problem = `503 without retry-after or a JSON error: ${outcome.body.slice(0, 200)}`
          }
          if (problem === undefined) {
            if (outcome.status !== (form.status ?? 200)) problem = `status ${outcome.status}: ${outcome.body.slice(0, 200)}`
            else if (outcome.contentType !== 'application/json; charset=utf-8') problem = `content-type ${outcome.contentType}`
            // A streamed answer (issue 12) is chunked, without content-length; its JSON is checked whole below.
            else if (outcome.length === undefined ? !outcome.chunked : outcome.length !== outcome.body.length) {
              problem = `content-length ${outcome.length ?? 'absent'}${outcome.chunked ? ' (chunked)' : ''}, got ${outcome.body.length} bytes`
            }
          }
          const reasonName = form.reason === undefined ? undefined : `${form.name}: ${form.reason(path)}`
          if (reasonName !== undefined && !reasons.has(reasonName)) reasons.set(reasonName, { latencies: [], errors: 0, bytes: 0, busy: 0 })
          const record = (found) => {
            if (found === undefined) {
              stat.latencies.push(latency)
              stat.bytes += outcome.body.length
              if (reasonName !== undefined) reasons.get(reasonName).latencies.push(latency)
            } else {
              stat.errors++
              if (errorSamples.length < 5) errorSamples.push({ form: form.name, path, problem: found })
            }
          }
          // The body's JSON and shape are checked on another thread; the client goes on at once.
          if (problem === undefined) void validator.check(outcome.body, form.expect).then(record)
          else record(problem)
        }
      } finally {
        agent.destroy()
      }
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  await validator.close()
  const rows = forms.map((form) => summarise(form.name, stats.get(form.name), elapsed))
  const combine = (list) => ({
    latencies: list.flatMap((stat) => stat.latencies),
    errors: list.reduce((sum, stat) => sum + stat.errors, 0),
    bytes: list.reduce((sum, stat) => sum + stat.bytes, 0),
    busy: list.reduce((sum, stat) => sum + stat.busy, 0),
  })
  const all = combine([...stats.values()])
  const lightForms = forms.filter((form) => form.light)
  const light = lightForms.length === 0 ? undefined : summarise('light forms', combine(lightForms.map((form) => stats.get(form.name))), elapsed)
  const reasonRows = [...reasons.keys()].sort().map((name) => summarise(`  ${name}`, reasons.get(name), elapsed))
  return { forms: rows, reasons: reasonRows, total: summarise('all forms', all, elapsed), light, status503, errorSamples, elapsed }
}

/** A worker checking answers (validate-worker.mjs); `check` resolves with a problem or undefined. */
function startValidator() {
  const worker = new Worker(new URL('./validate-worker.mjs', import.meta.url))
  const waiting = new Map()
  let next = 0
  worker.on('message', ({ id, problem }) => {
    waiting.get(id)(problem)
    waiting.delete(id)
  })
  return {
    check(body, expect) {
      const id = next++
      // A copy the worker owns (the buffer may be a slice of Node's pool).
      const copy = new Uint8Array(body)
      return new Promise((resolve) => {
        waiting.set(id, resolve)
        worker.postMessage({ id, body: copy, expect }, [copy.buffer])
      })
    },
    async close() {
      while (waiting.size > 0) await idle(20)
      await worker.terminate()
    },
  }
}

function request(url, agent) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent, headers: READ_HEADERS }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          contentType: res.headers['content-type'],
          retryAfter: res.headers['retry-after'],
          length: res.headers['content-length'] === undefined ? undefined : Number(res.headers['content-length']),
          chunked: res.headers['transfer-encoding'] === 'chunked',
          body: Buffer.concat(chunks),
        }),
      )
      res.on('error', (err) => resolve({ error: `response: ${err.code ?? err.message}` }))
    })
    req.on('error', (err) => resolve({ error: `request: ${err.code ?? err.message}` }))
  })
}

function summarise(name, { latencies, errors, bytes, busy }, elapsed) {
  const sorted = Float64Array.from(latencies).sort()
  const at = (q) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)])
  return {
    form: name,
    count: sorted.length + errors + busy,
    errors,
    status503: busy,
    perSecond: +(sorted.length / elapsed).toFixed(1),
    mbPerSecond: +(bytes / 1e6 / elapsed).toFixed(1),
    p50: +at(0.5).toFixed(2),
    p90: +at(0.9).toFixed(2),
    p99: +at(0.99).toFixed(2),
    max: +(sorted.at(-1) ?? Number.NaN).toFixed(2),
  }
}

/** A small seeded PRNG, so a run's request mix is reproducible. */
function mulberry32(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

// ------------------------------------------------------------ measurement

/** RSS now, its anonymous part (RssAnon) and its high-water mark (kB), and CPU ticks used, of a process (Linux /proc; `ps` elsewhere, without RssAnon). */
function readProc(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN)
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').slice(readFileSync(`/proc/${pid}/stat`, 'utf8').lastIndexOf(')') + 2).split(' ')
    return { rssKb: field('VmRSS'), anonKb: field('RssAnon'), hwmKb: field('VmHWM'), cpuTicks: Number(stat[11]) + Number(stat[12]) }
  } catch {
    const rssKb = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim())
    return { rssKb, anonKb: Number.NaN, hwmKb: Number.NaN, cpuTicks: Number.NaN }
  }
}

function clockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
}

/**
 * Samples RSS and RssAnon every `everyMs`; `stop()` gives the peaks, and the peaks of each `windowMs`
 * (to see a plateau, not a climb).
 */
function sampleRss(pid, everyMs, windowMs) {
  const started = performance.now()
  const windows = []
  const anonWindows = []
  const sample = () => {
    const index = Math.floor((performance.now() - started) / windowMs)
    const now = readProc(pid)
    windows[index] = Math.max(windows[index] ?? 0, now.rssKb)
    anonWindows[index] = Math.max(anonWindows[index] ?? 0, Number.isNaN(now.anonKb) ? 0 : now.anonKb)
  }
  sample()
  const timer = setInterval(sample, everyMs)
  return {
    stop() {
      clearInterval(timer)
      sample()
      const full = Array.from(windows, (value) => value ?? 0)
      const anonFull = Array.from(anonWindows, (value) => value ?? 0)
      return { peak: Math.max(...full), windows: full, peakAnon: Math.max(...anonFull), anonWindows: anonFull }
    },
  }
}

function mb(kb) {
  return Math.round(kb / 1024)
}

function idle(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** The commit of the code measured, with "+changes" when src/ has uncommitted changes (or undefined outside git). */
function gitCommit() {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim() !== ''
    return dirty ? `${head}+changes` : head
  } catch {
    return undefined
  }
}

function machine() {
  const cpus = os.cpus()
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'} × ${cpus.length}`,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
  }
}

function formatReport(report) {
  const lines = [
    `Machine: ${report.machine.cpu}, ${report.machine.memoryGb} GB RAM, ${report.machine.os}, Node ${report.machine.node}; load average ${report.machine.loadAverage1mBeforeRun} just before the run`,
    `Load: ${report.settings.clients} keep-alive clients for ${report.settings.seconds} s on loopback (client and server share the machine); ` +
      `${report.settings.records.toLocaleString('en-US')} records (${report.settings.symbols} symbols, ${report.settings.days} days); mix ${report.settings.mix}; seed ${report.settings.seed}` +
      `${report.settings.serveFlags.length > 0 ? `; serve ${report.settings.serveFlags.join(' ')}` : ''}`,
    '',
    '| form | requests | errors | 503 | req/s | MB/s | p50 ms | p90 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...[...report.forms, ...(report.malformedByReason ?? []), ...(report.lightForms === undefined ? [] : [report.lightForms]), report.total].map(
      (row) => `| ${row.form === 'all forms' || row.form === 'light forms' ? `**${row.form}**` : row.form} | ${row.count} | ${row.errors} | ${row.status503} | ${row.perSecond} | ${row.mbPerSecond} | ${row.p50} | ${row.p90} | ${row.p99} | ${row.max} |`,
    ),
    '',
    `503 answers: ${report.status503.documented} with retry-after and a JSON error (documented, not errors${Object.keys(report.status503.codes).length > 0 ? `: ${Object.entries(report.status503.codes).map(([code, n]) => `${code} ${n}`).join(', ')}` : ''}), ` +
      `${report.status503.undocumented} without (errors). Latencies are of the answers other than 503s.`,
    `Server RSS: ${report.rssMb.atStart} MB once listening, ${report.rssMb.before} MB after the warm-up, peak ${report.rssMb.peakSampled} MB sampled every 100 ms ` +
      `(high-water mark since start ${report.rssMb.peakHighWaterMark} MB), ${report.rssMb.afterLoad} MB right after, ${report.rssMb.afterIdle3s} MB after 3 s idle.`,
    `Server RSS peak per ${Math.max(1, Math.round(report.settings.seconds / 5))} s of the run: ${report.rssMb.peakPerWindow.join(', ')} MB.`,
    `Server anonymous memory (RssAnon: heap and caches, not mapped table files): ${report.anonMb.atStart} MB once listening, ${report.anonMb.before} MB after the warm-up, ` +
      `peak ${report.anonMb.peakSampled} MB sampled every 100 ms (per ${Math.max(1, Math.round(report.settings.seconds / 5))} s: ${report.anonMb.peakPerWindow.join(', ')} MB), ` +
      `${report.anonMb.afterLoad} MB right after, ${report.anonMb.afterIdle3s} MB after 3 s idle.`,
    `Server CPU: ${report.serverCpuSeconds} s over the ${report.settings.seconds} s run. Graceful stop (SIGINT): exit ${report.serverExit}.`,
  ]
  return lines.join('\n')
}
