import { mkdir } from 'node:fs/promises'
import { isAbsolute, relative, resolve } from 'node:path'
import { isPriceStoreError } from '../errors.js'
import { CliError, UsageError, parseCommandArgs } from './args.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import { Interrupt } from './interrupt.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { Progress, formatCount } from './progress.js'
import { remoteBackup } from './remote-backup.js'
import { formatBytes } from './stats-command.js'
import { readWriteToken } from './write-token-file.js'

const HELP = `Usage: price-store backup [options] DIR
       price-store backup --url URL --token-file FILE [NAME]

Writes a consistent copy of the database, from one snapshot, into the new
directory DIR (which must not exist, or be empty). The copy is a database
of its own: open it with --db DIR and the same provider.

The copy is written into DIR.partial, checked by opening it as a store, and
renamed to DIR only when complete, so a backup that is stopped or killed
never leaves a DIR that looks complete. A DIR.partial left by a killed
backup is removed by the next backup to DIR. Ctrl+C stops it and removes
the partial copy (exit 130).

While "price-store serve" holds the database, back it up through the
server instead: with --url, the server writes the backup, with the same
guarantees, into the new subdirectory NAME of its --backup-dir (default
NAME: backup-<time>), and this command shows its progress. The server must
run with --backup-dir and --write-token-file (POST /admin/backup, see
docs/http.md). Ctrl+C stops the server's backup too.

Options:
  --url URL                   back up the database of the running "price-store serve" at URL
  --token-file FILE           with --url: the server's write token (as given to serve --write-token-file)
${STORE_OPTIONS_HELP}
`

const OPTIONS = { ...STORE_OPTIONS, url: { type: 'string' }, 'token-file': { type: 'string' } } as const

/** `price-store backup DIR`: copies the store into a new directory; with `--url`, has a running server do it. */
export async function backupCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, OPTIONS, true)
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  if (values.url !== undefined) {
    if (values.db !== undefined) throw new UsageError('--url and --db exclude each other: the server backs up the database it serves')
    if (values['token-file'] === undefined) throw new UsageError('--url needs --token-file FILE: the server takes backups with its write token only')
    if (positionals.length > 1) throw new UsageError(`give at most one NAME, the backup's directory below the server's --backup-dir (got ${positionals.length} arguments)`)
    const token = await readWriteToken(values['token-file'], io)
    return remoteBackup({ url: values.url, token, tokenFile: values['token-file'], name: positionals[0] }, io)
  }
  if (values['token-file'] !== undefined) throw new UsageError('--token-file goes with --url (the server to back up)')
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'give the DIR to write the backup into' : `give one DIR (got ${positionals.length} arguments)`)
  const dir = positionals[0] as string
  const config = await resolveStoreConfig(values)
  const store = await openStore(config, {
    mustExist: true,
    whileServed: 'back it up through the server: price-store backup --url URL --token-file FILE [NAME] (serve needs --backup-dir and --write-token-file)',
  })
  const interrupt = new Interrupt(io)
  try {
    let done = { records: 0, total: 0 }
    const progress = new Progress(io, 'backing up', { fractionDone: () => (done.total === 0 ? undefined : done.records / done.total) })
    try {
      const { location, stats } = await store.backup(dir, {
        signal: interrupt.abortSignal,
        onProgress: (now) => {
          const copied = now.records - done.records
          done = now // before add(), which draws the fraction done
          progress.add(copied)
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

/**
 * `serve --backup-dir DIR` as the handler's `backupDir`: it needs the write
 * token (which authorises backups), may not be inside the database, and is
 * created now, so a directory that cannot be made fails at start, not at the
 * first backup.
 * @throws UsageError, CliError
 */
export async function backupDirOption(dir: string | undefined, hasWriteToken: boolean, dbLocation: string): Promise<{ backupDir?: string }> {
  if (dir === undefined) return {}
  if (!hasWriteToken) {
    throw new UsageError('--backup-dir needs a write token (--write-token-file, or PRICE_STORE_WRITE_TOKEN_FILE / PRICE_STORE_WRITE_TOKEN): online backups are authorised by it')
  }
  if (dir === '') throw new UsageError('--backup-dir must be a directory')
  const backupDir = resolve(dir)
  const below = relative(resolve(dbLocation), backupDir)
  if (below === '' || (!below.startsWith('..') && !isAbsolute(below))) {
    throw new UsageError(`--backup-dir ${backupDir} is inside the database ${resolve(dbLocation)}: give a directory outside it`)
  }
  try {
    await mkdir(backupDir, { recursive: true })
  } catch (err) {
    throw new CliError(`cannot make the backup directory ${backupDir}: ${err instanceof Error ? err.message : String(err)}`, 2, { cause: err })
  }
  return { backupDir }
}
