/**
 * HTTP over loopback: the store behind the project's own
 * `createPricesListener(store)`, a bare `node:http` server answering the
 * same bytes as a constant (what the network path alone costs), and a
 * minimal `node:http` handler over SQLite, each loaded in turn by the same
 * client process with the same concurrent connections and URLs.
 */
import { createServer, get } from 'node:http'
import type { RequestListener, Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import type { PriceStore } from '../src/index.js'
import { randomSymbol, randomTime } from './context.js'
import type { FamilyContext } from './context.js'
import { DAY_MS, STEP_MS } from './generate.js'
import type { LoadJob, LoadResult } from './http-client.js'
import { ROOT_DIR } from './load.js'
import { sampleRss } from './measure.js'
import type { SqliteBaseline } from './sqlite-baseline.js'

export type ServerName = 'store' | 'sqlite' | 'constant'
const SERVERS: readonly ServerName[] = ['store', 'constant', 'sqlite']

export interface HttpServerResult {
  readonly requestsPerSecond: number
  readonly medianUs: number
  readonly p90Us: number
  readonly errors: number
}

export interface HttpCaseResult {
  readonly name: string
  readonly concurrency: number
  readonly rounds: number
  readonly secondsPerRound: number
  readonly bytesPerAnswer: number
  readonly servers: Readonly<Record<ServerName, HttpServerResult>>
  readonly peakRssMB: number
  readonly target?: { readonly minShareOfConstant: number; readonly text: string }
}

/** Runs load jobs in the client process. */
export type LoadClient = (job: LoadJob) => Promise<LoadResult>

const PROVIDER_PARAM = 'provider=redstone'
const JSON_TYPE = 'application/json; charset=utf-8'

/** A bare SQLite-backed handler for the three query shapes the HTTP cases use. */
function sqliteListener(db: SqliteBaseline): RequestListener {
  return (req, res) => {
    const url = req.url ?? ''
    const params = new URLSearchParams(url.slice(url.indexOf('?') + 1))
    const symbol = params.get('symbol')
    const symbols = params.get('symbols')
    const interval = params.get('interval')
    let answer: unknown
    if (symbols !== null) answer = db.several(symbols.split(','), 'json_each')
    else if (symbol !== null && interval !== null) {
      const every = Number(interval)
      answer = db.range(symbol, Number(params.get('fromTimestamp')), Number(params.get('toTimestamp')), every, every > STEP_MS ? 'seek-per-bucket' : 'scan-rows')
    } else answer = db.latest(symbol ?? '', { limit: Number(params.get('limit') ?? 1) })
    const body = JSON.stringify(answer)
    res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }
}

function listen(listener: RequestListener): Promise<Server> {
  const server = createServer({ keepAliveTimeout: 60_000 }, listener)
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

function fetchBody(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`GET ${path}: ${res.statusCode} ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`))))
    }).on('error', reject)
  })
}

type ListenerFactory = (store: PriceStore) => RequestListener

/** The project's HTTP adapter, when it exists (it is written separately). */
async function loadAdapter(): Promise<ListenerFactory | undefined> {
  const file = join(ROOT_DIR, 'src', 'adapters', 'http', 'node.ts')
  if (!existsSync(file)) return undefined
  const module = (await import(pathToFileURL(file).href)) as { createPricesListener?: ListenerFactory }
  return module.createPricesListener
}

