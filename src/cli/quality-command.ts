import type { QualityReport, SymbolQuality } from '../store/services/quality.js'
import { UsageError, parseCommandArgs, parseTimeOption } from './args.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { formatCount } from './progress.js'
import { SELECTION_OPTIONS, selectionOf } from './selection-flags.js'

const DAY_MS = 86_400_000

const HELP = `Usage: price-store quality [options]

Reports how healthy each feed is over a time window, from one consistent
snapshot: records, the newest record's time and age, the gaps between
updates (median, p99, max, and those over a threshold: the feed's observed
heartbeat and its outages), the largest moves between consecutive records,
and records sharing a timestamp. See docs/semantics.md, "Feed quality".

Like "query", it needs the database to exist and not be open in another
process (stop "price-store serve" first: it answers GET /prices/quality).

Options:
  --symbol S                  only this symbol (repeatable, or comma-separated: --symbol BTC,ETH)
  --from TIME                 window start (ms since 1970, an ISO date, "now", now-1h; default: 24 h before --to)
  --to TIME                   window end (default now)
  --interval MS               also count per bucket of MS milliseconds (printed under each symbol)
  --gap-threshold MS          list gaps longer than MS (default: 3 × each symbol's median gap)
  --now TIME                  measure ages from TIME (default now)
  --sources                   also count each record's sources and their spread (decodes every record: slower)
  --no-moves                  skip the values (no largest moves): reads timestamps only, several times faster
  --json                      print the report as JSON (the object store.quality() returns)
${STORE_OPTIONS_HELP}
`

/** `price-store quality`: prints the feed-quality report as a table or JSON. */
export async function qualityCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    {
      ...STORE_OPTIONS,
      ...SELECTION_OPTIONS,
      interval: { type: 'string' },
      'gap-threshold': { type: 'string' },
      now: { type: 'string' },
      sources: { type: 'boolean' },
      'no-moves': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    false,
  )
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  const now = values.now === undefined ? Date.now() : parseTimeOption('now', values.now)
  const { symbols, from: asked, to: until } = selectionOf(values, () => now)
  const to = until ?? now
  const from = asked ?? Math.max(0, to - DAY_MS)
  if (from > to) throw new UsageError(`--from must not be after --to (got ${from} > ${to})`)
  const interval = values.interval === undefined ? undefined : milliseconds('interval', values.interval)
  const gapThreshold = values['gap-threshold'] === undefined ? undefined : milliseconds('gap-threshold', values['gap-threshold'])
  const config = await resolveStoreConfig(values)
  const store = await openStore(config, { mustExist: true, whileServed: 'ask it over HTTP: GET /prices/quality?fromTimestamp=T&toTimestamp=T answers the same report as JSON' })
  try {
    const report = await store.quality({
      from, to, now,
      ...(symbols === undefined ? {} : { symbols }),
      ...(interval === undefined ? {} : { interval }),
      ...(gapThreshold === undefined ? {} : { gapThreshold }),
      ...(values.sources === true ? { sources: true } : {}),
      ...(values['no-moves'] === true ? { moves: false } : {}),
    })
    io.stdout.write(values.json === true ? `${JSON.stringify(report, null, 2)}\n` : qualityTable(config.location, report))
    return 0
  } finally {
    await store.close()
  }
}

/** A whole number of milliseconds of at least 1. */
function milliseconds(name: string, text: string): number {
  const value = Number(text)
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(value) || value < 1) throw new UsageError(`--${name} must be a whole number of milliseconds, at least 1 (got ${JSON.stringify(text)})`)
  return value
}

/** The report for a person: a table of symbols, then each symbol's gaps over the threshold and buckets. */
export function qualityTable(location: string, report: QualityReport): string {
  const lines = [
    `price-store quality: ${location}`,
    `window     ${iso(report.from)} .. ${iso(report.to)}, ages as of ${iso(report.now)}`,
    `gaps over  ${report.gapThreshold === null ? "3 × each symbol's median gap" : duration(report.gapThreshold)}`,
    '',
  ]
  const header = ['symbol', 'records', 'last', 'age', 'median gap', 'p99 gap', 'max gap', 'over', 'dups', 'largest move']
  const rows = report.symbols.map(symbolRow)
  lines.push(...table(header, rows))
  for (const entry of report.symbols) lines.push(...details(entry))
  return `${lines.join('\n')}\n`
}

