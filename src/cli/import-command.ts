import { open, type FileHandle } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { CliError, UsageError, parseCommandArgs, parseIntegerOption } from './args.js'
import { BatchWriter } from './batch-writer.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig, type StoreConfig } from './config.js'
import { SIGNATURE_OPTIONS, SIGNATURE_OPTIONS_HELP, withSignatureFlags } from './signature-flags.js'
import { HttpBatchTarget } from './http-batch-target.js'
import { readWriteToken } from './write-token-file.js'
import { unmarkDemo } from './demo-marker.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { importSummary, interruptReport } from './import-report.js'
import { inputBytes } from './input-bytes.js'
import { Interrupt } from './interrupt.js'
import { Progress } from './progress.js'
import { ErrorsFile } from './errors-file.js'
import { type InputSyntaxError, readRecords } from './record-reader.js'

const HELP = `Usage: price-store import [options] FILE...

Imports price records from NDJSON files (one JSON record per line) or JSON
array files ("[...]"); "-" reads standard input. Records are written in
atomic batches. On a bad record the import stops: it reports FILE:LINE and
the field, the batch holding the record is not written (earlier batches are),
and the exit code is 2. Importing the same file twice does not duplicate data.
Ctrl+C stops after the batch being written and says what is stored (exit 130).

Options:
  --batch-size N              records per atomic write (default 10000)
  --skip-bad                  write the good records; report each bad one (FILE:LINE and field) and go on
  --errors-file FILE          write each record left out to FILE as one JSON line {"file", "line", "code",
                              "field", "message", "raw"} (the record's text), in input order; implies --skip-bad
  --url URL                   send the records to a running "price-store serve" at URL (POST /prices), one
                              request per batch, instead of opening the database (which the server holds)
  --token-file FILE           with --url: the server's write token (the file's content, as given to
                              serve --write-token-file)
${SIGNATURE_OPTIONS_HELP}
                              (with --url, the server's own options apply)
${STORE_OPTIONS_HELP}
`

/** `price-store import`: streams records from files into the store. */
export async function importCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    argv,
    { ...STORE_OPTIONS, ...SIGNATURE_OPTIONS, 'batch-size': { type: 'string' }, 'skip-bad': { type: 'boolean' }, 'errors-file': { type: 'string' }, url: { type: 'string' }, 'token-file': { type: 'string' } },
    true,
  )
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  if (positionals.length === 0) throw new UsageError('give at least one FILE to import ("-" reads standard input)')
  if (positionals.filter((name) => name === '-').length > 1) throw new UsageError('"-" (standard input) can be given once')
  const batchSize = parseIntegerOption('batch-size', values['batch-size'], 1, 1_000_000) ?? 10_000
  const remote = await remoteTarget(values, io)
  const config = remote === undefined ? withSignatureFlags(await resolveStoreConfig(values), values) : undefined
  const where = remote?.url ?? (config as StoreConfig).location
  const errorsPath = values['errors-file']
  // Asking where to put the records left out is asking to go on past them.
  const skipBad = values['skip-bad'] === true || errorsPath !== undefined

  // Open every file first: a typo in the last name should not cost a half import.
  const handles: (FileHandle | undefined)[] = []
  try {
    for (const name of positionals) handles.push(name === '-' ? undefined : await openInput(name))
    const bytes = await inputBytes(handles)
    const store = remote ?? (await openStore(config as StoreConfig, { mustExist: false, whileServed: 'send the files to it instead: price-store import --url http://HOST:PORT --token-file FILE (POST /prices)' }))
    const interrupt = new Interrupt(io)
    let errorsFile: ErrorsFile | undefined
    try {
      if (errorsPath !== undefined) errorsFile = await ErrorsFile.create(errorsPath)
      // The store holds the user's own records from now on: it is no longer a demo to rebuild at will.
      if (config !== undefined) await unmarkDemo(config.location)
      const progress = new Progress(io, 'importing', { fractionDone: bytes.fractionDone })
      const importer = new BatchWriter(store, batchSize, progress, { skipBad, ...(errorsFile === undefined ? {} : { onSkip: (skipped) => errorsFile?.add(skipped) }) })
      const skipSyntax = skipBad ? (err: InputSyntaxError) => importer.skipSyntaxError(err) : undefined
      const keepText = errorsFile !== undefined
      for (const [index, name] of positionals.entries()) {
        const handle = handles[index]
        const input: Readable = handle === undefined ? io.stdin : bytes.track(handle.createReadStream({ encoding: 'utf8', autoClose: false }))
        const file = name === '-' ? '<stdin>' : name
        try {
          for await (const record of interrupt.until(readRecords(input, file, skipSyntax, { keepText }))) {
            await importer.add(record.value, { file, line: record.line, text: record.text })
          }
        } catch (err) {
          throw importer.failure(readFailure(err, file))
        } finally {
          // Standard input too once interrupted: a read left waiting would keep the process alive.
          if (handle !== undefined || interrupt.signal !== undefined) input.destroy()
        }
        if (interrupt.signal !== undefined) break
      }
      if (interrupt.signal !== undefined) {
        // The batch in flight was finished; the records collected after it are dropped whole, as a batch would be.
        progress.finish()
        io.stderr.write(`price-store import: ${interruptReport(interrupt.signal, importer, where)}\n`)
        return interrupt.exitCode
      }
      try {
        await importer.flush()
      } catch (err) {
        throw importer.failure(err)
      }
      const { seconds, rate } = progress.finish()
      await errorsFile?.close()
      io.stdout.write(`${importSummary(importer.counts, positionals.length, seconds, rate, where)}\n`)
      return 0
    } finally {
      interrupt.dispose()
      await errorsFile?.close().catch(() => {})
      await store.close()
    }
  } finally {
    for (const handle of handles) await handle?.close()
  }
}

/** A system error while reading (EISDIR, EIO...) names the file; anything else passes through. */
function readFailure(err: unknown, file: string): unknown {
  const syscall = (err as { syscall?: unknown } | null)?.syscall
  if (!(err instanceof Error) || typeof syscall !== 'string') return err
  return new CliError(`cannot read ${file}: ${err.message}`, 1, { cause: err })
}

async function openInput(name: string): Promise<FileHandle> {
  try {
    return await open(name, 'r')
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err)
    throw new CliError(`cannot open ${name}: ${reason}`, (err as { code?: string }).code === 'ENOENT' ? 2 : 1, { cause: err })
  }
}

/** The server `--url` names, with the token from `--token-file`; `undefined` without `--url` (the local database). */
async function remoteTarget(values: { url?: string | undefined; 'token-file'?: string | undefined; db?: string | undefined }, io: CliIo): Promise<HttpBatchTarget | undefined> {
  const { url, 'token-file': tokenFile, db } = values
  if (url === undefined) {
    if (tokenFile !== undefined) throw new UsageError('--token-file goes with --url (the server to send the records to)')
    return undefined
  }
  if (db !== undefined) throw new UsageError('--url and --db exclude each other: the records go to the server, which holds its own database')
  if (tokenFile === undefined) throw new UsageError('--url needs --token-file FILE: the server takes writes with its write token only')
  return new HttpBatchTarget(url, await readWriteToken(tokenFile, io), tokenFile)
}
