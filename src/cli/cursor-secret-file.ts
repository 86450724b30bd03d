import { CliError } from './args.js'
import type { CliEnvironment } from './environment.js'
import type { CliIo } from './io.js'
import { readSecretFile, warnIfShared } from './secret-file.js'

/** The fewest bytes a cursor secret file holds (the store's `cursorSecret` option checks the rest). */
const MIN_SECRET_BYTES = 32

/**
 * serve's cursor secret (the store's `cursorSecret` option, docs/cli.md):
 * the content of `--cursor-secret-file`, else of `PRICE_STORE_CURSOR_SECRET_FILE`,
 * less one final newline (`\n` or `\r\n`); `undefined` without either (the
 * store's own secret). Read as the write token file is (secret-file.ts):
 * an unreadable or short file is refused, a file others may read warned
 * about; messages never quote the secret.
 * @throws CliError (exit code 2)
 */
export async function readCursorSecret(flagFile: string | undefined, environment: CliEnvironment, io: CliIo): Promise<Buffer | undefined> {
  const path = flagFile ?? environment.cursorSecretFile
  if (path === undefined) return undefined
  const secret = await readSecretFile(path, 'cursor secret file')
  if (secret.length < MIN_SECRET_BYTES) {
    throw new CliError(`the cursor secret file ${path} holds ${secret.length} bytes: put at least ${MIN_SECRET_BYTES} random bytes in it (e.g. openssl rand -base64 48 > ${path}), the same file on every node`, 2)
  }
  await warnIfShared(path, 'cursor secret file', io)
  return secret
}