export async function runHttp(ctx: FamilyContext, client: LoadClient): Promise<HttpCaseResult[]> {
  const createPricesListener = await loadAdapter()
  if (createPricesListener === undefined) {
    ctx.note('http: skipped, src/adapters/http/node.ts (createPricesListener) does not exist yet')
    return []
  }
  const concurrency = 16
  const rounds = ctx.quick ? 2 : 3
  const secondsPerRound = ctx.quick ? 0.5 : 3
  const span = Math.min(DAY_MS, ctx.shape.to - ctx.shape.from + STEP_MS)
  const cases: { name: string; paths: string[]; ordered: boolean; target?: HttpCaseResult['target'] }[] = [
    {
      name: 'HTTP latest-1',
      paths: Array.from({ length: 256 }, () => `/prices?symbol=${encodeURIComponent(randomSymbol(ctx))}&${PROVIDER_PARAM}`),
      ordered: false,
      target: { minShareOfConstant: 0.6, text: '≥ 60 % of the bare node:http server' },
    },
    {
      name: 'HTTP several ×20',
      paths: Array.from({ length: 256 }, () => `/prices?symbols=${ctx.random.shuffled(ctx.shape.symbols).slice(0, 20).map(encodeURIComponent).join(',')}&${PROVIDER_PARAM}`),
      ordered: true,
    },
    {
      name: `HTTP range ${span === DAY_MS ? '24 h' : `${(span / 3_600_000).toFixed(1)} h`} at 10 min`,
      paths: Array.from({ length: 256 }, () => {
        const from = randomTime(ctx, ctx.shape.from, ctx.shape.to + STEP_MS - span)
        return `/prices?symbol=${encodeURIComponent(randomSymbol(ctx))}&fromTimestamp=${from}&toTimestamp=${from + span - 1}&interval=600000&${PROVIDER_PARAM}`
      }),
      ordered: false,
    },
    {
      // A dense answer (every record of a day, about 3 MB): what building an answer from stored bytes costs against writing those bytes from memory.
      name: `HTTP range ${span === DAY_MS ? '24 h' : `${(span / 3_600_000).toFixed(1)} h`} at 1 ms`,
      paths: Array.from({ length: 64 }, () => {
        const from = randomTime(ctx, ctx.shape.from, ctx.shape.to + STEP_MS - span)
        return `/prices?symbol=${encodeURIComponent(randomSymbol(ctx))}&fromTimestamp=${from}&toTimestamp=${from + span - 1}&interval=1&${PROVIDER_PARAM}`
      }),
      ordered: false,
      target: { minShareOfConstant: 1 / 3, text: 'within 3× of the bare node:http server writing the same bytes' },
    },
  ]
  const storeServer = await listen(createPricesListener(ctx.store))
  const sqliteServer = await listen(sqliteListener(ctx.sqlite.clustered))
  const port = (server: Server): number => (server.address() as AddressInfo).port
  const results: HttpCaseResult[] = []
  try {
    for (const spec of cases) {
      // Same answers from the store and SQLite over HTTP, on a sample of URLs.
      for (const path of spec.paths.slice(0, 16)) {
        const a = JSON.parse(await fetchBody(port(storeServer), path)) as object
        const b = JSON.parse(await fetchBody(port(sqliteServer), path)) as object
        if (!isDeepStrictEqual(a, b) || (spec.ordered && !isDeepStrictEqual(Object.keys(a), Object.keys(b)))) {
          throw new Error(`${spec.name}: SQLite over HTTP answered differently from the store for ${path}`)
        }
      }
      // The constant server answers the store's own bytes for the first URL, with the same headers.
      const constantBody = Buffer.from(await fetchBody(port(storeServer), spec.paths[0] as string), 'utf8')
      const constantServer = await listen((_req, res) => {
        res.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': constantBody.length })
        res.end(constantBody)
      })
      const ports: Record<ServerName, number> = { store: port(storeServer), sqlite: port(sqliteServer), constant: port(constantServer) }
      const runs: Record<ServerName, LoadResult[]> = { store: [], sqlite: [], constant: [] }
      try {
        // Warm every server (JIT, caches), then alternate them round by round.
        for (const name of SERVERS) await client({ port: ports[name], paths: spec.paths, concurrency, durationMs: 300 })
        for (let round = 0; round < rounds; round++) {
          for (let k = 0; k < SERVERS.length; k++) {
            const name = SERVERS[(round + k) % SERVERS.length] as ServerName
            runs[name].push(await client({ port: ports[name], paths: spec.paths, concurrency, durationMs: secondsPerRound * 1000 }))
            sampleRss()
          }
        }
      } finally {
        constantServer.closeAllConnections()
        await new Promise((resolve) => constantServer.close(resolve))
      }
      const summary = (list: LoadResult[]): HttpServerResult => {
        const sorted = [...list].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)
        const mid = sorted[Math.floor(sorted.length / 2)] as LoadResult
        return { requestsPerSecond: mid.requestsPerSecond, medianUs: mid.medianUs, p90Us: mid.p90Us, errors: list.reduce((a, r) => a + r.errors, 0) }
      }
      results.push({
        name: spec.name,
        concurrency,
        rounds,
        secondsPerRound,
        bytesPerAnswer: Math.round(runs.store[0]?.bytesPerAnswer ?? 0),
        servers: { store: summary(runs.store), sqlite: summary(runs.sqlite), constant: summary(runs.constant) },
        peakRssMB: Math.round(sampleRss()),
        ...(spec.target === undefined ? {} : { target: spec.target }),
      })
    }
  } finally {
    for (const server of [storeServer, sqliteServer]) {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }
  return results
}
