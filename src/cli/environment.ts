/**
 * The environment variables the CLI reads, all here, for containers and
 * service managers. Each is a default that a flag overrides: flag, then
 * environment, then the built-in default. An empty variable counts as unset.
 */
import { writeTokenProblem } from '../adapters/http/live/write-token.js'
import { CliError, UsageError } from './args.js'
import type { CliIo } from './io.js'
import { readWriteToken } from './write-token-file.js'

/** The variables' names, as documented in docs/cli.md ("Environment variables"). */
export const ENV = {
  db: 'PRICE_STORE_DB',
  port: 'PORT',
  host: 'PRICE_STORE_HOST',
  writeToken: 'PRICE_STORE_WRITE_TOKEN',
  writeTokenFile: 'PRICE_STORE_WRITE_TOKEN_FILE',
  cursorSecretFile: 'PRICE_STORE_CURSOR_SECRET_FILE',
} as const

/** What the environment sets, by the CLI's own names. */
export type CliEnvironment = { readonly [K in keyof typeof ENV]?: string }

/** The help text listing the variables (appended to the commands' help). */
export const ENVIRONMENT_HELP = `Environment (a flag given wins over its variable; an empty variable is ignored):
  ${ENV.db}              the --db default, for every command
  ${ENV.port}                        serve's --port default
  ${ENV.host}            serve's --host default
  ${ENV.writeTokenFile}  serve's --write-token-file default
  ${ENV.writeToken}       serve's write token itself, when no token file is given
  ${ENV.cursorSecretFile} serve's --cursor-secret-file default`

/** Reads {@link ENV} from `env` (the process's environment unless a test injects one). */
export function readEnvironment(env: Readonly<Record<string, string | undefined>> = process.env): CliEnvironment {
  const found: { -readonly [K in keyof typeof ENV]?: string } = {}
  for (const [key, name] of Object.entries(ENV) as [keyof typeof ENV, string][]) {
    const value = env[name]
    if (value !== undefined && value !== '') found[key] = value
  }
  return found
}

/**
 * serve's port from `PORT`, or `undefined` when unset.
 * @throws UsageError for a value that is not a port number
 */
export function environmentPort(environment: CliEnvironment): number | undefined {
  const text = environment.port
  if (text === undefined) return undefined
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : Number.NaN
  if (!(port <= 65_535)) throw new UsageError(`${ENV.port} must be a whole number from 0 to 65535 (got ${JSON.stringify(text)})`)
  return port
}

/** serve's write token and where it came from (for the banner), or none: writes stay off. */
export interface WriteTokenSource {
  readonly token?: string
  /** `the token file FILE` or `$PRICE_STORE_WRITE_TOKEN`. */
  readonly from?: string
  /** The token file, when the token came from one (the banner's import hint names it). */
  readonly file?: string
}

/**
 * serve's write token: `--write-token-file`, else `PRICE_STORE_WRITE_TOKEN_FILE`, else
 * `PRICE_STORE_WRITE_TOKEN` (setting both variables is refused: which one is meant is unclear).
 * @throws CliError (exit code 2) for an unreadable file or a token a header cannot carry
 */
export async function resolveWriteToken(flagFile: string | undefined, environment: CliEnvironment, io: CliIo): Promise<WriteTokenSource> {
  const file = flagFile ?? environment.writeTokenFile
  if (flagFile === undefined && environment.writeTokenFile !== undefined && environment.writeToken !== undefined) {
    throw new UsageError(`set ${ENV.writeTokenFile} or ${ENV.writeToken}, not both`)
  }
  if (file !== undefined) return { token: await readWriteToken(file, io), from: `the token file ${file}`, file }
  const token = environment.writeToken
  if (token === undefined) return {}
  const problem = writeTokenProblem(token)
  // The message never quotes the token.
  if (problem !== undefined) throw new CliError(`the token in ${ENV.writeToken} ${problem}`, 2)
  return { token, from: `$${ENV.writeToken}` }
}
