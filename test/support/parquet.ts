/**
 * Parquet exports read back by DuckDB (`@duckdb/node-api`), independently of
 * the writer (src/adapters/http/core/parquet-export.ts), for the export tests
 * of the CLI and of HTTP and the DuckDB recipe's test.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api'

/** An in-memory DuckDB connection; `close()` ends it. */
export async function duckdb(): Promise<{ connection: DuckDBConnection; close(): void }> {
  const instance = await DuckDBInstance.create(':memory:')
  const connection = await instance.connect()
  return {
    connection,
    close() {
      connection.closeSync()
      instance.closeSync()
    },
  }
}

/** Rows of a query as plain JS objects (BIGINT as bigint). */
export async function rowsOf(connection: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[]
}

/** The columns of a Parquet file as DuckDB types them: name → type. */
export async function parquetTypes(connection: DuckDBConnection, path: string): Promise<Record<string, string>> {
  const rows = await rowsOf(connection, `DESCRIBE SELECT * FROM read_parquet(${quote(path)})`)
  return Object.fromEntries(rows.map((row) => [row.column_name as string, row.column_type as string]))
}

/** How many row groups a Parquet file holds, and the rows of each. */
export async function rowGroupsOf(connection: DuckDBConnection, path: string): Promise<number[]> {
  const rows = await rowsOf(connection, `SELECT row_group_id, any_value(row_group_num_rows) AS n FROM parquet_metadata(${quote(path)}) GROUP BY ALL ORDER BY row_group_id`)
  return rows.map((row) => Number(row.n))
}

/**
 * The records of a whole-record Parquet export (no `fields`), rebuilt from
 * what DuckDB reads, in file order: the typed columns back to their JSON
 * forms (signature bytes as standard base64, EVM signature bytes as `0x`
 * and lower-case hex, the timestamp as epoch ms, `source` parsed), the
 * `extra` object's fields added, and the file's `providerPublicKey`
 * metadata joined: what the NDJSON export of the same selection holds.
 */
export async function recordsOfParquet(connection: DuckDBConnection, path: string): Promise<Record<string, unknown>[]> {
  const kv = await rowsOf(connection, `SELECT decode(key) AS key, decode(value) AS value FROM parquet_kv_metadata(${quote(path)})`)
  const providerPublicKey = kv.find((row) => row.key === 'providerPublicKey')?.value
  const rows = await rowsOf(connection, `
    SELECT id, symbol, provider, value,
      to_base64(signature) AS signature,
      '0x' || lower(hex(liteEvmSignature)) AS liteEvmSignature,
      '0x' || lower(hex(evmSignature)) AS evmSignature,
      permawebTx, version, source::VARCHAR AS source, epoch_ms(timestamp)::DOUBLE AS timestamp, extra::VARCHAR AS extra
    FROM read_parquet(${quote(path)})`)
  return rows.map((row) => {
    const record: Record<string, unknown> = {}
    for (const field of ['id', 'symbol', 'provider', 'value', 'signature', 'liteEvmSignature', 'evmSignature', 'permawebTx', 'version']) {
      if (row[field] !== null) record[field] = row[field]
    }
    record.source = JSON.parse(row.source as string)
    record.timestamp = row.timestamp
    if (row.extra !== null) {
      for (const [field, value] of Object.entries(JSON.parse(row.extra as string) as object)) {
        Object.defineProperty(record, field, { value, enumerable: true, writable: true, configurable: true })
      }
    }
    if (providerPublicKey !== undefined) record.providerPublicKey = providerPublicKey
    return record
  })
}

/** A SQL string literal. */
export function quote(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}
