/**
 * The SQLite baseline of issue 4, built the way a skilled user would:
 * better-sqlite3 (synchronous calls), WAL with `synchronous=NORMAL` (a
 * committed transaction survives the process being killed, like a resolved
 * `putMany`), a (symbol, timestamp, id) key — clustered (`WITHOUT ROWID`) or
 * a rowid table plus a unique index — prepared statements in `raw()` mode,
 * `ANALYZE`, `ORDER BY timestamp DESC, id DESC LIMIT ?` for the newest
 * records, one `LIMIT 1` seek per bucket for sparse sampling, a scan with
 * bucketing in JS for dense sampling, `CAST(? AS INTEGER)` for bucket
 * arithmetic in SQL (better-sqlite3 binds JS numbers as REAL) and `json_each`
 * for the latest record of several symbols. For issue 10's candles and
 * gap-filled ranges, the same table and keys: window functions, a
 * `GROUP BY` with seeks, or a key-order scan aggregated in JS; a per-bucket
 * seek with no lower bound, or a range plan plus one seek before `from`.
 *
 * Every read returns full records in the store's shape (`source` parsed,
 * `provider` and `providerPublicKey` joined from the one provider), and the
 * harness checks that they equal the store's, so the comparison is fair.
 * Where several query plans are reasonable, each is a named strategy and
 * the harness uses the fastest per case.
 *
 * better-sqlite3 lives only in bench/node_modules and is loaded with
 * `createRequire`, so the root type check passes without it installed.
 */
import { createRequire } from 'node:module'
import type { Candle, FilledPoint, PriceRecord, Provider, RecordRef, SampledRecord } from '../src/index.js'
import type { GeneratedRecord } from './generate.js'

/** Bump when the schema or the loading changes, so cached SQLite files are rebuilt. */
export const BASELINE_VERSION = 1

// The slice of better-sqlite3's API used here (it ships no types of its own).
interface Statement {
  run(...params: unknown[]): { changes: number }
  get(...params: unknown[]): unknown
  all(...params: unknown[]): unknown[]
  iterate(...params: unknown[]): IterableIterator<unknown>
  raw(toggle?: boolean): Statement
  pluck(toggle?: boolean): Statement
}
interface Database {
  prepare(sql: string): Statement
  pragma(source: string, options?: { simple?: boolean }): unknown
  exec(sql: string): Database
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void
  close(): void
  readonly open: boolean
}
type DatabaseConstructor = new (filename: string, options?: { readonly?: boolean; fileMustExist?: boolean }) => Database

let constructorCache: DatabaseConstructor | undefined
function sqlite(): DatabaseConstructor {
  constructorCache ??= createRequire(import.meta.url)('better-sqlite3') as DatabaseConstructor
  return constructorCache
}

/** The SQLite version better-sqlite3 was compiled with. */
export function sqliteVersion(): string {
  const db = new (sqlite())(':memory:')
  try {
    return db.prepare('SELECT sqlite_version()').pluck().get() as string
  } finally {
    db.close()
  }
}

/** `clustered`: WITHOUT ROWID, primary key (symbol, timestamp, id). `rowid`: rowid table + unique index. */
export type SqliteLayout = 'clustered' | 'rowid'
export const SQLITE_LAYOUTS: readonly SqliteLayout[] = ['clustered', 'rowid']

/** Strategies for the range form (interval sampling). */
export type RangeStrategy = 'seek-per-bucket' | 'scan-rows' | 'scan-keys-then-fetch' | 'sql-buckets'
export const RANGE_STRATEGIES: readonly RangeStrategy[] = ['seek-per-bucket', 'scan-rows', 'scan-keys-then-fetch', 'sql-buckets']
/** Strategies for the candles form (issue 10). */
export type CandleStrategy = 'window' | 'group-then-seek' | 'scan-js'
export const CANDLE_STRATEGIES: readonly CandleStrategy[] = ['window', 'group-then-seek', 'scan-js']
/**
 * Strategies for the gap-filled range (issue 10): `sql-fill` in one
 * statement, or a range strategy plus the seek for the record before `from`
 * (made only when the first bucket is empty) and carrying in JS.
 */
