import { UsageError, parseCommandArgs } from './args.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import { EXPORT_FORMATS, type ExportFormat, exportEncoder } from '../adapters/http/core/export-format.js'
import { checkParquetSelection } from '../adapters/http/core/parquet-export.js'
import { parseFieldSelection } from '../rules/fields.js'
import { Interrupt } from './interrupt.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { fileOutput, streamOutput, type Output } from './output-file.js'
import { Progress, countOf, formatCount } from './progress.js'
import { SELECTION_OPTIONS, SELECTION_OPTIONS_HELP, selectionOf } from './selection-flags.js'

const HELP = `Usage: price-store export [options]

Writes every stored record (of the symbols asked for, within the time
window) to standard output or a file, as NDJSON (one JSON record per line,
which "price-store import" reads back unchanged), CSV or Parquet. Records
are read from one consistent snapshot: each symbol's oldest first, symbols
in the store's order. Nothing is sampled or capped.

A file is written as FILE.partial and renamed to FILE once complete, so an
export that is stopped or killed never leaves a FILE that looks complete.
Ctrl+C stops it: the partial file is removed (exit 130).

Options:
${SELECTION_OPTIONS_HELP}
  --format ndjson|csv|parquet the output format (default ndjson). CSV: a header, then the stored
                              fields; source as JSON text, other fields as one JSON object in "extra".
                              Parquet: typed columns (value DOUBLE, timestamp TIMESTAMP in ms,
                              signatures BINARY, source and extra JSON), written a row group at a time
                              (docs/cli.md); not to a terminal: give -o FILE or a pipe
  --fields LIST               keep only these record fields (--fields symbol,value,timestamp), or
                              leave out those named with "-" (--fields=-signature,-providerPublicKey);
                              a line with fields left out is no longer one "price-store import" takes
  -o, --output FILE           write to FILE instead of standard output ("-" = standard output)
${STORE_OPTIONS_HELP}
`

/** `price-store export`: streams the stored records out as NDJSON, CSV or Parquet. */
export async function exportCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    {
      ...STORE_OPTIONS,
      ...SELECTION_OPTIONS,
      format: { type: 'string' },
      fields: { type: 'string' },
      output: { type: 'string', short: 'o' },
    },
    false,
  )
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  const format = (values.format ?? 'ndjson') as ExportFormat
  if (!EXPORT_FORMATS.includes(format)) throw new UsageError(`--format must be ndjson, csv or parquet (got ${JSON.stringify(values.format)})`)
  const { symbols, from, to } = selectionOf(values)
  // Checked before the store opens: a bad list is a usage error (exit 2), not a half-written file.
  const fields = values.fields === undefined ? undefined : parseFieldSelection('--fields', values.fields)
  if (format === 'parquet') checkParquetSelection('--fields', fields)
  const config = await resolveStoreConfig(values)
  const file = values.output === undefined || values.output === '-' ? undefined : values.output
  if (format === 'parquet' && file === undefined && (io.stdout as { isTTY?: boolean }).isTTY === true) {
    throw new UsageError('--format parquet writes a binary file: give --output FILE, or send standard output to a file or a pipe')
  }

  const store = await openStore(config, { mustExist: true, whileServed: 'ask it over HTTP: GET /prices/export?symbol=S&from=T&to=T streams the same NDJSON from one snapshot' })
  const interrupt = new Interrupt(io)
  const stdout = file === undefined ? streamOutput(io.stdout) : undefined
  let output: Output | undefined
  try {
    // Checked before anything is written: a bad symbol must not leave an empty file behind.
    const records = store.export({ ...(symbols === undefined ? {} : { symbols }), ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) })
    const total = from === undefined && to === undefined ? await selectedCount(store, symbols) : undefined
    output = stdout ?? (await fileOutput(file as string))
    const progress = new Progress(io, 'exporting', total === undefined ? {} : { total })
    // Pieces of about 64 kB of text, or a Parquet row group each (core/export-format.ts).
    const encoder = exportEncoder(format, fields)
    let count = 0
    for await (const record of interrupt.until(records)) {
      const piece = encoder.add(record)
      count++
      if (piece !== undefined) {
        await output.write(piece)
        progress.add(count - progress.count)
      }
    }
    if (interrupt.signal !== undefined) {
      progress.finish()
      await output.discard()
      const where = file === undefined
        ? `the output is incomplete (${countOf(progress.count, 'record')} written before the stop)`
        : `nothing was written to ${file} (the partial file was removed)`
      io.stderr.write(`price-store export: interrupted by ${interrupt.signal}: ${where}\n`)
      return interrupt.exitCode
    }
    await output.write(encoder.end())
    progress.add(count - progress.count)
    await output.commit()
    const { seconds, rate } = progress.finish()
    // The summary goes to stderr when the records go to stdout, so a pipe gets records only.
    const summary = `exported ${formatCount(count)} ${count === 1 ? 'record' : 'records'} as ${format.toUpperCase()} in ${seconds.toFixed(1)} s (${rate}) from ${config.location}${file === undefined ? '' : ` to ${file}`}\n`
    ;(file === undefined ? io.stderr : io.stdout).write(summary)
    return 0
  } catch (err) {
    await output?.discard()
    throw err
  } finally {
    stdout?.dispose()
    interrupt.dispose()
    await store.close()
  }
}

/** How many records the selection holds (for the percent done), from the store's statistics. */
async function selectedCount(store: { stats(): Promise<{ perSymbol: readonly { symbol: string; records: number }[] }> }, symbols: readonly string[] | undefined): Promise<number> {
  const wanted = symbols === undefined ? undefined : new Set(symbols)
  let total = 0
  for (const entry of (await store.stats()).perSymbol) if (wanted === undefined || wanted.has(entry.symbol)) total += entry.records
  return total
}
