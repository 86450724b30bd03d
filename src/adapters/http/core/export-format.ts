/**
 * The export formats, shared by `price-store export` and `GET /prices/export`
 * so both write the same lines: NDJSON records, or CSV rows under one header.
 */
import { fieldSelector } from '../../../engine/field-selection.js'
import { toExactJson } from '../../../rules/exact-json.js'
import type { FieldSelection, PriceRecord } from '../../../types.js'

/** The formats `price-store export` and `GET /prices/export` write. */
export const EXPORT_FORMATS = ['ndjson', 'csv'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

/** The stored fields, in the order CSV columns hold them; any other field goes, as a JSON object, in `extra`. */
const CSV_FIELDS = ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp'] as const
/** Fields a record carries that are not stored per record: the store's provider key (see `stats`). */
const NOT_STORED = new Set(['providerPublicKey'])

/** The text before the first record: CSV's header line (its columns chosen by `selection`, see {@link recordFormatter}), nothing for NDJSON. */
export function exportHeader(format: ExportFormat, selection?: FieldSelection): string {
  return format === 'csv' ? `${csvColumns(selection).join(',')}\r\n` : ''
}

/**
 * {@link formatRecord} with a `--fields` selection (as `/prices`'s
 * `fields`): NDJSON lines keep the selected fields; CSV keeps the columns
 * of the selected stored fields, and `extra` when the selection keeps
 * extra fields (a drop list does, a keep list does not). Without a
 * selection, {@link formatRecord} itself.
 */
export function recordFormatter(format: ExportFormat, selection: FieldSelection | undefined): (record: PriceRecord) => string {
  if (selection === undefined) return (record) => formatRecord(format, record)
  const select = fieldSelector(selection)
  if (format === 'ndjson') return (record) => `${toExactJson(select(record))}\n`
  const kept = csvColumns(selection).map((column) => CSV_COLUMNS.indexOf(column))
  return (record) => {
    const cells = csvCells(record)
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
  return CSV_COLUMNS.filter((column) => (column === 'extra' ? !keep : named.has(column) === keep))
}

/**
 * One record as a line. NDJSON: the record as `latest()` returns it, with
 * `-0` kept, which `price-store import` reads back unchanged. CSV (RFC 4180,
 * CRLF line ends): the stored fields, `source` as JSON text, the extra
 * fields as one JSON object in `extra` (empty when none), an empty cell for
 * a `signature` the record does not have; the provider's
 * public key is left out, being the same on every row.
 */
export function formatRecord(format: ExportFormat, record: PriceRecord): string {
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