export type FillStrategy = 'sql-fill' | `${RangeStrategy}+carry`
export const FILL_STRATEGIES: readonly FillStrategy[] = ['sql-fill', ...RANGE_STRATEGIES.map((s): FillStrategy => `${s}+carry`)]
/** Strategies for the several-tokens form. */
export type SeveralStrategy = 'json_each' | 'loop'
export const SEVERAL_STRATEGIES: readonly SeveralStrategy[] = ['json_each', 'loop']

const COLUMNS = 'id, value, signature, permaweb_tx, version, source, timestamp'
type Row = [id: string, value: number, signature: string, permawebTx: string, version: string, source: string, timestamp: number]
type SymbolRow = [symbol: string, ...Row]
/** (timestamp, id, value): what a candle needs of a record. */
type RefRow = [timestamp: number, id: string, value: number]
/** A candle as SQL returns it: bucket index, count, then open, high, low and close as (id, timestamp, value). */
type CandleRow = [k: number, count: number, ...refs: (string | number)[]]
/** A filled point as SQL returns it: bucket start, carried (0/1), age, then the record. */
type FilledRow = [bucket: number, carried: number, age: number, ...Row]
/** `sql-buckets` enumerates every bucket, empty or not; past this many it is not tried. */
const SQL_BUCKETS_MAX = 100_000

export class SqliteBaseline {
  readonly layout: SqliteLayout
  readonly #db: Database
  readonly #provider: Provider
  readonly #statements = new Map<string, Statement>()

  private constructor(db: Database, layout: SqliteLayout, provider: Provider) {
    this.#db = db
    this.layout = layout
    this.#provider = provider
  }

  /** Opens (creating when missing) a baseline database file with the tuned settings. */
  static open(file: string, layout: SqliteLayout, provider: Provider): SqliteBaseline {
    const db = new (sqlite())(file)
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('temp_store = MEMORY')
    // A read-heavy user gives SQLite a real page cache and memory-mapped reads (the store's LevelDB keeps its own cache too).
    db.pragma('cache_size = -65536') // 64 MiB
    db.pragma('mmap_size = 1073741824') // 1 GiB
    const key = 'symbol TEXT NOT NULL, timestamp INTEGER NOT NULL, id TEXT NOT NULL'
    const rest = 'value REAL NOT NULL, signature TEXT NOT NULL, permaweb_tx TEXT NOT NULL, version TEXT NOT NULL, source TEXT NOT NULL'
    if (layout === 'clustered') {
      db.exec(`CREATE TABLE IF NOT EXISTS prices (${key}, ${rest}, PRIMARY KEY (symbol, timestamp, id)) WITHOUT ROWID`)
    } else {
      db.exec(`CREATE TABLE IF NOT EXISTS prices (${key}, ${rest})`)
      db.exec('CREATE UNIQUE INDEX IF NOT EXISTS prices_key ON prices (symbol, timestamp, id)')
    }
    return new SqliteBaseline(db, layout, provider)
  }

