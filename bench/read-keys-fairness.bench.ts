/**
 * Read keys under load: a key over its budget is throttled while other keys
 * and anonymous readers keep their latency. One server (`startServer` with
 * `readKeys`) over a memory store of 20 symbols × 2 h at one record per
 * 10 s; closed-loop keep-alive clients asking for light queries (latest,
 * latest-10, several) on loopback, in three groups:
 *
 * - `greedy`: a key allowed 50 requests per 10 s, asked by many clients
 *   as fast as they can (nearly every answer a 429);
 * - `calm`: a key without limits, a few clients;
 * - `anonymous`: no key, a few clients.
 *
 * Two runs: the calm and anonymous clients alone, then with the greedy
 * ones beside them. Reports each group's answers by status and the 200s'
 * latency, p50 and p99. Timings belong here, never in a test; run it on a
 * quiet machine: `cd bench && node --import tsx read-keys-fairness.bench.ts
 * [--seconds 10] [--greedy 32] [--calm 8]`.
 */
import { createHash } from 'node:crypto'
import { Agent, get as httpGet } from 'node:http'
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { MemoryLevel } from 'memory-level'
import { startServer } from '../src/adapters/http/node.js'
import { PriceStore } from '../src/index.js'
import { TEST_PROVIDER, makeRecord } from '../src/testing/records.js'

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, greedy: { type: 'string', default: '32' }, calm: { type: 'string', default: '8' } } })
const SECONDS = Number(args.seconds)
const GREEDY = Number(args.greedy)
const CALM = Number(args.calm)

const sha = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex')
const KEYS = { greedy: 'greedy-bench-key', calm: 'calm-bench-key' }
const SYMBOLS = Array.from({ length: 20 }, (_, i) => `T${i}`)
const END = Date.UTC(2024, 4, 31)
const PATHS = ['/prices?symbol=T3', '/prices?symbol=T7&limit=10', '/prices?symbols=T1,T2,T3']

interface Group {
  readonly name: string
  readonly clients: number
  readonly headers: Record<string, string>
}

interface Tally {
  readonly statuses: Map<number, number>
  readonly latencies: number[]
}

async function main(): Promise<void> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER })
  const records = SYMBOLS.flatMap((symbol) => Array.from({ length: 720 }, (_, i) => makeRecord({ symbol, timestamp: END - i * 10_000, value: 100 + i })))
  for (let i = 0; i < records.length; i += 5_000) await store.putMany(records.slice(i, i + 5_000))
  const readKeys = {
    keys: [
      { id: 'greedy', sha256: sha(KEYS.greedy), limit: { requests: 50, perSeconds: 10 } },
      { id: 'calm', sha256: sha(KEYS.calm) },
    ],
  }
  const server = await startServer({ store, readKeys })
  const calm: Group[] = [
    { name: 'calm', clients: CALM, headers: { 'x-api-key': KEYS.calm } },
    { name: 'anonymous', clients: CALM, headers: {} },
  ]
  const greedy: Group = { name: 'greedy', clients: GREEDY, headers: { 'x-api-key': KEYS.greedy } }
  process.stdout.write(`load average ${loadavg()[0]?.toFixed(2)} before the runs; ${SECONDS} s each; ${GREEDY} greedy clients (50 requests per 10 s), ${CALM} calm, ${CALM} anonymous\n\n`)
  process.stdout.write('| run | group | 200 | 429 | other | p50 ms | p99 ms |\n|---|---|---:|---:|---:|---:|---:|\n')
  for (const [run, groups] of [['alone', calm], ['beside greedy', [...calm, greedy]]] as const) {
    const tallies = await load(server.url, groups)
    for (const group of groups) {
      const tally = tallies.get(group.name) as Tally
      const ok = tally.statuses.get(200) ?? 0
      const limited = tally.statuses.get(429) ?? 0
      const other = [...tally.statuses].filter(([status]) => status !== 200 && status !== 429).reduce((sum, [, count]) => sum + count, 0)
      const sorted = [...tally.latencies].sort((a, b) => a - b)
      const at = (q: number): string => (sorted.length === 0 ? '-' : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number).toFixed(2))
      process.stdout.write(`| ${run} | ${group.name} | ${ok} | ${limited} | ${other} | ${at(0.5)} | ${at(0.99)} |\n`)
    }
  }
  await server.close()
  await store.close()
}

/** Runs every group's clients for {@link SECONDS}: each asks, waits for the whole answer, asks again. */
async function load(base: string, groups: readonly Group[]): Promise<Map<string, Tally>> {
  const tallies = new Map<string, Tally>(groups.map((group) => [group.name, { statuses: new Map(), latencies: [] }]))
  const until = performance.now() + SECONDS * 1000
  const clients = groups.flatMap((group) =>
    Array.from({ length: group.clients }, async (_, index) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 })
      const tally = tallies.get(group.name) as Tally
      for (let i = index; performance.now() < until; i++) {
        const started = performance.now()
        const status = await get(`${base}${PATHS[i % PATHS.length]}`, group.headers, agent)
        tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1)
        if (status === 200) tally.latencies.push(performance.now() - started)
      }
      agent.destroy()
    }),
  )
  await Promise.all(clients)
  return tallies
}

function get(url: string, headers: Record<string, string>, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent, headers }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    }).on('error', reject)
  })
}

await main()
