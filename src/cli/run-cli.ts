import { nearMiss } from './arg-errors.js'
import { UsageError } from './args.js'
import { backupCommand } from './backup-command.js'
import { benchCommand } from './bench-command.js'
import { demoCommand } from './demo-command.js'
import { exportCommand } from './export-command.js'
import { feedsCommand } from './feeds-command.js'
import { importCommand } from './import-command.js'
import { pruneCommand } from './prune-command.js'
import { qualityCommand } from './quality-command.js'
import type { CliIo } from './io.js'
import { queryCommand } from './query-command.js'
import { describeFailure } from './report-error.js'
import { serveCommand } from './serve-command.js'
import { statsCommand } from './stats-command.js'
import { verifyCommand } from './verify-command.js'
import { packageVersion } from './version.js'
import { ENVIRONMENT_HELP } from './environment.js'

type Command = (argv: readonly string[], io: CliIo) => Promise<number>

const COMMANDS: Readonly<Record<string, Command>> = {
  serve: serveCommand,
  import: importCommand,
  query: queryCommand,
  demo: demoCommand,
  bench: benchCommand,
  export: exportCommand,
  backup: backupCommand,
  stats: statsCommand,
  prune: pruneCommand,
  quality: qualityCommand,
  verify: verifyCommand,
  feeds: feedsCommand,
}

const HELP = `Usage: price-store COMMAND [options]

An embedded LevelDB store of signed crypto price records with a
RedStone-compatible GET /prices service.

Commands:
  serve          serve GET /prices over HTTP until Ctrl+C
  import FILE... import records from NDJSON or JSON array files ("-" = stdin)
  query NAME=VALUE...
                 print the answer to one GET /prices query
  demo           write the demo data set (20 tokens, every 10 s, 2 days)
  bench          time every query form on the database (median ms, records/s)
  export         write the stored records as NDJSON or CSV (to stdout or --output FILE)
  backup DIR     write a consistent copy of the database into the new directory DIR
  stats          print records, symbols, first and last timestamps, bytes on disk
  prune --before T
                 remove the records older than T (all symbols, or --symbol S)
  quality        how healthy each feed is: gaps between updates, age, largest moves, duplicates
  verify         report on the stored records' signatures (--recheck: verify them again)
  feeds          the feed catalogue: per symbol its status, counts, heartbeat, decimals, verdicts, sources

Options:
  -h, --help     this help
  -v, --version  the version of price-store

Run "price-store COMMAND --help" for a command's options ("price-store" alone prints this help
to stderr and exits 2).
Exit codes: 0 success, 1 failure, 2 invalid input (arguments, files, records, query).

${ENVIRONMENT_HELP}
`

/**
 * Runs the CLI with `argv` (the arguments after the program name) and
 * resolves with the exit code. Never rejects: failures are written to
 * `io.stderr` in plain words. Exported so tests can run commands in-process.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), processIo())
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(HELP)
    return 0
  }
  // No command is a usage error (a script's empty variable must not pass), answered with the whole help.
  if (name === undefined) {
    io.stderr.write(HELP)
    return 2
  }
  if (name === '--version' || name === '-v') {
    io.stdout.write(`${await packageVersion()}\n`)
    return 0
  }
  const command = name === undefined ? undefined : Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  try {
    if (command === undefined) throw new UsageError(unknownCommand(name as string))
    return await command(rest, io)
  } catch (err) {
    const failure = describeFailure(err, command === undefined ? undefined : name)
    io.stderr.write(`price-store${command === undefined ? '' : ` ${name}`}: ${failure.message}\n`)
    return failure.exitCode
  }
}

/** `unknown command "serv"; did you mean "serve"?`, or an unknown option before any command. */
function unknownCommand(name: string): string {
  if (name.startsWith('-')) {
    const near = nearMiss(name.replace(/^--?/, ''), ['help', 'version'])
    return `unknown option ${name}${near === undefined ? '' : ` (did you mean --${near}?)`}`
  }
  const near = nearMiss(name, Object.keys(COMMANDS))
  return `unknown command ${JSON.stringify(name)}${near === undefined ? '' : `; did you mean ${JSON.stringify(near)}?`}`
}
