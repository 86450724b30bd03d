/**
 * History as-of with warm caches, the store against SQLite: fresh random
 * (symbol, `toTimestamp`) pairs every call, as `run.ts` draws them, for
 * `--rounds` rounds of 2,000 calls; a round's median and p90. Run each side
 * alone, after the other, on a machine doing nothing else: the full run's
 * data sets exceed 24 GiB, so its as-of rows include disk reads.
 *
 * `node --import tsx asof-warm.ts store .data/store-7d-g2-<hash>/db`
 * `node --import tsx asof-warm.ts rowid .data/sqlite-rowid-7d-g2-b1/prices.db` (or `clustered`)
 */
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER, dataShape } from './generate.js'
import { SqliteBaseline } from './sqlite-baseline.js'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { rounds: { type: 'string', default: '14' }, seed: { type: 'string', default: '5' } } })
const [side, file] = positionals as [string, string]
const shape = dataShape(7)
let seed = Number(values.seed)
const random = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648

type AsOf = (symbol: string, to: number) => Promise<number> | number
let asOf: AsOf
let close = async (): Promise<void> => {}
if (side === 'store') {
  const store = await PriceStore.open(file, { provider: BENCH_PROVIDER })
  asOf = async (symbol, to) => (await store.latest(symbol, { limit: 1, to })).length
  close = () => store.close()
} else if (side === 'rowid' || side === 'clustered') {
  const db = SqliteBaseline.open(file, side, BENCH_PROVIDER)
  asOf = (symbol, to) => db.latest(symbol, { limit: 1, to }).length
} else {
  throw new Error('usage: asof-warm.ts (store|rowid|clustered) PATH [--rounds N] [--seed N]')
}

for (let round = 0; round < Number(values.rounds); round++) {
  const times: number[] = []
  for (let call = 0; call < 2000; call++) {
    const symbol = shape.symbols[Math.floor(random() * shape.symbols.length)] as string
    const to = Math.floor(shape.from + random() * (shape.to - shape.from))
    const started = performance.now()
    if ((await asOf(symbol, to)) !== 1) throw new Error(`no record of ${symbol} at or before ${to}`)
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  const at = (share: number): string => ((times[Math.floor(times.length * share)] as number) * 1000).toFixed(0)
  console.log(`${side} round ${round}: median ${at(0.5)} µs, p90 ${at(0.9)} µs`)
}
await close()
