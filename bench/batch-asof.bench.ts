/**
 * Batch as-of (issue 24): `store.batchAsOf` of S symbols × N times against
 * (1) the same S × N lookups made as single as-of calls in-process
 * (`store.latest(symbol, { to })`) and (2) SQLite's best plan of two, each
 * returning the parsed record: a prepared seek per entry
 * (`ORDER BY timestamp DESC, id DESC LIMIT 1` on the (symbol, timestamp, id)
 * `WITHOUT ROWID` key) and one statement per symbol over `json_each(times)`
 * with the same seek as a correlated subquery. Records come from the bench's
 * RedStone-shaped generator (generate.ts); times are seeded, off the 10 s ticks.
 * The answers' (id, timestamp) are checked equal first. Standalone (not a
 * family of run.ts: it brings its own data):
 *   cd bench && node --import tsx batch-asof.bench.ts [--symbols 100] [--times 100] [--hours 6] [--rounds 7] [--direction before|after|nearest]
 * (`after` and `nearest` seek the other side too, in SQLite with the mirrored statement, and keep the
 * nearer, a tie to the record before, as the as-of rule says).
 * Targets: batch ≤ 0.5× SQLite's best plan, ≤ 2× the single calls. Figures
 * on a shared machine are indicative only.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER, DAY_MS, Random, dataShape, generateBatches } from './generate.js'
import { medianMs, numberArg, textArg } from './standalone.js'

const SYMBOLS = numberArg('symbols', 100)
const TIMES = numberArg('times', 100)
const HOURS = numberArg('hours', 6)
const ROUNDS = numberArg('rounds', 7)
const DIRECTION = textArg('direction', 'before') as 'before' | 'after' | 'nearest'

interface Statement { get(...p: unknown[]): unknown; all(...p: unknown[]): unknown[]; run(...p: unknown[]): unknown }
interface Db { prepare(sql: string): Statement; exec(sql: string): void; transaction<T>(fn: (rows: T[]) => void): (rows: T[]) => void; close(): void }
type Entry = { readonly id: string; readonly timestamp: number; readonly record: unknown } | undefined

async function main(): Promise<void> {
  const shape = dataShape((HOURS * 3_600_000) / DAY_MS, SYMBOLS)
  const dir = await mkdtemp(join(tmpdir(), 'batch-asof-bench-'))
  const store = await PriceStore.open(join(dir, 'store'), { provider: BENCH_PROVIDER })
  const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Db
  const db = new Sqlite(join(dir, 'sqlite.db'))
  try {
    db.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE p (symbol TEXT, timestamp INTEGER, id TEXT, body TEXT, PRIMARY KEY (symbol, timestamp, id)) WITHOUT ROWID')
    const insert = db.prepare('INSERT INTO p VALUES (?, ?, ?, ?)')
    const load = db.transaction((rows: { symbol: string; timestamp: number; id: string }[]) => {
      for (const r of rows) insert.run(r.symbol, r.timestamp, r.id, JSON.stringify({ ...r, provider: BENCH_PROVIDER.id }))
    })
    for (const batch of generateBatches(shape, 10_000)) {
      await store.putMany(batch)
      load(batch)
    }
    db.exec('ANALYZE')
    const symbols = [...shape.symbols]
    const random = new Random(2424)
    const times = Array.from({ length: TIMES }, () => shape.from + Math.floor(random.next() * (shape.to - shape.from))).sort((a, b) => a - b)
    const distinct = [...new Set(times)]

    type Row = { id: string; timestamp: number; body: string } | undefined
    const before = db.prepare('SELECT id, timestamp, body FROM p WHERE symbol = ? AND timestamp <= ? ORDER BY timestamp DESC, id DESC LIMIT 1')
    const after = db.prepare('SELECT id, timestamp, body FROM p WHERE symbol = ? AND timestamp >= ? ORDER BY timestamp ASC, id ASC LIMIT 1')
    const sub = (op: string, order: string) => `(SELECT id || char(0) || timestamp || char(0) || body FROM p WHERE symbol = @symbol AND timestamp ${op} j.value ORDER BY timestamp ${order}, id ${order} LIMIT 1)`
    const perTimes = db.prepare(`SELECT j.value AS t, ${DIRECTION === 'after' ? 'NULL' : sub('<=', 'DESC')} AS b, ${DIRECTION === 'before' ? 'NULL' : sub('>=', 'ASC')} AS a FROM json_each(@times) AS j ORDER BY j.key`)
    /** The as-of rule on the two sides found: the direction's, `nearest` the nearer with a tie to before. */
    const choose = (t: number, b: Row, a: Row): Row => (DIRECTION === 'before' ? b : DIRECTION === 'after' ? a : !b || !a ? b ?? a : t - b.timestamp <= a.timestamp - t ? b : a)
    const entryOf = (row: Row): Entry => row && { id: row.id, timestamp: row.timestamp, record: JSON.parse(row.body) as unknown }
    const split = (hit: string | null): Row => {
      if (hit === null) return undefined
      const [id, timestamp, body] = hit.split('\0') as [string, string, string]
      return { id, timestamp: Number(timestamp), body }
    }
    const plans: Record<string, () => Entry[]> = {
      'seek per entry': () => symbols.flatMap((symbol) => distinct.map((t) => entryOf(choose(t,
        DIRECTION === 'after' ? undefined : (before.get(symbol, t) as Row),
        DIRECTION === 'before' ? undefined : (after.get(symbol, t) as Row))))),
      'json_each per symbol': () => {
        const json = JSON.stringify(distinct)
        return symbols.flatMap((symbol) => (perTimes.all({ symbol, times: json }) as { t: number; b: string | null; a: string | null }[]).map(({ t, b, a }) => entryOf(choose(t, split(b), split(a)))))
      },
    }
    const batch = () => store.batchAsOf({ symbols, times, direction: DIRECTION })
    const singles = async () => {
      const out = []
      for (const symbol of symbols) for (const to of distinct) out.push((await store.latest(symbol, { to, direction: DIRECTION }))[0])
      return out
    }

    // Equal answers first: the (id, timestamp) of every entry, from every contender.
    const b = await batch()
    const key = (e: { id: string; timestamp: number } | undefined) => e && `${e.id}@${e.timestamp}`
    const expected = JSON.stringify(symbols.flatMap((s) => distinct.map((t) => b[s]![String(t)]?.record).map(key)))
    const others: Record<string, unknown[]> = { singles: (await singles()).map(key) }
    for (const [name, plan] of Object.entries(plans)) others[name] = plan().map(key)
    for (const [name, got] of Object.entries(others)) if (JSON.stringify(got) !== expected) throw new Error(`answers differ: batch vs ${name}`)

    const time = (fn: () => unknown): Promise<number> => medianMs(fn, ROUNDS)
    const sqlite: Record<string, number> = {}
    for (const [name, plan] of Object.entries(plans)) sqlite[name] = await time(plan)
    const [bestName, bestMs] = Object.entries(sqlite).sort((x, y) => x[1] - y[1])[0]!
    const ms = { batch: await time(batch), singles: await time(singles) }
    console.log(`batch as-of (${DIRECTION}), ${SYMBOLS} symbols × ${distinct.length} times over ${HOURS} h (${shape.records} records), median of ${ROUNDS} (ms):`)
    console.log(`  batch ${ms.batch.toFixed(1)}, single calls ${ms.singles.toFixed(1)}, SQLite ${Object.entries(sqlite).map(([n, v]) => `${n} ${v.toFixed(1)}`).join(', ')}`)
    console.log(`  batch/SQLite best (${bestName}) ${(ms.batch / bestMs).toFixed(2)} (target ≤ 0.5), batch/singles ${(ms.batch / ms.singles).toFixed(2)} (target ≤ 2)`)
  } finally {
    db.close()
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
