import type { StoreStats } from '../store/services/stats.js'
import { parseCommandArgs } from './args.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { formatCount } from './progress.js'

const HELP = `Usage: price-store stats [options]

Prints what the database holds, from one consistent snapshot: records and
symbols, each symbol's record count and first and last timestamp, records
not sealed into chunks yet, bytes on disk (the files of the database
directory), the storage format version and the provider. Counting reads no
record (each sealed hour's count is in its index entry), so it is quick on
a large database.

Like "query", it needs the database to exist and not be open in another
process (stop "price-store serve" first). It only reads.

Options:
  --json                      print the statistics as JSON (the object store.stats() returns)
${STORE_OPTIONS_HELP}
`

/** `price-store stats`: prints the store's statistics as a table or JSON. */
export async function statsCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(argv, { ...STORE_OPTIONS, json: { type: 'boolean' } }, false)
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  const config = await resolveStoreConfig(values)
  const store = await openStore(config, { mustExist: true, whileServed: 'ask it over HTTP: GET /stats answers the same numbers as JSON' })
  try {
    const stats = await store.stats()
    io.stdout.write(values.json === true ? `${JSON.stringify(stats, null, 2)}\n` : statsTable(config.location, stats))
    return 0
  } finally {
    await store.close()
  }
}

/** The statistics for a person: a few lines, then a table of symbols. */
function statsTable(location: string, stats: StoreStats): string {
  const { provider } = stats
  const key = provider.publicKey.length <= 48 ? provider.publicKey : `${provider.publicKey.slice(0, 16)}…${provider.publicKey.slice(-8)} (${provider.publicKey.length} characters)`
  const lines = [
    `price-store stats: ${location}`,
    `records    ${formatCount(stats.records)}${stats.unsealedRecords === 0 ? '' : ` (${formatCount(stats.unsealedRecords)} not sealed yet)`}`,
    `symbols    ${formatCount(stats.symbols)}`,
    `on disk    ${stats.disk === null ? 'not on disk' : `${formatBytes(stats.disk.bytes)}${stats.disk.measured === 'approximate' ? ' (approximate)' : ''}`}`,
    `format     ${stats.formatVersion}`,
    `provider   ${provider.name}, id ${provider.id}, public key ${key}`,
  ]
  if (stats.perSymbol.length > 0) {
    const rows = stats.perSymbol.map((entry) => [entry.symbol, formatCount(entry.records), new Date(entry.firstTimestamp).toISOString(), new Date(entry.lastTimestamp).toISOString()])
    const header = ['symbol', 'records', 'first', 'last']
    const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)))
    // Counts line up on the right, the rest reads left to right.
    const line = (cells: readonly string[]): string => cells.map((cell, column) => (column === 1 ? cell.padStart(widths[1] as number) : cell.padEnd(widths[column] as number))).join('  ').trimEnd()
    lines.push('', line(header), ...rows.map(line))
  }
  return `${lines.join('\n')}\n`
}

/** `1536` -> `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${formatCount(bytes)} bytes` : `${value.toFixed(1)} ${units[unit]}`
}