  #prepare(sql: string, raw = true): Statement {
    let statement = this.#statements.get(sql)
    if (statement === undefined) {
      statement = this.#db.prepare(sql)
      if (raw) statement.raw(true)
      this.#statements.set(sql, statement)
    }
    return statement
  }

  /** Inserts (or replaces, as the store does for an equal key) one batch in one transaction. */
  insertMany(records: readonly GeneratedRecord[]): void {
    const insert = this.#prepare(
      'INSERT OR REPLACE INTO prices (symbol, timestamp, id, value, signature, permaweb_tx, version, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      false,
    )
    this.#insertTransaction ??= this.#db.transaction((batch: readonly GeneratedRecord[]) => {
      for (const r of batch) insert.run(r.symbol, r.timestamp, r.id, r.value, r.signature, r.permawebTx, r.version, JSON.stringify(r.source))
    })
    this.#insertTransaction(records)
  }
  #insertTransaction: ((batch: readonly GeneratedRecord[]) => void) | undefined

  /** After a bulk load: statistics for the planner, and the WAL folded back into the main file. */
  finishLoad(): void {
    this.#db.exec('ANALYZE')
    this.#db.pragma('wal_checkpoint(TRUNCATE)')
  }

  close(): void {
    if (this.#db.open) this.#db.close()
  }

  #record(row: Row, symbol: string): PriceRecord {
    return {
      id: row[0],
      symbol,
      provider: this.#provider.id,
      value: row[1],
      signature: row[2],
      permawebTx: row[3],
      version: row[4],
      source: JSON.parse(row[5]) as Record<string, unknown>,
      timestamp: row[6],
      providerPublicKey: this.#provider.publicKey,
    }
  }

  // Built in one literal, not as a copy of #record plus minutes: the store builds its sampled
  // records in one step too, and a fair baseline does not pay for a copy the store avoids.
  #sampled(row: Row, symbol: string): SampledRecord {
    return {
      id: row[0],
      symbol,
      provider: this.#provider.id,
      value: row[1],
      signature: row[2],
      permawebTx: row[3],
      version: row[4],
      source: JSON.parse(row[5]) as Record<string, unknown>,
      timestamp: row[6],
      providerPublicKey: this.#provider.publicKey,
      minutes: Math.floor(row[6] / 60_000) % 60,
    }
  }

  /** Newest first, like `store.latest(symbol, { limit, offset, from, to })`. */
  latest(symbol: string, options: { limit?: number; offset?: number; from?: number; to?: number } = {}): PriceRecord[] {
    const rows = this.#prepare(
      `SELECT ${COLUMNS} FROM prices WHERE symbol = ? AND timestamp >= ? AND timestamp <= ? ` +
        'ORDER BY timestamp DESC, id DESC LIMIT ? OFFSET ?',
    ).all(symbol, options.from ?? 0, options.to ?? Number.MAX_SAFE_INTEGER, options.limit ?? 1, options.offset ?? 0) as Row[]
    return rows.map((row) => this.#record(row, symbol))
  }

  /** Like `store.several(symbols)`: the latest record of each symbol, keyed by symbol, in request order. */
  several(symbols: readonly string[], strategy: SeveralStrategy): Record<string, PriceRecord> {
    const answer: Record<string, PriceRecord> = {}
    if (strategy === 'loop') {
      const statement = this.#prepare(`SELECT ${COLUMNS} FROM prices WHERE symbol = ? ORDER BY timestamp DESC, id DESC LIMIT 1`)
      for (const symbol of symbols) {
        const row = statement.get(symbol) as Row | undefined
        if (row !== undefined) define(answer, symbol, this.#record(row, symbol))
      }
      return answer
    }
    // One statement: for each requested symbol (json_each keeps the array order), seek its newest key, then the row.
    const rows = this.#prepare(
      `SELECT j.value, p.id, p.value, p.signature, p.permaweb_tx, p.version, p.source, p.timestamp
       FROM json_each(?) AS j CROSS JOIN prices AS p
       WHERE p.symbol = j.value
         AND (p.timestamp, p.id) = (SELECT timestamp, id FROM prices WHERE symbol = j.value ORDER BY timestamp DESC, id DESC LIMIT 1)
       ORDER BY j.key`,
    ).all(JSON.stringify(symbols)) as SymbolRow[]
    for (const [symbol, ...row] of rows) define(answer, symbol, this.#record(row, symbol))
    return answer
  }

  /** Like `store.several()`: every symbol's latest record, in UTF-8 byte order of symbols. */
  all(strategy: SeveralStrategy): Record<string, PriceRecord> {
    // The distinct symbols by a skip scan of the key (one seek per symbol), not a full scan.
    const distinct = `WITH RECURSIVE symbols(symbol) AS (
         SELECT (SELECT symbol FROM prices ORDER BY symbol LIMIT 1)
         UNION ALL
         SELECT (SELECT symbol FROM prices WHERE symbol > symbols.symbol ORDER BY symbol LIMIT 1) FROM symbols WHERE symbols.symbol IS NOT NULL)`
    if (strategy === 'loop') {
      const symbols = this.#prepare(`${distinct} SELECT symbol FROM symbols WHERE symbol IS NOT NULL`, false).pluck().all() as string[]
      return this.several(symbols, 'loop')
    }
    const answer: Record<string, PriceRecord> = {}
    const rows = this.#prepare(
      `${distinct}
       SELECT s.symbol, p.id, p.value, p.signature, p.permaweb_tx, p.version, p.source, p.timestamp
       FROM symbols AS s CROSS JOIN prices AS p
       WHERE s.symbol IS NOT NULL AND p.symbol = s.symbol
         AND (p.timestamp, p.id) = (SELECT timestamp, id FROM prices WHERE symbol = s.symbol ORDER BY timestamp DESC, id DESC LIMIT 1)`,
    ).all() as SymbolRow[]
    for (const [symbol, ...row] of rows) define(answer, symbol, this.#record(row, symbol))
    return answer
  }

  /** Whether a range strategy is worth trying for this query shape. */
  static rangeStrategyApplies(strategy: RangeStrategy, from: number, to: number, interval: number): boolean {
    if (strategy !== 'sql-buckets') return true
    return Math.floor(to / interval) - Math.floor(from / interval) + 1 <= SQL_BUCKETS_MAX
  }

  /** Like `store.range(symbol, { from, to, interval })`: each bucket's latest record, oldest first. */
  range(symbol: string, from: number, to: number, interval: number, strategy: RangeStrategy): SampledRecord[] {
    switch (strategy) {
      case 'seek-per-bucket':
        return this.#rangeBySeeks(symbol, from, to, interval)
      case 'scan-rows':
        return this.#rangeByScan(symbol, from, to, interval)
      case 'scan-keys-then-fetch':
        return this.#rangeByKeyScan(symbol, from, to, interval)
      case 'sql-buckets':
        return this.#rangeBySqlBuckets(symbol, from, to, interval)
    }
  }

  /**
   * One `LIMIT 1` seek per non-empty bucket, newest bucket first: the newest
   * row at or below `hi` is its bucket's latest; the next seek starts below
   * that bucket, so empty buckets cost nothing.
   */
  #rangeBySeeks(symbol: string, from: number, to: number, interval: number): SampledRecord[] {
    const statement = this.#prepare(
      `SELECT ${COLUMNS} FROM prices WHERE symbol = ? AND timestamp >= ? AND timestamp <= ? ORDER BY timestamp DESC, id DESC LIMIT 1`,
    )
    const out: SampledRecord[] = []
    let hi = to
    while (hi >= from) {
      const row = statement.get(symbol, from, hi) as Row | undefined
      if (row === undefined) break
      out.push(this.#sampled(row, symbol))
      hi = Math.floor(row[6] / interval) * interval - 1
    }
    return out.reverse()
  }

  /** Scans every row of the range (raw arrays), keeps the last of each bucket, builds records only for those. */
  #rangeByScan(symbol: string, from: number, to: number, interval: number): SampledRecord[] {
    const rows = this.#prepare(
      `SELECT ${COLUMNS} FROM prices WHERE symbol = ? AND timestamp >= ? AND timestamp <= ? ORDER BY timestamp, id`,
    ).all(symbol, from, to) as Row[]
    const out: SampledRecord[] = []
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as Row
      const next = rows[i + 1]
      if (next === undefined || Math.floor(next[6] / interval) !== Math.floor(row[6] / interval)) out.push(this.#sampled(row, symbol))
    }
    return out
  }

  /** Scans only the key columns (covered by the key), then fetches the chosen rows by key. */
  #rangeByKeyScan(symbol: string, from: number, to: number, interval: number): SampledRecord[] {
    const keys = this.#prepare(
      'SELECT timestamp, id FROM prices WHERE symbol = ? AND timestamp >= ? AND timestamp <= ? ORDER BY timestamp, id',
    ).all(symbol, from, to) as [number, string][]
    const fetch = this.#prepare(`SELECT ${COLUMNS} FROM prices WHERE symbol = ? AND timestamp = ? AND id = ?`)
    const out: SampledRecord[] = []
    for (let i = 0; i < keys.length; i++) {
      const [timestamp, id] = keys[i] as [number, string]
      const next = keys[i + 1]
      if (next === undefined || Math.floor(next[0] / interval) !== Math.floor(timestamp / interval)) {
        out.push(this.#sampled(fetch.get(symbol, timestamp, id) as Row, symbol))
      }
    }
    return out
  }

  /** One statement: a recursive CTE enumerates the buckets (integer arithmetic via CAST) and seeks each one's latest. */
  #rangeBySqlBuckets(symbol: string, from: number, to: number, interval: number): SampledRecord[] {
    const rows = this.#prepare(
      `WITH RECURSIVE
         q(symbol, lo, hi, step) AS (SELECT @symbol, CAST(@from AS INTEGER), CAST(@to AS INTEGER), CAST(@interval AS INTEGER)),
         b(k) AS (SELECT lo / step FROM q UNION ALL SELECT k + 1 FROM b, q WHERE k < hi / step)
       SELECT p.id, p.value, p.signature, p.permaweb_tx, p.version, p.source, p.timestamp
       FROM q CROSS JOIN b CROSS JOIN prices AS p
       WHERE p.symbol = q.symbol
         AND (p.timestamp, p.id) = (
           SELECT timestamp, id FROM prices
           WHERE symbol = q.symbol AND timestamp >= max(q.lo, b.k * q.step) AND timestamp <= min(q.hi, b.k * q.step + q.step - 1)
           ORDER BY timestamp DESC, id DESC LIMIT 1)
       ORDER BY b.k`,
    ).all({ symbol, from, to, interval }) as Row[]
    return rows.map((row) => this.#sampled(row, symbol))
  }

  /**
   * Like `store.candles(symbol, { from, to, interval })`: per non-empty
   * bucket the first and last record in (timestamp, id) order, the greatest
   * and least value (equal values: the later record) and the count.
   */
  candles(symbol: string, from: number, to: number, interval: number, strategy: CandleStrategy): Candle[] {
    switch (strategy) {
      case 'window':
        return this.#candlesByWindows(symbol, from, to, interval)
      case 'group-then-seek':
        return this.#candlesByGroupThenSeek(symbol, from, to, interval)
      case 'scan-js':
        return this.#candlesByScan(symbol, from, to, interval)
    }
  }

  /**
   * One statement: `ROW_NUMBER()` over the bucket in the four orders (open:
   * first by (timestamp, id); close: last; high: greatest value, ties to the
   * later record; low likewise), then one row per bucket with `count(*)`.
   */
  #candlesByWindows(symbol: string, from: number, to: number, interval: number): Candle[] {
    const rows = this.#prepare(
      `WITH ranked AS (
         SELECT timestamp / @interval AS k, timestamp, id, value,
           row_number() OVER (PARTITION BY timestamp / @interval ORDER BY timestamp, id) AS o,
           row_number() OVER (PARTITION BY timestamp / @interval ORDER BY value DESC, timestamp DESC, id DESC) AS h,
           row_number() OVER (PARTITION BY timestamp / @interval ORDER BY value, timestamp DESC, id DESC) AS l,
           row_number() OVER (PARTITION BY timestamp / @interval ORDER BY timestamp DESC, id DESC) AS c
         FROM prices WHERE symbol = @symbol AND timestamp >= @from AND timestamp <= @to)
       SELECT k, count(*),
         max(CASE WHEN o = 1 THEN id END), max(CASE WHEN o = 1 THEN timestamp END), max(CASE WHEN o = 1 THEN value END),
         max(CASE WHEN h = 1 THEN id END), max(CASE WHEN h = 1 THEN timestamp END), max(CASE WHEN h = 1 THEN value END),
         max(CASE WHEN l = 1 THEN id END), max(CASE WHEN l = 1 THEN timestamp END), max(CASE WHEN l = 1 THEN value END),
         max(CASE WHEN c = 1 THEN id END), max(CASE WHEN c = 1 THEN timestamp END), max(CASE WHEN c = 1 THEN value END)
       FROM ranked GROUP BY k ORDER BY k`,
    ).all({ symbol, from, to, interval: integer(interval) }) as CandleRow[]
    return rows.map((row) => candleOf(row, interval))
  }

  /**
   * One statement: a `GROUP BY` pass for count, first and last timestamp,
   * greatest and least value per bucket, then per bucket a key seek for the
   * open and the close and a backward search of the bucket for the latest
   * record holding the high and the low.
   */
  #candlesByGroupThenSeek(symbol: string, from: number, to: number, interval: number): Candle[] {
    const ref = (alias: string): string => `${alias}.id, ${alias}.timestamp, ${alias}.value`
    const inBucket = 'symbol = @symbol AND timestamp >= max(@from, g.k * @interval) AND timestamp <= min(@to, g.k * @interval + @interval - 1)'
    const rows = this.#prepare(
      `WITH g AS (
         SELECT timestamp / @interval AS k, count(*) AS n, min(timestamp) AS t0, max(timestamp) AS t1, max(value) AS hi, min(value) AS lo
         FROM prices WHERE symbol = @symbol AND timestamp >= @from AND timestamp <= @to GROUP BY k)
       SELECT g.k, g.n, ${ref('o')}, ${ref('h')}, ${ref('l')}, ${ref('c')}
       FROM g
       CROSS JOIN prices AS o ON o.symbol = @symbol
         AND (o.timestamp, o.id) = (SELECT timestamp, id FROM prices WHERE symbol = @symbol AND timestamp = g.t0 ORDER BY id LIMIT 1)
       CROSS JOIN prices AS h ON h.symbol = @symbol
         AND (h.timestamp, h.id) = (SELECT timestamp, id FROM prices WHERE ${inBucket} AND value = g.hi ORDER BY timestamp DESC, id DESC LIMIT 1)
       CROSS JOIN prices AS l ON l.symbol = @symbol
         AND (l.timestamp, l.id) = (SELECT timestamp, id FROM prices WHERE ${inBucket} AND value = g.lo ORDER BY timestamp DESC, id DESC LIMIT 1)
       CROSS JOIN prices AS c ON c.symbol = @symbol
         AND (c.timestamp, c.id) = (SELECT timestamp, id FROM prices WHERE symbol = @symbol AND timestamp = g.t1 ORDER BY id DESC LIMIT 1)
       ORDER BY g.k`,
    ).all({ symbol, from, to, interval: integer(interval) }) as CandleRow[]
    return rows.map((row) => candleOf(row, interval))
  }

  /** Scans (timestamp, id, value) of the range in key order and builds the candles in JS. */
  #candlesByScan(symbol: string, from: number, to: number, interval: number): Candle[] {
    const rows = this.#prepare(
      'SELECT timestamp, id, value FROM prices WHERE symbol = ? AND timestamp >= ? AND timestamp <= ? ORDER BY timestamp, id',
    ).all(symbol, from, to) as RefRow[]
    const out: Candle[] = []
    const ref = (row: RefRow): RecordRef => ({ id: row[1], timestamp: row[0], value: row[2] })
    let first = 0
    while (first < rows.length) {
      const k = Math.floor((rows[first] as RefRow)[0] / interval)
      let high = first
      let low = first
      let last = first
      for (let i = first + 1; i < rows.length && Math.floor((rows[i] as RefRow)[0] / interval) === k; i++) {
        const value = (rows[i] as RefRow)[2]
        if (value >= (rows[high] as RefRow)[2]) high = i
        if (value <= (rows[low] as RefRow)[2]) low = i
        last = i
      }
      const candle: Candle = {
        bucket: k * interval,
        open: ref(rows[first] as RefRow),
        high: ref(rows[high] as RefRow),
        low: ref(rows[low] as RefRow),
        close: ref(rows[last] as RefRow),
        count: last - first + 1,
      }
      out.push(candle)
      first = last + 1
    }
    return out
  }

  /**
   * Like `store.range(symbol, { from, to, interval, fill: 'prev' })`: every
   * bucket of `from..to` with the latest record at or before its end
   * (clipped to `to`), carried when it is not from the bucket's part of the
   * range; buckets with nothing at or before their end are left out.
   */
  filledRange(symbol: string, from: number, to: number, interval: number, strategy: FillStrategy): FilledPoint[] {
    if (strategy === 'sql-fill') return this.#fillBySql(symbol, from, to, interval)
    const range = strategy.slice(0, -'+carry'.length) as RangeStrategy
    return this.#fillInJs(symbol, from, to, interval, this.range(symbol, from, to, interval, range))
  }

  /** Whether a fill strategy is worth trying for this query shape (as its range strategy). */
  static fillStrategyApplies(strategy: FillStrategy, from: number, to: number, interval: number): boolean {
    const range: RangeStrategy = strategy === 'sql-fill' ? 'sql-buckets' : (strategy.slice(0, -'+carry'.length) as RangeStrategy)
    return SqliteBaseline.rangeStrategyApplies(range, from, to, interval)
  }

  /**
   * One statement: a recursive CTE lists the buckets and each seeks the
   * latest record at or before its end (clipped to `to`) with no lower bound,
   * so an empty bucket finds the record to carry (for the first buckets, the
   * one before `from`); `carried` and `age` are computed in SQL.
   */
  #fillBySql(symbol: string, from: number, to: number, interval: number): FilledPoint[] {
    const rows = this.#prepare(
      `WITH RECURSIVE
         q(symbol, lo, hi, step) AS (SELECT @symbol, CAST(@from AS INTEGER), CAST(@to AS INTEGER), CAST(@interval AS INTEGER)),
         b(k) AS (SELECT lo / step FROM q UNION ALL SELECT k + 1 FROM b, q WHERE k < hi / step)
       SELECT b.k * q.step, p.timestamp < max(q.lo, b.k * q.step), min(q.hi, b.k * q.step + q.step - 1) - p.timestamp,
         p.id, p.value, p.signature, p.permaweb_tx, p.version, p.source, p.timestamp
       FROM q CROSS JOIN b CROSS JOIN prices AS p
       WHERE p.symbol = q.symbol
         AND (p.timestamp, p.id) = (
           SELECT timestamp, id FROM prices
           WHERE symbol = q.symbol AND timestamp <= min(q.hi, b.k * q.step + q.step - 1)
           ORDER BY timestamp DESC, id DESC LIMIT 1)
       ORDER BY b.k`,
    ).all({ symbol, from, to, interval }) as FilledRow[]
    return rows.map(([bucket, carried, age, ...row]) => ({ bucket, carried: carried === 1, age, record: this.#sampled(row, symbol) }))
  }

  /**
   * Gap filling in JS over a range's records (one per non-empty bucket,
   * oldest first): an empty bucket carries the previous one's record, or,
   * before the first, the record before `from`, found with one seek made
   * only when the first bucket is empty.
   */
  #fillInJs(symbol: string, from: number, to: number, interval: number, records: readonly SampledRecord[]): FilledPoint[] {
    const firstBucket = Math.floor(from / interval)
    const lastBucket = Math.floor(to / interval)
    let held: SampledRecord | undefined
    const first = records[0]
    if (first === undefined || Math.floor(first.timestamp / interval) > firstBucket) {
      const row = this.#prepare(
        `SELECT ${COLUMNS} FROM prices WHERE symbol = ? AND timestamp < ? ORDER BY timestamp DESC, id DESC LIMIT 1`,
      ).get(symbol, from) as Row | undefined
      if (row !== undefined) held = this.#sampled(row, symbol)
    }
    const out: FilledPoint[] = []
    let next = 0
    for (let k = firstBucket; k <= lastBucket; k++) {
      const own = records[next]
      const carried = own === undefined || Math.floor(own.timestamp / interval) !== k
      if (!carried) {
        held = own
        next++
      }
      if (held === undefined) continue
      const bucket = k * interval
      out.push({ bucket, carried, age: Math.min(to, bucket + interval - 1) - held.timestamp, record: held })
    }
    return out
  }

  /** Like `store.rangeStream(symbol, { from, to, interval })`, one record at a time. */
  *rangeStream(symbol: string, from: number, to: number, interval: number): Generator<SampledRecord> {
    const statement = this.#prepare(
      `SELECT ${COLUMNS} FROM prices WHERE symbol = ? AND timestamp >= ? AND timestamp <= ? ORDER BY timestamp, id`,
    )
    let pending: Row | undefined
    for (const row of statement.iterate(symbol, from, to) as IterableIterator<Row>) {
      if (pending !== undefined && Math.floor(row[6] / interval) !== Math.floor(pending[6] / interval)) yield this.#sampled(pending, symbol)
      pending = row
    }
    if (pending !== undefined) yield this.#sampled(pending, symbol)
  }

  /** The query plan of a statement, for the report (EXPLAIN QUERY PLAN details). */
  explain(sql: string, ...params: unknown[]): string[] {
    return (this.#db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((row) => row.detail)
  }
}

/** A JS number bound as an INTEGER (better-sqlite3 binds numbers as REAL, which would make `/` divide exactly). */
function integer(value: number): bigint {
  return BigInt(value)
}

/** A candle from its SQL row: bucket index, count, then open, high, low and close as (id, timestamp, value). */
function candleOf(row: CandleRow, interval: number): Candle {
  const ref = (at: number): RecordRef => ({ id: row[at] as string, timestamp: row[at + 1] as number, value: row[at + 2] as number })
  return { bucket: row[0] * interval, open: ref(2), high: ref(5), low: ref(8), close: ref(11), count: row[1] }
}

function define(target: Record<string, PriceRecord>, key: string, value: PriceRecord): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
