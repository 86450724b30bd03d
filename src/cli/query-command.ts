import { toExactJson } from '../rules/exact-json.js'
import { KNOWN_PARAMETERS } from '../engine/parse-query.js'
import { UsageError, parseCommandArgs, parseTimeOption } from './args.js'
import { readClockOnce } from '../rules/time-text.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { batchOptionsFromCli } from './batch-query.js'
import { printAllPages, withAllPagesHint } from './all-pages.js'

/** The `GET /prices` parameters, also accepted as `--name value` flags. */
const QUERY_PARAMETERS = KNOWN_PARAMETERS

const HELP = `Usage: price-store query [options] [NAME=VALUE ...]

Answers one GET /prices query from the database and prints the JSON answer
(the same body the HTTP service sends). Parameters are given as NAME=VALUE
arguments, each read like a URL query string ("symbol=BTC&limit=3" works,
"+" and %XX are decoded), or as --NAME VALUE flags (taken literally).

  price-store query symbol=BTC limit=3
  price-store query --symbols BTC,ETH,AR
  price-store query symbol=ETH fromTimestamp=1717113600000 toTimestamp=1717200000000 interval=3600000
  price-store query symbol=ETH fromTimestamp=1717113600000 toTimestamp=1717200000000 interval=3600000 aggregate=candles
  price-store query symbols=BTC,ETH toTimestamp=1717113600000 direction=nearest tolerance=60000
  price-store query symbols=BTC,ETH --times-file times.txt direction=nearest

With --times-file FILE, a batch as-of (store.batchAsOf): each symbol at each
time of FILE (one a line, any time form; blank and # lines skipped); only
symbols, direction, tolerance and validUntil apply. At most 10,000 times and 100,000
entries (symbols × times); see docs/semantics.md, "Batch as-of".

Parameters: ${QUERY_PARAMETERS.join(', ')} (see docs/http.md).
Here fromTimestamp and toTimestamp also take the CLI's other time forms (an
ISO date, now, now-1d, -15m: see docs/semantics.md, "Times"), turned into
milliseconds before the query; GET /prices takes milliseconds only.
Exit code 2 when the query is invalid, 1 on other failures. The database
must exist and must not be open in another process (query a running
"price-store serve" with curl instead).

Options:
  --pretty                    indent the JSON
  --times-file FILE           batch as-of at the times in FILE
  --all-pages                 a list answer (latest-N, history, range, candles, cross-rate range or candles)
                              in pages of limit items (default: the most a query may ask for), following
                              each page's cursor from cursor= (or the first page) to the last; printed as
                              one JSON array
${STORE_OPTIONS_HELP}
`

const options = {
  ...STORE_OPTIONS,
  pretty: { type: 'boolean' },
  'times-file': { type: 'string' },
  'all-pages': { type: 'boolean' },
  ...Object.fromEntries(QUERY_PARAMETERS.map((name) => [name, { type: 'string', multiple: true }])),
} as const

/** `price-store query`: prints the answer to one query. */
export async function queryCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, options, true)
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  const params = new URLSearchParams()
  for (const argument of positionals) {
    if (!argument.includes('=')) throw new UsageError(`expected NAME=VALUE, e.g. symbol=BTC (got ${JSON.stringify(argument)})`)
    for (const [name, value] of new URLSearchParams(argument)) params.append(name, value)
  }
  const flags = values as Record<string, unknown>
  for (const name of QUERY_PARAMETERS) {
    // Repeats stay repeats, so "--limit 1 --limit 2" is refused just as in HTTP.
    for (const value of (flags[name] as string[] | undefined) ?? []) params.append(name, value)
  }
  const timesFile = values['times-file']
  const allPages = values['all-pages'] === true
  if (allPages && timesFile !== undefined) throw new UsageError('--all-pages pages list answers: it cannot be used with --times-file')
  const batch = timesFile === undefined ? undefined : await batchOptionsFromCli(params, timesFile)
  if (batch === undefined) resolveTimes(params)
  const store = await openStore(await resolveStoreConfig(values), { mustExist: true, whileServed: 'ask it over HTTP: GET /prices takes the same parameters' })
  try {
    if (allPages) {
      await printAllPages(store, params, values.pretty === true, io)
      return 0
    }
    const answer = batch === undefined ? await store.query(params).catch(withAllPagesHint) : await store.batchAsOf(batch)
    io.stdout.write(`${toExactJson(answer, values.pretty === true ? 2 : 0)}\n`)
    return 0
  } finally {
    await store.close()
  }
}

/**
 * The CLI's one time syntax for the time parameters: a value that is
 * not digits is read as a time and replaced by its milliseconds, all relative ones
 * from one reading of the clock. Digits stay as given, for the query's own checks.
 * @throws UsageError naming the parameter, the value and the forms taken
 */
function resolveTimes(params: URLSearchParams): void {
  const now = readClockOnce(Date.now)
  for (const name of ['fromTimestamp', 'toTimestamp']) {
    const values = params.getAll(name)
    if (values.every((value) => /^[0-9]+$/.test(value))) continue
    params.delete(name)
    for (const value of values) params.append(name, /^[0-9]+$/.test(value) ? value : String(parseTimeOption(name, value, now)))
  }
}
