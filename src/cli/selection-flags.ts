/**
 * The selection flags of the commands that read a span of records
 * (`export`, `verify`, `quality`): `--symbol` (repeatable or
 * comma-separated), `--from`, `--to`.
 */
import { UsageError, parseTimeOption } from './args.js'

/** The `parseArgs` options of a selection. */
export const SELECTION_OPTIONS = {
  symbol: { type: 'string', multiple: true },
  from: { type: 'string' },
  to: { type: 'string' },
} as const

/** The help lines of {@link SELECTION_OPTIONS}. */
export const SELECTION_OPTIONS_HELP = `  --symbol S                  only this symbol (repeatable, or comma-separated: --symbol BTC,ETH)
  --from TIME                 only records at or after TIME (ms since 1970, an ISO date, "now", now-1d)
  --to TIME                   only records at or before TIME`

/** A selection as `store.export()` and `store.verify()` take it. */
export interface Selection {
  readonly symbols?: string[]
  readonly from?: number
  readonly to?: number
}

/**
 * The selection the flags give.
 * @throws UsageError for an empty symbol, a time that does not parse, or `--from` after `--to`
 */
export function selectionOf(
  values: { readonly symbol?: string[] | undefined; readonly from?: string | undefined; readonly to?: string | undefined }, now: () => number = Date.now,
): Selection {
  const symbols = values.symbol?.flatMap((list) => list.split(','))
  if (symbols?.includes('') === true) throw new UsageError('--symbol needs a symbol (an empty name was given)')
  const from = values.from === undefined ? undefined : parseTimeOption('from', values.from, now)
  const to = values.to === undefined ? undefined : parseTimeOption('to', values.to, now)
  if (from !== undefined && to !== undefined && from > to) throw new UsageError(`--from must not be after --to (got ${from} > ${to})`)
  return { ...(symbols === undefined ? {} : { symbols }), ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) }
}
