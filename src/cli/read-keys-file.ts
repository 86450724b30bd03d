import { readFile } from 'node:fs/promises'
import { checkReadKeys, type ReadKeysOptions } from '../adapters/http/access/read-keys.js'
import { isPriceStoreError } from '../errors.js'
import { CliError } from './args.js'

/**
 * serve's read keys (`--read-keys FILE`): the file's JSON, checked before
 * the server starts, so a mistake names the file and the field
 * (`keys[2].sha256`). The file holds each key's SHA-256, never a key:
 * nothing in it lets anyone read, so it needs no secret file's care.
 * @throws CliError (exit code 2) for a file that cannot be read, is not JSON, or holds bad read keys
 */
export async function readKeysFile(path: string | undefined): Promise<{ readonly readKeys?: ReadKeysOptions; readonly summary?: string }> {
  if (path === undefined) return {}
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new CliError(`cannot read the read keys file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 2)
  }
  let readKeys: unknown
  try {
    readKeys = JSON.parse(text)
  } catch (err) {
    throw new CliError(`the read keys file ${path} is not JSON: ${(err as Error).message}`, 2)
  }
  try {
    const { byDigest, anonymous } = checkReadKeys(readKeys)
    const readers = anonymous === 'closed' ? 'readers without a key are refused' : 'readers without a key may read'
    return { readKeys: readKeys as ReadKeysOptions, summary: `${byDigest.size} read key${byDigest.size === 1 ? '' : 's'} from ${path}; ${readers}` }
  } catch (err) {
    if (!isPriceStoreError(err)) throw err
    throw new CliError(`the read keys file ${path}: ${err.message.replace(/^option readKeys\./, '')}`, 2)
  }
}
