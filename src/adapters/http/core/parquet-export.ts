/**
 * The Parquet export format, shared by `price-store export --format parquet`
 * and `GET /prices/export?format=parquet` so both write the same bytes.
 *
 * Columns, typed (see docs/cli.md, "Parquet"):
 * - `id`, `symbol`, `provider`: STRING;
 * - `value`: DOUBLE (`-0` kept);
 * - `signature`: BINARY, the bytes of the Arweave signature's base64;
 *   `liteEvmSignature`, `evmSignature`: BINARY, the 65 bytes of their
 *   `0x` hex (null when the record has none);
 * - `permawebTx`, `version`: STRING;
 * - `source`: STRING annotated JSON, the exact JSON text NDJSON holds;
 * - `timestamp`: INT64 TIMESTAMP (milliseconds, adjusted to UTC);
 * - `extra`: STRING annotated JSON, one object with every other field
 *   (null when none).
 * A typed column holds a value only when it gives that value back exactly:
 * a signature whose text is not the canonical encoding of its bytes
 * (standard base64 with padding; `0x` and 130 lower-case hex digits), or a
 * `permawebTx` or `version` that is not well-formed Unicode, leaves its
 * column null and goes into `extra` as the text it is, so the records can
 * always be rebuilt. The provider's public key, the same on every row, is in
 * the file's key-value metadata (`providerPublicKey`), not a column.
 *
 * Rows are held only until a row group is complete ({@link ROW_GROUP_ROWS}
 * rows or about {@link ROW_GROUP_BYTES} bytes of cells, whichever comes
 * first); each group is encoded (hyparquet-writer, Snappy pages) and handed
 * out as bytes, so memory stays bounded however long the export.
 */
import { ByteWriter, ParquetWriter, type SchemaElement } from 'hyparquet-writer'
import { toExactJson } from '../../../rules/exact-json.js'
import { fail } from '../../../rules/query-errors.js'
import type { FieldSelection, PriceRecord } from '../../../types.js'

/** Rows a row group holds at most. */
export const ROW_GROUP_ROWS = 65_536
/** Bytes of cell data past which a row group is closed before {@link ROW_GROUP_ROWS} (a record of the RedStone shape is about 1.2 kB of cells: about 7,000 records a group). Small groups bound what an export holds, and how long encoding one holds the event loop (docs/benchmarks.md, "Parquet export"). */
export const ROW_GROUP_BYTES = 8 * 1024 * 1024

/** The `content-type` of a Parquet export (IANA's registration for Parquet). */
export const PARQUET_CONTENT_TYPE = 'application/vnd.apache.parquet'

/** Every Parquet column, in file order. */
export const PARQUET_COLUMNS = [
  'id', 'symbol', 'provider', 'value', 'signature', 'liteEvmSignature', 'evmSignature', 'permawebTx', 'version', 'source', 'timestamp', 'extra',
] as const
export type ParquetColumn = (typeof PARQUET_COLUMNS)[number]

/** The column that holds no one field (the fields without a column of their own): a drop list keeps it, a keep list only with a column that may overflow into it. */
const UNNAMED: ReadonlySet<string> = new Set(['extra'])
/** Columns whose value may not fit the column's type and then goes into `extra`. */
const OVERFLOWING: ReadonlySet<string> = new Set(['signature', 'liteEvmSignature', 'evmSignature', 'permawebTx', 'version'])
/** Record fields that have a column of their own (the rest go into `extra`). */
const TYPED_FIELDS: ReadonlySet<string> = new Set(PARQUET_COLUMNS.filter((column) => column !== 'extra'))
/**
 * How each column is written where the writer's defaults (Snappy, a
 * dictionary tried, min/max statistics) do not suit it, as measured on
 * RedStone-shaped records (bench/parquet-export.bench.ts): signatures are
 * random bytes, which neither Snappy nor a dictionary makes smaller, so
 * they are written plain and uncompressed; prices rarely repeat, so a
 * dictionary costs time for nothing; no statistics for signatures and JSON,
 * whose min/max help no reader skip a row group.
 */
const COLUMN_OPTIONS: Readonly<Partial<Record<ParquetColumn, { encoding?: 'PLAIN'; codec?: 'UNCOMPRESSED'; statistics?: false }>>> = {
  value: { encoding: 'PLAIN' },
  signature: { encoding: 'PLAIN', codec: 'UNCOMPRESSED', statistics: false },
  liteEvmSignature: { encoding: 'PLAIN', codec: 'UNCOMPRESSED', statistics: false },
  evmSignature: { encoding: 'PLAIN', codec: 'UNCOMPRESSED', statistics: false },
  source: { statistics: false },
  extra: { statistics: false },
}
/** Fields a record carries that are not stored per record: the provider key (in the file's metadata instead). */
const NOT_STORED = 'providerPublicKey'