function symbolRow(entry: SymbolQuality): string[] {
  const move = entry.moves?.largestRelative[0] ?? entry.moves?.largest[0]
  return [
    entry.symbol,
    formatCount(entry.records),
    entry.lastTimestamp === null ? '-' : iso(entry.lastTimestamp),
    entry.age === null ? '-' : duration(entry.age),
    orDash(entry.gaps.median, duration),
    orDash(entry.gaps.p99, duration),
    orDash(entry.gaps.max, duration),
    formatCount(entry.gaps.over),
    formatCount(entry.duplicates.records),
    move === undefined ? '-' : move.relative === null ? String(move.change) : `${(move.relative * 100).toFixed(2)}% at ${iso(move.to.timestamp)}`,
  ]
}

/** The gaps over the threshold (the first 10) and the buckets of one symbol, when there are any. */
function details(entry: SymbolQuality): string[] {
  const lines: string[] = []
  if (entry.gaps.list.length > 0) {
    lines.push('', `${entry.symbol}: ${formatCount(entry.gaps.over)} gaps over ${orDash(entry.gaps.threshold, duration)}`)
    for (const gap of entry.gaps.list.slice(0, 10)) lines.push(`  ${iso(gap.start)} .. ${iso(gap.end)}  ${duration(gap.length)}`)
    if (entry.gaps.over > 10) lines.push(`  … ${formatCount(entry.gaps.over - 10)} more (--json lists ${formatCount(entry.gaps.list.length)})`)
  }
  if (entry.sources !== undefined) {
    const counts = Object.entries(entry.sources.counts).map(([count, records]) => `${count}: ${formatCount(records)}`).join(', ')
    const widest = entry.sources.widest
    lines.push('', `${entry.symbol}: records by number of sources ${counts === '' ? '-' : counts}; single source ${formatCount(entry.sources.singleSource)}`)
    if (widest !== null) lines.push(`  widest spread ${(widest.spread * 100).toFixed(2)}% (${widest.min} .. ${widest.max} around ${widest.value}) at ${iso(widest.timestamp)}, id ${widest.id}`)
  }
  if (entry.buckets !== undefined) {
    lines.push('', `${entry.symbol} by bucket:`)
    const rows = entry.buckets.map((bucket) => [
      iso(bucket.start), formatCount(bucket.records), orDash(bucket.gaps.median, duration), orDash(bucket.gaps.max, duration),
      formatCount(bucket.gaps.over), formatCount(bucket.duplicates),
    ])
    lines.push(...table(['bucket', 'records', 'median gap', 'max gap', 'over', 'dups'], rows).map((line) => `  ${line}`))
  }
  return lines
}

/** Columns padded to their widest cell; numbers (all but the first column) line up on the right. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)))
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => (column === 0 || column === 2 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join('  ').trimEnd()
  return [line(header), ...rows.map(line)]
}

function orDash(value: number | null, format: (value: number) => string): string {
  return value === null ? '-' : format(value)
}

function iso(timestamp: number): string {
  return new Date(timestamp).toISOString()
}

/** `12_500` -> `12.5s`, `5_400_000` -> `1.5h`; negative for a time in the future. */
export function duration(ms: number): string {
  const size = Math.abs(ms)
  if (size < 1000) return `${ms}ms`
  if (size < 60_000) return `${trim(ms / 1000)}s`
  if (size < 3_600_000) return `${trim(ms / 60_000)}m`
  if (size < DAY_MS) return `${trim(ms / 3_600_000)}h`
  return `${trim(ms / DAY_MS)}d`
}

function trim(value: number): string {
  return String(Math.round(value * 10) / 10)
}
