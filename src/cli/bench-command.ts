import { CliError, parseCommandArgs, parseIntegerOption } from './args.js'
import { STREAM_RUNS, benchForms, dataSpan } from './bench-forms.js'
import { type BenchResult, measure } from './bench-measure.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { formatCount } from './progress.js'

const DEFAULT_RUNS = 20

const HELP = `Usage: price-store bench [options]

Times every query form on your own database: latest, latest-100, several
(all symbols), as-of, ranges at 1 min, 10 min and 1 h and hourly candles
over the last 24 h of data (or the data's span if shorter), and a stream
of the whole span record by record. The symbols and the span are read from
the database. Prints the median time of each form and records/s.

Like "query", it needs the database to exist and not be open in another
process (stop "price-store serve" first). It only reads.

Options:
  --symbol S                  the symbol to time (default BTC if stored, else the first symbol)
  --runs N                    timed runs of each form, after one warm-up run (default ${DEFAULT_RUNS});
                              the stream reads the whole span: at most ${STREAM_RUNS} runs, no warm-up
  --json                      print the results as JSON
${STORE_OPTIONS_HELP}
`

/** `price-store bench`: times each query form on the store and prints a table (or JSON). */
export async function benchCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(argv, { ...STORE_OPTIONS, symbol: { type: 'string' }, runs: { type: 'string' }, json: { type: 'boolean' } }, false)
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  const runs = parseIntegerOption('runs', values.runs, 1, 100_000) ?? DEFAULT_RUNS
  const { location, provider } = await resolveStoreConfig(values)
  // The config's query caps are left out: they change no timing, and a low maxRangePoints would refuse a form.
  const store = await openStore({ location, provider }, { mustExist: true })
  try {
    const symbols = await store.symbols()
    if (symbols.length === 0) throw new CliError(`the database at ${location} holds no records: nothing to time (import some first)`)
    const symbol = values.symbol ?? (symbols.includes('BTC') ? 'BTC' : (symbols[0] as string))
    const span = symbols.includes(symbol) ? await dataSpan(store, symbol) : undefined
    if (span === undefined) {
      const some = symbols.slice(0, 10).join(', ') + (symbols.length > 10 ? ', ...' : '')
      throw new CliError(`the database at ${location} holds no records of ${JSON.stringify(symbol)} (it holds ${some}); choose one with --symbol`, 2)
    }
    const results: BenchResult[] = []
    for (const form of benchForms(store, symbol, symbols.length, span, runs)) {
      if (values.json !== true && io.isTTY) io.stderr.write(`\r\x1b[2Ktiming ${form.name}...`)
      results.push(await measure(form))
    }
    if (values.json !== true && io.isTTY) io.stderr.write('\r\x1b[2K')
    const run = { db: location, symbol, symbols: symbols.length, from: span.from, to: span.to, runs, forms: results }
    io.stdout.write(values.json === true ? `${JSON.stringify(run, null, 2)}\n` : benchTable(run))
    return 0
  } finally {
    await store.close()
  }
}

/** The results as a table with a heading naming the data timed. */
function benchTable(run: { db: string; symbol: string; symbols: number; from: number; to: number; runs: number; forms: readonly BenchResult[] }): string {
  const rows = run.forms.map((result) => [result.form, formatCount(result.records), String(result.runs), result.medianMs.toFixed(3), formatCount(result.recordsPerSecond)])
  const header = ['form', 'records', 'runs', 'median ms', 'records/s']
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)))
  // The form's name reads left to right; the numbers line up on the right.
  const line = (cells: readonly string[]): string => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[0] as number) : cell.padStart(widths[column] as number))).join('  ')
  const span = `${new Date(run.from).toISOString()} to ${new Date(run.to).toISOString()}`
  return [
    `price-store bench: ${run.symbol} (of ${formatCount(run.symbols)} symbols) in ${run.db}, data from ${span}`,
    `median of ${run.runs} timed runs of each form, after one warm-up run (the stream reads the whole span: at most ${STREAM_RUNS} runs, no warm-up)`,
    '',
    line(header),
    ...rows.map(line),
    '',
  ].join('\n')
}
