import { isPriceStoreError } from '../errors.js'
import { UsageError, parseCommandArgs } from './args.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import { Interrupt } from './interrupt.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { Progress, formatCount } from './progress.js'
import { formatBytes } from './stats-command.js'

const HELP = `Usage: price-store backup [options] DIR

Writes a consistent copy of the database, from one snapshot, into the new
directory DIR (which must not exist, or be empty). The copy is a database
of its own: open it with --db DIR and the same provider.

The copy is written into DIR.partial, checked by opening it as a store, and
renamed to DIR only when complete, so a backup that is stopped or killed
never leaves a DIR that looks complete. A DIR.partial left by a killed
backup is removed by the next backup to DIR. Ctrl+C stops it and removes
the partial copy (exit 130).

Options:
${STORE_OPTIONS_HELP}
`

/** `price-store backup DIR`: copies the store into a new directory. */
export async function backupCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, STORE_OPTIONS, true)
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'give the DIR to write the backup into' : `give one DIR (got ${positionals.length} arguments)`)
  const dir = positionals[0] as string
  const config = await resolveStoreConfig(values)
  const store = await openStore(config, { mustExist: true })
  const interrupt = new Interrupt(io)
  try {
    let done = { records: 0, total: 0 }
    const progress = new Progress(io, 'backing up', { fractionDone: () => (done.total === 0 ? undefined : done.records / done.total) })
    try {
      const { location, stats } = await store.backup(dir, {
        signal: interrupt.abortSignal,
        onProgress: (now) => {
          progress.add(now.records - done.records)
          done = now
        },
      })
      const { seconds } = progress.finish()
      const size = stats.disk === null ? '' : `, ${formatBytes(stats.disk.bytes)}`
      io.stdout.write(
        `backed up ${formatCount(stats.records)} records of ${formatCount(stats.symbols)} symbols from ${config.location} to ${location} in ${seconds.toFixed(1)} s${size}\n`,
      )
      return 0
    } catch (err) {
      progress.finish()
      if (interrupt.signal !== undefined && isPriceStoreError(err, 'PRICE_ABORTED')) {
        io.stderr.write(`price-store backup: interrupted by ${interrupt.signal}: no backup was written (the partial copy was removed)\n`)
        return interrupt.exitCode
      }
      throw err
    }
  } finally {
    interrupt.dispose()
    await store.close()
  }
}
