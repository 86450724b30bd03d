import { toExactJson } from '../rules/exact-json.js'
import type { PriceRecord } from '../types.js'

/** The formats `price-store export` writes. */
export const EXPORT_FORMATS = ['ndjson', 'csv'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

/** The stored fields, in the order CSV columns hold them; any other field goes, as a JSON object, in `extra`. */
const CSV_FIELDS = ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp'] as const
/** Fields a record carries that are not stored per record: the store's provider key (see `stats`). */
const NOT_STORED = new Set(['providerPublicKey'])

/** The text before the first record: CSV's header line, nothing for NDJSON. */
export function exportHeader(format: ExportFormat): string {
  return format === 'csv' ? `${[...CSV_FIELDS, 'extra'].join(',')}\r\n` : ''
}

/**
 * One record as a line. NDJSON: the record as `latest()` returns it, with
 * `-0` kept, which `price-store import` reads back unchanged. CSV (RFC 4180,
 * CRLF line ends): the stored fields, `source` as JSON text, the extra
 * fields as one JSON object in `extra` (empty when none); the provider's
 * public key is left out, being the same on every row.
 */
export function formatRecord(format: ExportFormat, record: PriceRecord): string {
  if (format === 'ndjson') return `${toExactJson(record)}\n`
  const cells = CSV_FIELDS.map((field) => {
    const value = record[field]
    return typeof value === 'string' ? value : toExactJson(value)
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
  return `${cells.map(csvCell).join(',')}\r\n`
}

/** A CSV cell: quoted, with quotes doubled, when it holds a comma, a quote or a line break. */
export function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}
