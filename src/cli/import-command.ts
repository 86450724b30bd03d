import { open, type FileHandle } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { CliError, UsageError, parseCommandArgs, parseIntegerOption } from './args.js'
import { BatchWriter } from './batch-writer.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import { unmarkDemo } from './demo-marker.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { Progress, formatCount } from './progress.js'
import { readRecords } from './record-reader.js'

const HELP = `Usage: price-store import [options] FILE...

Imports price records from NDJSON files (one JSON record per line) or JSON
array files ("[...]"); "-" reads standard input. Records are written in
atomic batches. On a bad record the import stops: it reports FILE:LINE and
the field, the batch holding the record is not written (earlier batches are),
and the exit code is 2. Importing the same file twice does not duplicate data.

Options:
  --batch-size N              records per atomic write (default 10000)
${STORE_OPTIONS_HELP}
`

/** `price-store import`: streams records from files into the store. */
export async function importCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...STORE_OPTIONS, 'batch-size': { type: 'string' } }, true)
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  if (positionals.length === 0) throw new UsageError('give at least one FILE to import ("-" reads standard input)')
  if (positionals.filter((name) => name === '-').length > 1) throw new UsageError('"-" (standard input) can be given once')
  const batchSize = parseIntegerOption('batch-size', values['batch-size'], 1, 1_000_000) ?? 10_000
  const config = await resolveStoreConfig(values)

  // Open every file first: a typo in the last name should not cost a half import.
  const handles: (FileHandle | undefined)[] = []
  try {
    for (const name of positionals) handles.push(name === '-' ? undefined : await openInput(name))
    const store = await openStore(config, { mustExist: false })
    try {
      // The store holds the user's own records from now on: it is no longer a demo to rebuild at will.
      await unmarkDemo(config.location)
      const progress = new Progress(io, 'importing')
      const importer = new BatchWriter(store, batchSize, progress)
      for (const [index, name] of positionals.entries()) {
        const handle = handles[index]
        const input: Readable = handle === undefined ? io.stdin : handle.createReadStream({ encoding: 'utf8', autoClose: false })
        const file = name === '-' ? '<stdin>' : name
        try {
          for await (const record of readRecords(input, file)) await importer.add(record.value, { file, line: record.line })
        } catch (err) {
          throw importer.failure(readFailure(err, file))
        } finally {
          if (handle !== undefined) input.destroy()
        }
      }
      try {
        await importer.flush()
      } catch (err) {
        throw importer.failure(err)
      }
      const { count, seconds, rate } = progress.finish()
      const files = positionals.length === 1 ? '1 file' : `${positionals.length} files`
      io.stdout.write(`imported ${formatCount(count)} records from ${files} in ${seconds.toFixed(1)} s (${rate}) into ${config.location}\n`)
      return 0
    } finally {
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
