import type { FeedCatalogue, FeedEntry, FeedOptions, FeedStatus } from '../store/services/feeds.js'
import { CliError, UsageError, parseCommandArgs, parseTimeOption } from './args.js'
import { STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import type { CliIo } from './io.js'
import { openStore } from './open-store.js'
import { formatCount } from './progress.js'
import { duration } from './quality-command.js'
import { serverEndpoint } from './server-url.js'
import { SIGNATURE_OPTIONS, SIGNATURE_OPTIONS_HELP, withSignatureFlags } from './signature-flags.js'

const HELP = `Usage: price-store feeds [options]

Prints the feed catalogue: per symbol its status (live, stale or retired),
record count, first and last timestamp, the age of the last, its observed
heartbeat (the median gap between its newest 32 records), the decimals of
its values, the signature verdicts kept for those records, and where its
records come from (provider, data service, signers). See docs/semantics.md,
"Feed catalogue". Reads no record body: counts come from the index, the
rest from the newest records' key columns.

With --url it asks a running server (GET /feeds); otherwise, like "query",
it needs the database to exist and not be open in another process.

Options:
  --url URL                   ask the server at URL (e.g. http://127.0.0.1:9000) instead of opening the database
  --status S                  only feeds of this status: live, stale or retired
  --now TIME                  statuses and ages as of TIME (ms since 1970, an ISO date, now-1h; default now)
  --stale-after K             stale once the last record is older than K heartbeats (default 3)
  --retired-after MS          retired once the last record is older than MS milliseconds (default 604800000, 7 days)
  --limit N                   one page of N feeds (1 to 1000) and the cursor of the next; default: every feed
  --cursor C                  the page after cursor C (the "next" of the page before)
  --json                      print the catalogue as JSON (the object store.feeds() returns; every feed in one when --limit is not given)

A feed's signers are the --evm-signer addresses (as "serve" is given them,
or the config file's signatures.evmSigners); a server reports its own.

${SIGNATURE_OPTIONS_HELP}
${STORE_OPTIONS_HELP}
`

const FEED_FLAGS = {
  url: { type: 'string' },
  status: { type: 'string' },
  now: { type: 'string' },
  'stale-after': { type: 'string' },
  'retired-after': { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  json: { type: 'boolean' },
} as const

/** Where the pages come from: the store, or a server's GET /feeds. */
type PageSource = (options: FeedOptions) => Promise<FeedCatalogue>

/** `price-store feeds`: prints the catalogue as a table or JSON. */
export async function feedsCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(argv, { ...STORE_OPTIONS, ...SIGNATURE_OPTIONS, ...FEED_FLAGS }, false)
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  const options = feedFlags(values)
  const onePage = values.limit !== undefined
  if (values.url !== undefined) {
    const url = values.url
    const endpoint = serverEndpoint(url, '/feeds')
    return print(io, url, values.json === true, onePage, await collect((page) => remotePage(endpoint, url, page), options, onePage))
  }
  const config = withSignatureFlags(await resolveStoreConfig(values), values)
  const store = await openStore(config, { mustExist: true, whileServed: 'ask it over HTTP: price-store feeds --url http://HOST:PORT (GET /feeds)' })
  try {
    return print(io, config.location, values.json === true, onePage, await collect((page) => store.feeds(page), options, onePage))
  } finally {
    await store.close()
  }
}

/** The options the flags give, checked in the CLI's own words. */
function feedFlags(values: Partial<Record<keyof typeof FEED_FLAGS, string | boolean>>): FeedOptions {
  const text = (name: keyof typeof FEED_FLAGS): string | undefined => values[name] as string | undefined
  const options: { -readonly [K in keyof FeedOptions]: FeedOptions[K] } = {}
  const status = text('status')
  if (status !== undefined) {
    if (status !== 'live' && status !== 'stale' && status !== 'retired') throw new UsageError(`--status must be live, stale or retired (got ${JSON.stringify(status)})`)
    options.status = status satisfies FeedStatus
  }
  const now = text('now')
  options.now = now === undefined ? Date.now() : parseTimeOption('now', now)
  const staleAfter = text('stale-after')
  if (staleAfter !== undefined) {
    if (!/^[0-9]{1,9}(\.[0-9]{1,9})?$/.test(staleAfter) || Number(staleAfter) <= 0) throw new UsageError(`--stale-after must be a number of heartbeats above 0, such as 3 or 2.5 (got ${JSON.stringify(staleAfter)})`)
    options.staleAfter = Number(staleAfter)
  }
  const retiredAfter = text('retired-after')
  if (retiredAfter !== undefined) options.retiredAfter = whole('retired-after', retiredAfter, 1, Number.MAX_SAFE_INTEGER)
  const limit = text('limit')
  if (limit !== undefined) options.limit = whole('limit', limit, 1, 1000)
  const cursor = text('cursor')
  if (cursor !== undefined) options.cursor = cursor
  return options
}

function whole(name: string, text: string, least: number, most: number): number {
  const value = Number(text)
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(value) || value < least || value > most) {
    throw new UsageError(`--${name} must be a whole number from ${least} to ${most} (got ${JSON.stringify(text)})`)
  }
  return value
}

