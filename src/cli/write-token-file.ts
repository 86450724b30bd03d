import { readFile, stat } from 'node:fs/promises'
import { writeTokenProblem } from '../adapters/http/live/write-token.js'
import { CliError } from './args.js'
import type { CliIo } from './io.js'

/**
 * Reads a write token from `path`: the file's whole content, less one final
 * newline (`\n` or `\r\n`). Refuses an unreadable or empty file, or a token
 * a header cannot carry; warns when others may read the file. Messages
 * never quote the token.
 * @throws CliError (exit code 2)
 */
export async function readWriteToken(path: string, io: CliIo): Promise<string> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new CliError(`cannot read the token file ${path}: ${err instanceof Error ? err.message : String(err)}`, 2, { cause: err })
  }
  const token = text.replace(/\r?\n$/, '')
  if (token.length === 0) throw new CliError(`the token file ${path} is empty: put a long random token in it (e.g. openssl rand -hex 32 > ${path})`, 2)
  const problem = writeTokenProblem(token)
  if (problem !== undefined) throw new CliError(`the token in ${path} ${problem}`, 2)
  const { mode } = await stat(path)
  // Windows has no such bits to check.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    io.stderr.write(`warning: the token file ${path} may be read by other users; make it private with: chmod 600 ${path}\n`)
  }
  return token
}
