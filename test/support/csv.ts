/**
 * CSV (RFC 4180, CRLF line ends) read back independently of the writer
 * (src/adapters/http/core/export-format.ts), for the export tests of the CLI
 * and of HTTP.
 */
import { expect } from 'vitest'

/** Rows of cells; every row ends with CRLF, nothing follows the last. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++
      else if (ch === '"') quoted = false
      else cell += ch
    } else if (ch === '"') quoted = true
    else if (ch === ',') row.push(cell), (cell = '')
    else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell)
      rows.push(row)
      ;(row = []), (cell = ''), i++
    } else cell += ch
  }
  expect(cell).toBe('')
  expect(row).toEqual([])
  return rows
}
