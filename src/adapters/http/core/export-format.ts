/**
 * The export formats, shared by `price-store export` and `GET /prices/export`
 * so both write the same bytes: NDJSON records, CSV rows under one header,
 * or a Parquet file (parquet-export.ts).
 */
import { fieldSelector } from '../../../engine/field-selection.js'
import { toExactJson } from '../../../rules/exact-json.js'
import type { FieldSelection, PriceRecord } from '../../../types.js'
import { ParquetExport } from './parquet-export.js'

/** The formats `price-store export` and `GET /prices/export` write. */
export const EXPORT_FORMATS = ['ndjson', 'csv', 'parquet'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]
/** The text formats, written line by line with {@link exportHeader} and {@link recordFormatter}. */
export type TextExportFormat = Exclude<ExportFormat, 'parquet'>

/** Text gathered before it is handed out, so a large export is not one write per record. */
export const EXPORT_FLUSH_CHARS = 64 * 1024

/**
 * An export's body, built record by record in pieces of bounded size: text
 * of about {@link EXPORT_FLUSH_CHARS} characters (NDJSON, CSV), or a
 * Parquet row group's bytes. Both `price-store export` and
 * `GET /prices/export` write its pieces, in order, and nothing else.
 */
export interface ExportEncoder {
  /** Adds a record; a piece to write now, or `undefined` while the next one fills. */
  add(record: PriceRecord): string | Uint8Array | undefined
  /** The last piece (for Parquet, the last row group and the footer); call once, after the last record. */
  end(): string | Uint8Array
}

/** The {@link ExportEncoder} of a format, with a `fields` selection (see {@link recordFormatter}, parquet-export.ts's `parquetColumns`). */
export function exportEncoder(format: ExportFormat, selection: FieldSelection | undefined): ExportEncoder {
  if (format === 'parquet') {
    const parquet = new ParquetExport(selection)
    return { add: (record) => parquet.add(record), end: () => parquet.finish() }
  }
  const line = recordFormatter(format, selection)
  let pending = exportHeader(format, selection)
  return {
    add(record) {
      pending += line(record)
      if (pending.length < EXPORT_FLUSH_CHARS) return undefined
      const piece = pending
      pending = ''
      return piece
    },
    end() {
      const piece = pending
      pending = ''
      return piece
    },
  }
}

/** The stored fields, in the order CSV columns hold them; any other field goes, as a JSON object, in `extra`. */
const CSV_FIELDS = ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp'] as const
/** Fields a record carries that are not stored per record: the store's provider key (see `stats`). */
const NOT_STORED = new Set(['providerPublicKey'])

/** The text before the first record: CSV's header line (its columns chosen by `selection`, see {@link recordFormatter}), nothing for NDJSON. */
export function exportHeader(format: TextExportFormat, selection?: FieldSelection): string {
  return format === 'csv' ? `${csvColumns(selection).join(',')}\r\n` : ''
}

/**
 * {@link formatRecord} with a `--fields` selection (as `/prices`'s
 * `fields`): NDJSON lines keep the selected fields; CSV keeps the columns
 * of the selected stored fields, and `extra` when the selection keeps
 * fields without a column of their own (a drop list does, a keep list when
 * it names an EVM signature), holding only those. Without a
 * selection, {@link formatRecord} itself.
 */
export function recordFormatter(format: TextExportFormat, selection: FieldSelection | undefined): (record: PriceRecord) => string {
  if (selection === undefined) return (record) => formatRecord(format, record)
  const select = fieldSelector(selection)
  if (format === 'ndjson') return (record) => `${toExactJson(select(record))}\n`
  const kept = csvColumns(selection).map((column) => CSV_COLUMNS.indexOf(column))
  return (record) => {
    // Selected first: `extra` then holds only the selected fields without a column (an EVM signature kept or dropped).
    const cells = csvCells(select(record))
    return `${kept.map((index) => csvCell(cells[index] as string)).join(',')}\r\n`
  }
}

/** Every CSV column, in order: the stored fields, then `extra`. */
const CSV_COLUMNS: readonly string[] = [...CSV_FIELDS, 'extra']

/** The CSV columns a selection keeps. */
function csvColumns(selection: FieldSelection | undefined): readonly string[] {
  if (selection === undefined) return CSV_COLUMNS
  const named = new Set(selection.names)
  const keep = selection.mode === 'keep'
  // A keep list keeps `extra` when it names a stored field that has no column of its own (an EVM signature).
  const keepsExtra = !keep || selection.names.some((name) => !(CSV_COLUMNS as readonly string[]).includes(name) && !NOT_STORED.has(name) && name !== 'minutes')
  return CSV_COLUMNS.filter((column) => (column === 'extra' ? keepsExtra : named.has(column) === keep))
}

/**
 * One record as a line. NDJSON: the record as `latest()` returns it, with
 * `-0` kept, which `price-store import` reads back unchanged. CSV (RFC 4180,
 * CRLF line ends): the stored fields, `source` as JSON text, the extra
 * fields as one JSON object in `extra` (empty when none), an empty cell for
 * a `signature` the record does not have; the provider's
 * public key is left out, being the same on every row.
 */
export function formatRecord(format: TextExportFormat, record: PriceRecord): string {
  if (format === 'ndjson') return `${toExactJson(record)}\n`
  return `${csvCells(record).map(csvCell).join(',')}\r\n`
}

/** A record's CSV cells, one per {@link CSV_COLUMNS} column, before escaping. */
function csvCells(record: PriceRecord): string[] {
  const cells = CSV_FIELDS.map((field) => {
    const value = record[field]
    // A field the record does not have (`signature`, on a record signed by an EVM kind only) leaves its cell empty.
    return typeof value === 'string' ? value : value === undefined ? '' : toExactJson(value)
  })
  const extra: Record<string, unknown> = {}
  let extras = 0
  for (const field of Object.keys(record)) {
    if ((CSV_FIELDS as readonly string[]).includes(field) || NOT_STORED.has(field)) continue
    // defineProperty: an extra field may be named __proto__.
    Object.defineProperty(extra, field, { value: record[field], enumerable: true, writable: true, configurable: true })
    extras++
  }
  cells.push(extras === 0 ? '' : toExactJson(extra))
  return cells
}

/** A CSV cell: quoted, with quotes doubled, when it holds a comma, a quote or a line break. */
export function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}
