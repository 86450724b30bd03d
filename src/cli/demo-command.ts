import { DEMO_END, DEMO_SIGNER, DEMO_TOKENS } from '../demo/demo-data.js'
import { UsageError, parseCommandArgs, parseTimeOption } from './args.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import { readDemoMark } from './demo-marker.js'
import type { CliIo } from './io.js'
import { writeDemoData, writeMarkedDemo } from './load-demo.js'
import { openStore } from './open-store.js'
import { formatCount } from './progress.js'

const HELP = `Usage: price-store demo [options]

Writes a deterministic, realistic demo data set: ${DEMO_TOKENS.length} tokens
(${DEMO_TOKENS.map((token) => token.symbol).join(', ')}),
one record per token every 10 s, each with a liteEvmSignature by the
published demo key (address ${DEMO_SIGNER}: verify the demo with
--evm-signer ${DEMO_SIGNER}; never allow it for real prices). The same
options always write the same records, so running it twice does not
duplicate data.

Options:
  --days N                    length of the data set in days (default 2; decimals allowed)
  --end TIME                  when the data ends: ms since 1970, an ISO date, "now" or now-1d
                              (default ${new Date(DEMO_END).toISOString()})
  --seed TEXT                 another seed gives other prices, ids and signatures
${STORE_OPTIONS_HELP}
`

const DAY_MS = 86_400_000

/** `price-store demo`: writes the demo data set into the store. */
export async function demoCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    { ...STORE_OPTIONS, days: { type: 'string' }, end: { type: 'string' }, seed: { type: 'string' } },
    false,
  )
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  const days = values.days === undefined ? 2 : parseDays(values.days)
  const end = values.end === undefined ? DEMO_END : parseTimeOption('end', values.end)
  if (end - Math.round(days * DAY_MS) < 0) throw new UsageError(`--end must be at least --days after 1970 (got ${JSON.stringify(values.end)})`)
  const config = await resolveStoreConfig(values)
  const store = await openStore(config, { mustExist: false })
  try {
    const demo = { durationMs: Math.round(days * DAY_MS), end, ...(values.seed === undefined ? {} : { seed: values.seed }) }
    // Demo data alone (an empty store, or one holding only an unfinished demo) is marked, so a later release may
    // rebuild it and an interrupted run is known as such; demo data added to someone's records stays theirs.
    const demoOnly = (await store.symbols()).length === 0 || (await readDemoMark(config.location))?.finished === false
    const { count, seconds, rate } = demoOnly
      ? await writeMarkedDemo(store, config.location, io, 'price-store demo', demo)
      : await writeDemoData(store, io, demo)
    io.stdout.write(
      `wrote ${formatCount(count)} demo records (${DEMO_TOKENS.length} tokens, ${days} days up to ${new Date(end).toISOString()}) in ${seconds.toFixed(1)} s (${rate})\n`,
    )
    return 0
  } finally {
    await store.close()
  }
}

function parseDays(text: string): number {
  const days = /^[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : Number.NaN
  if (!(days > 0 && days <= 3650)) throw new UsageError(`--days must be a number of days above 0, at most 3650 (got ${JSON.stringify(text)})`)
  return days
}
