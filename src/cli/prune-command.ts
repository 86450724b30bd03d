import { isPriceStoreError } from '../errors.js'
import type { PruneResult } from '../store/upkeep/prune-request.js'
import { UsageError, parseCommandArgs, parseTimeOption } from './args.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import type { CliIo } from './io.js'
import { Interrupt } from './interrupt.js'
import { openStore } from './open-store.js'
import { Progress, formatCount } from './progress.js'

const HELP = `Usage: price-store prune --before T [options]

Removes every record with a timestamp before T (of one symbol with --symbol)
and never one at or after T. It works an hour at a time, each step one
atomic write: stopped by Ctrl+C, a crash or kill -9, it leaves every record
at or after T and a consistent database, and running it again finishes the
work. A symbol left with no record leaves the store. Ctrl+C stops after the
step being written and says what was removed (exit 130).

  price-store prune --before 2024-01-01
  price-store prune --before 2024-06-01T12:00:00Z --symbol BTC --dry-run

Options:
  --before T                  remove records with timestamp < T: ms since 1970, an ISO 8601 date
                              or date-time (UTC unless it says otherwise), "now", or now-30d
  --symbol S                  only this symbol's records
  --dry-run                   count what would be removed, remove nothing
${STORE_OPTIONS_HELP}
`

/** `price-store prune`: removes old records. */
export async function pruneCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { ...STORE_OPTIONS, before: { type: 'string' }, symbol: { type: 'string' }, 'dry-run': { type: 'boolean' } },
    false,
  )
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  if (values.before === undefined) throw new UsageError('give --before T: records with a timestamp before T are removed')
  const before = parseTimeOption('before', values.before)
  const { symbol } = values
  const dryRun = values['dry-run'] === true
  const config = await resolveStoreConfig(values)
  const store = await openStore(config, { mustExist: true })
  const interrupt = new Interrupt(io)
  const progress = new Progress(io, dryRun ? 'counting' : 'pruning')
  let done: PruneResult = { records: 0, hours: 0, symbols: [] }
  try {
    try {
      done = await store.prune({
        before, dryRun, signal: interrupt.abortSignal, ...(symbol === undefined ? {} : { symbol }),
        onProgress: (now) => {
          progress.add(now.records - done.records)
          done = now
        },
      })
    } catch (err) {
      if (interrupt.signal === undefined || !isPriceStoreError(err, 'PRICE_ABORTED')) throw err
      progress.finish()
      io.stderr.write(
        `price-store prune: stopped by ${interrupt.signal}: ${describe(done, false)} so far; every record at or after ${stamp(before)} ` +
          `is kept. Run the same command again to finish.\n`,
      )
      return interrupt.exitCode
    }
    progress.finish()
    const scope = symbol === undefined ? '' : ` of ${symbol}`
    io.stdout.write(`${describe(done, dryRun)} (records${scope} before ${stamp(before)}) from ${config.location}\n`)
    return 0
  } finally {
    interrupt.dispose()
    await store.close()
  }
}

/** `removed 1,234 records in 5 hours; BTC left with no record` (or `would remove`). */
function describe(result: PruneResult, dryRun: boolean): string {
  const verb = dryRun ? 'would remove' : 'removed'
  const emptied = result.symbols.length === 0 ? '' : `; ${dryRun ? 'would leave' : 'left'} ${result.symbols.join(', ')} with no record`
  return `${verb} ${formatCount(result.records)} record${result.records === 1 ? '' : 's'} in ${formatCount(result.hours)} hour${result.hours === 1 ? '' : 's'}${emptied}`
}

function stamp(time: number): string {
  return `${new Date(time).toISOString()} (${time})`
}