const SCHEMA: Readonly<Record<ParquetColumn, SchemaElement>> = {
  id: { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'REQUIRED' },
  symbol: { name: 'symbol', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'REQUIRED' },
  provider: { name: 'provider', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'REQUIRED' },
  value: { name: 'value', type: 'DOUBLE', repetition_type: 'REQUIRED' },
  signature: { name: 'signature', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
  liteEvmSignature: { name: 'liteEvmSignature', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
  evmSignature: { name: 'evmSignature', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
  permawebTx: { name: 'permawebTx', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'OPTIONAL' },
  version: { name: 'version', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'OPTIONAL' },
  // Bytes already (the exact JSON text, -0 kept): the JSON converted type is added in the footer only (see finish()).
  source: { name: 'source', type: 'BYTE_ARRAY', logical_type: { type: 'JSON' }, repetition_type: 'REQUIRED' },
  timestamp: {
    name: 'timestamp', type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' }, repetition_type: 'REQUIRED',
  },
  extra: { name: 'extra', type: 'BYTE_ARRAY', logical_type: { type: 'JSON' }, repetition_type: 'OPTIONAL' },
}

/**
 * The Parquet columns a `fields` selection keeps: the columns of the fields
 * it keeps, as CSV does; `liteEvmSignature`, `evmSignature` and `extra`
 * (fields a selection cannot name) with a drop list, not with a keep list,
 * except that a keep list that keeps `signature`, `permawebTx` or `version`
 * keeps `extra` too, for a value of theirs that must go there (see above).
 */
export function parquetColumns(selection: FieldSelection | undefined): readonly ParquetColumn[] {
  if (selection === undefined) return PARQUET_COLUMNS
  const named = new Set(selection.names)
  if (selection.mode === 'drop') return PARQUET_COLUMNS.filter((column) => UNNAMED.has(column) || !named.has(column))
  const kept = PARQUET_COLUMNS.filter((column) => !UNNAMED.has(column) && named.has(column))
  return kept.some((column) => OVERFLOWING.has(column)) ? [...kept, 'extra'] : kept
}

/**
 * Checks that a `fields` selection keeps at least one Parquet column (a
 * Parquet file needs one): `fields=providerPublicKey` keeps none (the key is
 * in the file's metadata), nor does `minutes` (no stored field).
 * @param parameter the name errors give (`fields`, or the CLI's `--fields`)
 * @throws PriceStoreError `PRICE_INVALID_QUERY`
 */
export function checkParquetSelection(parameter: string, selection: FieldSelection | undefined): void {
  if (parquetColumns(selection).length > 0) return
  const names = (selection as FieldSelection).names.join(',')
  throw fail('PRICE_INVALID_QUERY', parameter, `${parameter}=${names} keeps no column of a Parquet export: name a stored field too (providerPublicKey is in the file's metadata, minutes is not stored)`)
}

/** What {@link ParquetExport} is built with: row-group bounds (the defaults suit an export; tests make them small). */
export interface ParquetExportOptions {
  readonly rowGroupRows?: number
  readonly rowGroupBytes?: number
}

const CANONICAL_EVM = /^0x[0-9a-f]{130}$/

/**
 * One Parquet file written record by record: {@link add} takes a record and
 * gives the bytes of a row group when one is complete (the file's first
 * bytes with the first), {@link finish} gives the rest (the last group and
 * the footer). The bytes given are the caller's to keep (not reused).
 */
export class ParquetExport {
  readonly #columns: readonly ParquetColumn[]
  readonly #keeps: Readonly<Record<ParquetColumn, boolean>>
  /** Whether the fields a selection cannot name go into `extra` (whole records and drop lists), not only overflow. */
  readonly #extraFields: boolean
  readonly #keepsProviderKey: boolean
  readonly #rowGroupRows: number
  readonly #rowGroupBytes: number
  readonly #writer = new ByteWriter(1024 * 1024)
  readonly #parquet: ParquetWriter
  #data: Record<ParquetColumn, unknown[]>
  #rows = 0
  #bytes = 0
  #providerPublicKey: string | undefined

  /** @throws PriceStoreError `PRICE_INVALID_QUERY` for a selection that keeps no column (see {@link checkParquetSelection}) */
  constructor(selection: FieldSelection | undefined, options: ParquetExportOptions = {}) {
    checkParquetSelection('fields', selection)
    this.#columns = parquetColumns(selection)
    const kept = new Set<string>(this.#columns)
    this.#keeps = Object.fromEntries(PARQUET_COLUMNS.map((column) => [column, kept.has(column)])) as Record<ParquetColumn, boolean>
    this.#extraFields = selection === undefined || selection.mode === 'drop'
    this.#keepsProviderKey = selection === undefined || selection.names.includes(NOT_STORED) === (selection.mode === 'keep')
    this.#rowGroupRows = options.rowGroupRows ?? ROW_GROUP_ROWS
    this.#rowGroupBytes = options.rowGroupBytes ?? ROW_GROUP_BYTES
    // Copies: finish() marks the JSON columns in them (see there).
    const schema: SchemaElement[] = [{ name: 'root', num_children: this.#columns.length }, ...this.#columns.map((column) => ({ ...SCHEMA[column] }))]
    this.#parquet = new ParquetWriter({ writer: this.#writer, schema, createdBy: 'price-store' })
    this.#data = this.#emptyData()
  }

  /** Adds one record; the bytes of a completed row group (and what preceded it), or `undefined` when none completed. */
  add(record: PriceRecord): Uint8Array | undefined {
    if (this.#providerPublicKey === undefined && typeof record.providerPublicKey === 'string') this.#providerPublicKey = record.providerPublicKey
    this.#addRow(record)
    this.#rows++
    if (this.#rows < this.#rowGroupRows && this.#bytes < this.#rowGroupBytes) return undefined
    this.#writeGroup()
    return this.#take()
  }

  /** Ends the file: the bytes of the last row group, if any, and of the footer. */
  finish(): Uint8Array {
    if (this.#rows > 0) this.#writeGroup()
    if (this.#providerPublicKey !== undefined && this.#keepsProviderKey) {
      this.#parquet.kvMetadata = [{ key: 'providerPublicKey', value: this.#providerPublicKey }]
    }
    // The JSON columns are written as the bytes given (the exact JSON text); the writer would encode a column
    // declared JSON again, losing -0, so they are declared JSON only now, in the footer (readers such as DuckDB
    // know JSON by its converted type).
    for (const element of this.#parquet.schema) if (element.logical_type?.type === 'JSON') element.converted_type = 'JSON'
    void this.#parquet.finish()
    return this.#take()
  }

  #emptyData(): Record<ParquetColumn, unknown[]> {
    return Object.fromEntries(this.#columns.map((column) => [column, []])) as unknown as Record<ParquetColumn, unknown[]>
  }

  #writeGroup(): void {
    const columnData = this.#columns.map((name) => ({ name, data: this.#data[name], ...COLUMN_OPTIONS[name] }))
    void this.#parquet.write({ columnData, rowGroupSize: this.#rows })
    this.#data = this.#emptyData()
    this.#rows = 0
    this.#bytes = 0
  }

  /** The bytes written since the last take, copied out; the writer's buffer is reused (its offset keeps counting the file). */
  #take(): Uint8Array {
    const bytes = this.#writer.getBytes().slice()
    this.#writer.index = 0
    return bytes
  }

  #addRow(record: PriceRecord): void {
    const keeps = this.#keeps
    const data = this.#data
    let extra: Record<string, unknown> | undefined
    const overflow = (field: string, value: unknown): void => {
      extra ??= {}
      // defineProperty: an extra field may be named __proto__.
      Object.defineProperty(extra, field, { value, enumerable: true, writable: true, configurable: true })
    }
    if (keeps.id) this.#push('id', record.id)
    if (keeps.symbol) this.#push('symbol', record.symbol)
    if (keeps.provider) this.#push('provider', record.provider)
    if (keeps.value) {
      data.value.push(record.value)
      this.#bytes += 8
    }
    if (keeps.signature) {
      const bytes = base64Bytes(record.signature)
      if (bytes === undefined && record.signature !== undefined) overflow('signature', record.signature)
      this.#push('signature', bytes)
    }
    if (keeps.liteEvmSignature) this.#push('liteEvmSignature', this.#evm(record, 'liteEvmSignature', overflow))
    if (keeps.evmSignature) this.#push('evmSignature', this.#evm(record, 'evmSignature', overflow))
    for (const field of ['permawebTx', 'version'] as const) {
      if (!keeps[field]) continue
      const text = record[field]
      const fits = typeof text === 'string' && text.isWellFormed()
      if (!fits) overflow(field, text)
      this.#push(field, fits ? text : undefined)
    }
    if (keeps.source) this.#push('source', Buffer.from(toExactJson(record.source)))
    if (keeps.timestamp) {
      data.timestamp.push(record.timestamp)
      this.#bytes += 8
    }
    if (this.#extraFields) {
      for (const field of Object.keys(record)) {
        if (TYPED_FIELDS.has(field) || field === NOT_STORED) continue
        overflow(field, record[field])
      }
    }
    if (!keeps.extra) return
    this.#push('extra', extra === undefined ? undefined : Buffer.from(toExactJson(extra)))
  }

  /** An EVM signature's 65 bytes, or `undefined` when absent or not canonical (then sent to `extra`). */
  #evm(record: PriceRecord, field: 'liteEvmSignature' | 'evmSignature', overflow: (field: string, value: unknown) => void): Uint8Array | undefined {
    if (!Object.hasOwn(record, field)) return undefined
    const value = record[field]
    if (typeof value === 'string' && value.length === 132 && CANONICAL_EVM.test(value)) return Buffer.from(value.slice(2), 'hex')
    overflow(field, value)
    return undefined
  }

  #push(column: ParquetColumn, value: string | Uint8Array | undefined): void {
    this.#data[column].push(value)
    // Strings count as their UTF-16 length: a bound, not an exact size.
    if (value !== undefined) this.#bytes += value.length
  }
}

/** The bytes of a signature in standard base64 with padding, or `undefined` when it is absent or not that (decoding then encoding must give the text back). */
function base64Bytes(text: string | undefined): Uint8Array | undefined {
  if (text === undefined || text.length % 4 !== 0) return undefined
  const bytes = Buffer.from(text, 'base64')
  return bytes.toString('base64') === text ? bytes : undefined
}
