import { isPriceStoreError } from '../errors.js'
import { CliError, UsageError } from './args.js'

/** How the CLI reports a failure: one message and an exit code. */
export interface Failure {
  readonly message: string
  /** 2 when the user's input was wrong (arguments, config, records, query parameters); 1 otherwise. */
  readonly exitCode: 1 | 2
}

/**
 * Turns anything a command threw into a message for stderr and an exit code.
 * Library errors keep their code in the message, for searching the docs.
 */
export function describeFailure(err: unknown, command: string | undefined): Failure {
  if (err instanceof UsageError) {
    const help = command === undefined ? 'price-store --help' : `price-store ${command} --help`
    // One line, so a script's log shows the whole of it.
    return { message: `${err.message}; see "${help}"`, exitCode: 2 }
  }
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode }
  if (isPriceStoreError(err)) {
    const inputError =
      err.code.startsWith('PRICE_INVALID_') || err.code === 'PRICE_UNSUPPORTED_PROVIDER' || err.code === 'PRICE_RANGE_TOO_LARGE'
    return { message: `${err.message} [${err.code}]`, exitCode: inputError ? 2 : 1 }
  }
  return { message: err instanceof Error ? err.message : String(err), exitCode: 1 }
}
