import { parseArgs, type ParseArgsConfig } from 'node:util'
import { explainArgError } from './arg-errors.js'
import { parseTimeText, timeTextProblem } from '../rules/time-text.js'

/**
 * A failure the CLI reports in plain words, with the exit code to use.
 * Exit code 2 means the user's input was wrong (arguments, files, records);
 * 1 means anything else.
 */
export class CliError extends Error {
  readonly exitCode: 1 | 2

  constructor(message: string, exitCode: 1 | 2 = 1, options?: { cause?: unknown }) {
    super(message, options)
    this.exitCode = exitCode
  }

  override get name(): string {
    return 'CliError'
  }
}

/** Wrong arguments: reported with a pointer to `--help`, exit code 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2)
  }

  override get name(): string {
    return 'UsageError'
  }
}

type Options = NonNullable<ParseArgsConfig['options']>

/**
 * `node:util` `parseArgs` in strict mode, with its errors turned into
 * {@link UsageError}s in the CLI's own words (`unknown option --prot (did you mean --port?)`).
 */
export function parseCommandArgs<O extends Options>(argv: readonly string[], options: O, allowPositionals: boolean) {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals, strict: true })
  } catch (err) {
    throw new UsageError(explainArgError(argv, options, allowPositionals, err))
  }
}

/** Parses a whole decimal number option within [min, max]; `undefined` stays undefined. */
export function parseIntegerOption(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined
  const value = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(text)})`)
  }
  return value
}

/**
 * Parses the time flag `--name` in the one time syntax (`parseTimeText`):
 * milliseconds since 1970, an ISO 8601 / RFC 3339 date or date-time, `now`,
 * or a time relative to now (`now-1d`, `-15m`).
 */
export function parseTimeOption(name: string, text: string, now: () => number = Date.now): number {
  const value = parseTimeText(text, now)
  if (value === undefined) throw new UsageError(timeTextProblem(`--${name}`, text))
  return value
}
