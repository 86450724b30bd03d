/** `price-store query --times-file FILE`: a batch as-of (docs/cli.md), the times read from a file. */
import { readFile } from 'node:fs/promises'
import type { AsOfDirection } from '../types.js'
import { readClockOnce } from '../rules/time-text.js'
import { UsageError, parseTimeOption } from './args.js'

/** What a batch needs of the store (PriceStore.batchAsOf). */
export interface BatchOptionsFromCli {
  readonly symbols: readonly string[]
  readonly times: readonly number[]
  readonly direction?: AsOfDirection
  readonly tolerance?: number
  readonly validUntil?: boolean
}

const BATCH_PARAMETERS = new Set(['symbols', 'symbol', 'direction', 'tolerance', 'validUntil'])

/**
 * The batch's options from the query's parameters (`symbols` or `symbol`, `direction`, `tolerance`) and a
 * file of times, one a line in the CLI's time syntax (ms, ISO 8601, now-1d…; blank lines and `#` comments
 * skipped). Numbers that are not integers reach the store as they are, for its coded refusal.
 * @throws UsageError for another parameter, an unreadable file or a line that is no time
 */
export async function batchOptionsFromCli(params: URLSearchParams, file: string): Promise<BatchOptionsFromCli> {
  for (const name of params.keys()) {
    if (!BATCH_PARAMETERS.has(name)) throw new UsageError(`--times-file takes only symbols, direction, tolerance and validUntil (got ${name})`)
  }
  const symbols = params.getAll('symbols').flatMap((list) => list.split(',')).concat(params.getAll('symbol'))
  const direction = params.get('direction') ?? undefined
  if (direction !== undefined && direction !== 'before' && direction !== 'after' && direction !== 'nearest') {
    throw new UsageError(`direction must be before, after or nearest (got ${JSON.stringify(direction)})`)
  }
  const toleranceText = params.get('tolerance')
  const validUntil = params.get('validUntil')
  if (validUntil !== null && validUntil !== 'true' && validUntil !== 'false') throw new UsageError(`validUntil must be true or false (got ${JSON.stringify(validUntil)})`)
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read --times-file ${file}: ${error.code ?? error.message}`)
  })
  const now = readClockOnce(Date.now)
  const times = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => (/^-?[0-9.eE+]+$/.test(line) ? Number(line) : parseTimeOption('times-file', line, now)))
  return {
    symbols,
    times,
    ...(direction === undefined ? {} : { direction }),
    ...(toleranceText === null ? {} : { tolerance: Number(toleranceText) }),
    ...(validUntil === null ? {} : { validUntil: validUntil === 'true' }),
  }
}
