import { readFile, stat } from 'node:fs/promises'
import { CliError } from './args.js'
import type { CliIo } from './io.js'

/*
 * Files that hold a secret (the write token, the cursor secret): read whole,
 * less one final newline, and warned about when others may read them.
 * Messages name the file, never its content.
 */

/**
 * The bytes of the secret file at `path` (what it holds: `what`, e.g. "token file"), less one final newline
 * (`\n` or `\r\n`).
 * @throws CliError (exit code 2) when it cannot be read
 */
export async function readSecretFile(path: string, what: string): Promise<Buffer> {
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (err) {
    throw new CliError(`cannot read the ${what} ${path}: ${err instanceof Error ? err.message : String(err)}`, 2, { cause: err })
  }
  return bytes.subarray(0, bytes.length - (bytes.at(-1) === 0x0a ? (bytes.at(-2) === 0x0d ? 2 : 1) : 0))
}

/** Warns on standard error when users other than the owner may read the secret file at `path`. */
export async function warnIfShared(path: string, what: string, io: CliIo): Promise<void> {
  const { mode } = await stat(path)
  // Windows has no such bits to check.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    io.stderr.write(`warning: the ${what} ${path} may be read by other users; make it private with: chmod 600 ${path}\n`)
  }
}
