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
 * for the latest record of several symbols.
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
import type { PriceRecord, Provider, SampledRecord } from '../src/index.js'
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
/** Strategies for the several-tokens form. */
export type SeveralStrategy = 'json_each' | 'loop'
export const SEVERAL_STRATEGIES: readonly SeveralStrategy[] = ['json_each', 'loop']

const COLUMNS = 'id, value, signature, permaweb_tx, version, source, timestamp'
type Row = [id: string, value: number, signature: string, permawebTx: string, version: string, source: string, timestamp: number]
type SymbolRow = [symbol: string, ...Row]
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

function define(target: Record<string, PriceRecord>, key: string, value: PriceRecord): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
