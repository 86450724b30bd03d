/**
 * Cross rates (issue 24): a cross-rate range of 24 h at 1 min (`store.cross('ETH', 'BTC', { from, to,
 * interval: 60_000 })`, 1,440 buckets, the rate in force at each bucket's end) against SQLite on the same
 * data, records shaped like RedStone's (bench/generate.ts: one record per symbol every 10 s, full-size
 * signatures and sources), the store on classic-level and SQLite in WAL mode on disk. SQLite's plans, each
 * on a (symbol, timestamp, id) `WITHOUT ROWID` key:
 *   - seek per sample: two `ORDER BY timestamp DESC, id DESC LIMIT 1` seeks per bucket (one per leg);
 *   - scan and merge: per leg, one seek for the record in force before `from` and one ordered scan of the
 *     window, merged in JavaScript (the store's own plan).
 * Also the same 2 × 1,440 as-of lookups made in-process (`store.latest(symbol, { to })`). Every answer is
 * checked equal (JSON) to the store's first. Median of ROUNDS runs. Standalone:
 *   cd bench && node --import tsx cross-rate.bench.ts [--days 2] [--rounds 7]
 * Figures on a shared machine are indicative only.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER, DAY_MS, dataShape, generateBatches } from './generate.js'
import { numberArg, medianMs } from './standalone.js'

const DAYS = numberArg('days', 2)
const ROUNDS = numberArg('rounds', 7)
const MINUTE = 60_000

interface Leg { id: string; timestamp: number; value: number }
interface Db { prepare(sql: string): { run(...p: unknown[]): unknown; get(...p: unknown[]): unknown; all(...p: unknown[]): unknown[] }; exec(sql: string): void; transaction<T>(fn: (rows: T[]) => void): (rows: T[]) => void; close(): void }

/** The sample of one bucket from its two legs, as docs/semantics.md defines it (written here again: no engine code). */
function sample(bucket: number, at: number, quote: Leg | undefined, base: Leg | undefined): unknown {
  if (quote === undefined) return { bucket, at, refused: 'no-quote', legs: base === undefined ? {} : { base } }
  if (base === undefined) return { bucket, at, refused: 'no-base', legs: { quote } }
  const legs = { quote, base }
  if (base.value === 0) return { bucket, at, refused: 'base-zero', legs }
  const value = quote.value / base.value
  if (!Number.isFinite(value)) return { bucket, at, refused: 'not-finite', legs }
  const newer = Math.max(quote.timestamp, base.timestamp)
  return { bucket, at, point: { value, timestamp: newer, age: newer - Math.min(quote.timestamp, base.timestamp), legs } }
}

async function main(): Promise<void> {
  const shape = dataShape(DAYS, 2) // BTC and ETH
  const dir = await mkdtemp(join(tmpdir(), 'cross-rate-bench-'))
  const store = await PriceStore.open(join(dir, 'store'), { provider: BENCH_PROVIDER })
  const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Db
  const db = new Sqlite(join(dir, 'sqlite.db'))
  try {
    db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE p (symbol TEXT, timestamp INTEGER, id TEXT, value REAL, body TEXT, PRIMARY KEY (symbol, timestamp, id)) WITHOUT ROWID')
    const insert = db.prepare('INSERT INTO p VALUES (?, ?, ?, ?, ?)')
    const load = db.transaction((rows: { symbol: string; timestamp: number; id: string; value: number }[]) => {
      for (const r of rows) insert.run(r.symbol, r.timestamp, r.id, r.value, JSON.stringify(r))
    })
    for (const batch of generateBatches(shape, 10_000)) {
      await store.putMany(batch)
      load(batch)
    }
    db.exec('ANALYZE')
    // The last day of the data: its first bucket's legs are carried in from before `from`.
    const to = shape.to
    const from = to - DAY_MS + 1
    const buckets: { bucket: number; at: number }[] = []
    for (let bucket = Math.floor(from / MINUTE) * MINUTE; bucket <= to; bucket += MINUTE) buckets.push({ bucket, at: Math.min(bucket + MINUTE - 1, to) })

    const seek = db.prepare('SELECT id, timestamp, value FROM p WHERE symbol = ? AND timestamp <= ? ORDER BY timestamp DESC, id DESC LIMIT 1')
    const window = db.prepare('SELECT id, timestamp, value FROM p WHERE symbol = ? AND timestamp BETWEEN ? AND ? ORDER BY timestamp, id')
    const legRows = (symbol: string): Leg[] => {
      const carry = seek.get(symbol, from - 1) as Leg | undefined
      return [...(carry === undefined ? [] : [carry]), ...(window.all(symbol, from, to) as Leg[])]
    }
    const plans: Record<string, () => unknown[]> = {
      'seek per sample': () => buckets.map(({ bucket, at }) => sample(bucket, at, seek.get('ETH', at) as Leg | undefined, seek.get('BTC', at) as Leg | undefined)),
      'scan and merge': () => {
        const [quote, base] = [legRows('ETH'), legRows('BTC')] as [Leg[], Leg[]]
        let q = -1
        let b = -1
        return buckets.map(({ bucket, at }) => {
          while (q + 1 < quote.length && quote[q + 1]!.timestamp <= at) q++
          while (b + 1 < base.length && base[b + 1]!.timestamp <= at) b++
          return sample(bucket, at, quote[q], base[b])
        })
      },
    }
    const cross = () => store.cross('ETH', 'BTC', { from, to, interval: MINUTE })
    const singles = async () => {
      const out = []
      for (const { bucket, at } of buckets) {
        const [quote] = await store.latest('ETH', { to: at })
        const [base] = await store.latest('BTC', { to: at })
        const leg = (r: typeof quote) => r && { id: r.id, timestamp: r.timestamp, value: r.value }
        out.push(sample(bucket, at, leg(quote), leg(base)))
      }
      return out
    }

    // Equal answers first, whole (every bucket's rate and both legs), from every contender.
    const expected = JSON.stringify(await cross())
    const others: Record<string, unknown> = { 'single as-of calls': await singles() }
    for (const [name, plan] of Object.entries(plans)) others[name] = plan()
    for (const [name, got] of Object.entries(others)) if (JSON.stringify(got) !== expected) throw new Error(`answers differ: store.cross vs ${name}`)

    const time = (fn: () => unknown): Promise<number> => medianMs(fn, ROUNDS)
    const sqlite: Record<string, number> = {}
    for (const [name, plan] of Object.entries(plans)) sqlite[name] = await time(plan)
    const [bestName, bestMs] = Object.entries(sqlite).sort((x, y) => x[1] - y[1])[0]!
    const ms = { cross: await time(cross), singles: await time(singles) }
    console.log(`cross-rate range ETH/BTC, 24 h at 1 min (${buckets.length} buckets) over ${DAYS} days of 2 symbols (${shape.records} records), median of ${ROUNDS} (ms):`)
    console.log(`  store.cross ${ms.cross.toFixed(1)}, single as-of calls ${ms.singles.toFixed(1)}, SQLite ${Object.entries(sqlite).map(([n, v]) => `${n} ${v.toFixed(1)}`).join(', ')}`)
    console.log(`  store/SQLite best (${bestName}) ${(ms.cross / bestMs).toFixed(2)}, store/single calls ${(ms.cross / ms.singles).toFixed(2)}`)
  } finally {
    db.close()
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
