import { DEFAULT_LIMITS } from '../types.js'
import type { Limits } from '../types.js'
import { parseIntegerOption } from './args.js'
import type { StoreConfig } from './config.js'

/** The `parseArgs` options for the store's query caps (`limits` of `PriceStore.open`). */
export const LIMIT_OPTIONS = {
  'max-limit': { type: 'string' },
  'max-symbols': { type: 'string' },
  'max-range-points': { type: 'string' },
} as const

/** The help text for {@link LIMIT_OPTIONS}. */
export const LIMIT_OPTIONS_HELP = `Query caps (a query over one gets 400; each flag overrides "limits" in --config):
  --max-limit N               most records of one symbol a query may ask for (limit=; default ${DEFAULT_LIMITS.maxLimit})
  --max-symbols N             most symbols a query may name (symbols=; default ${DEFAULT_LIMITS.maxSymbols})
  --max-range-points N        most points a range or candles answer may hold (default ${DEFAULT_LIMITS.maxRangePoints})`

/** A cap above any sensible one, so a typo of extra digits is still refused. */
const MAX_CAP = 1_000_000_000

const FIELDS: readonly (readonly [keyof typeof LIMIT_OPTIONS, keyof Limits])[] = [
  ['max-limit', 'maxLimit'],
  ['max-symbols', 'maxSymbols'],
  ['max-range-points', 'maxRangePoints'],
]

/**
 * `config` with the limits given as flags laid over those of the config
 * file: a flag is the more specific wish, as for the provider fields.
 *
 * @throws UsageError (exit code 2) for a value that is not a whole number from 1.
 */
export function withLimitFlags(config: StoreConfig, values: Readonly<Partial<Record<keyof typeof LIMIT_OPTIONS, string | undefined>>>): StoreConfig {
  const flags: Partial<Record<keyof Limits, number>> = {}
  for (const [flag, field] of FIELDS) {
    const value = parseIntegerOption(flag, values[flag], 1, MAX_CAP)
    if (value !== undefined) flags[field] = value
  }
  return Object.keys(flags).length === 0 ? config : { ...config, limits: { ...config.limits, ...flags } }
}
