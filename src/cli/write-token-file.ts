import { writeTokenProblem } from '../adapters/http/live/write-token.js'
import { CliError } from './args.js'
import type { CliIo } from './io.js'
import { readSecretFile, warnIfShared } from './secret-file.js'

/**
 * Reads a write token from `path`: the file's whole content, less one final
 * newline (`\n` or `\r\n`). Refuses an unreadable or empty file, or a token
 * a header cannot carry; warns when others may read the file. Messages
 * never quote the token.
 * @throws CliError (exit code 2)
 */
export async function readWriteToken(path: string, io: CliIo): Promise<string> {
  const token = (await readSecretFile(path, 'token file')).toString('utf8')
  if (token.length === 0) throw new CliError(`the token file ${path} is empty: put a long random token in it (e.g. openssl rand -hex 32 > ${path})`, 2)
  const problem = writeTokenProblem(token)
  if (problem !== undefined) throw new CliError(`the token in ${path} ${problem}`, 2)
  await warnIfShared(path, 'token file', io)
  return token
}