/** One page (`--limit`), or every page from the cursor on, joined into one catalogue (`next` null). */
async function collect(source: PageSource, options: FeedOptions, onePage: boolean): Promise<FeedCatalogue> {
  if (onePage) return source(options)
  const feeds: FeedEntry[] = []
  let page = await source({ ...options, limit: 1000 })
  feeds.push(...page.feeds)
  while (page.next !== null) {
    page = await source({ ...options, limit: 1000, cursor: page.next })
    feeds.push(...page.feeds)
  }
  return { ...page, feeds, next: null }
}

/** One page from a server's GET /feeds; its refusal as the CLI's error (exit 2 for a 400, 1 otherwise). */
async function remotePage(endpoint: string, url: string, options: FeedOptions): Promise<FeedCatalogue> {
  const params = new URLSearchParams()
  for (const name of ['limit', 'cursor', 'status', 'now', 'staleAfter', 'retiredAfter'] as const) {
    if (options[name] !== undefined) params.set(name, String(options[name]))
  }
  let res: Response
  try {
    res = await fetch(`${endpoint}?${params}`)
  } catch (err) {
    throw new CliError(`cannot reach ${url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`)
  }
  const text = await res.text()
  if (res.status !== 200) {
    let reason = text.trim().slice(0, 300)
    try {
      const { error } = JSON.parse(text) as { error: { code: string; message: string } }
      reason = `${error.message} [${error.code}]`
    } catch {
      // not the server's JSON error: its text as it is
    }
    const hint = res.status === 404 ? ' (a server older than GET /feeds, or not a price-store server)' : ''
    throw new CliError(`${url} answered ${res.status}${hint}: ${reason}`, res.status === 400 ? 2 : 1)
  }
  return JSON.parse(text) as FeedCatalogue
}

function print(io: CliIo, where: string, json: boolean, onePage: boolean, catalogue: FeedCatalogue): number {
  io.stdout.write(json ? `${JSON.stringify(catalogue, null, 2)}\n` : feedsTable(where, catalogue, onePage))
  return 0
}

/** The catalogue for a person: a few lines, then a table of feeds, then the next page's cursor. */
export function feedsTable(where: string, catalogue: FeedCatalogue, onePage = false): string {
  const providers = catalogue.providers.map((p) => `${p.name} (${p.id})`).join(', ')
  const signers = [...new Set(catalogue.feeds.flatMap((f) => f.sources.flatMap((s) => s.signers)))]
  const lines = [
    `price-store feeds: ${where}`,
    `position   ${catalogue.position}, as of ${new Date(catalogue.now).toISOString()}`,
    `statuses   stale after ${catalogue.staleAfter} heartbeats, retired after ${duration(catalogue.retiredAfter)}`,
    `feeds      ${formatCount(catalogue.feeds.length)}${catalogue.feeds.length === catalogue.total ? '' : ` of ${formatCount(catalogue.total)}`}`,
    `provider   ${providers}`,
    `signers    ${signers.length === 0 ? "the provider's key (no EVM signer allowed)" : signers.join(', ')}`,
  ]
  if (catalogue.feeds.length > 0) {
    const header = ['symbol', 'status', 'records', 'first', 'last', 'age', 'heartbeat', 'decimals', 'verdicts (newest)']
    const rows = catalogue.feeds.map((feed) => [
      feed.symbol, feed.status, formatCount(feed.records), iso(feed.firstTimestamp), iso(feed.lastTimestamp), duration(feed.age),
      feed.heartbeat === null ? '-' : duration(feed.heartbeat), String(feed.decimals), verdictText(feed),
    ])
    const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)))
    const right = new Set([2, 5, 6, 7])
    const line = (cells: readonly string[]): string =>
      cells.map((cell, column) => (right.has(column) ? cell.padStart(widths[column] as number) : cell.padEnd(widths[column] as number))).join('  ').trimEnd()
    lines.push('', line(header), ...rows.map(line))
  }
  if (onePage && catalogue.next !== null) lines.push('', `next page: --cursor ${JSON.stringify(catalogue.next)}`)
  return `${lines.join('\n')}\n`
}

/** `30 valid, 2 invalid` of the sample: the kinds that occur. */
function verdictText(feed: FeedEntry): string {
  const kinds = Object.entries(feed.verdicts).filter(([, count]) => count > 0).map(([kind, count]) => `${count} ${kind}`)
  return kinds.length === 0 ? '-' : kinds.join(', ')
}

function iso(timestamp: number): string {
  return new Date(timestamp).toISOString()
}
