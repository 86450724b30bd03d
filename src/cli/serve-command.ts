import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, startServer, type RunningServer } from '../adapters/http/node.js'
import {
  DEFAULT_LIGHT_QUERY_COST,
  DEFAULT_MAX_ANSWERS_IN_FLIGHT,
  DEFAULT_MAX_CONCURRENT_QUERIES,
  DEFAULT_MAX_QUEUED_QUERIES,
  DEFAULT_QUERY_TIMEOUT_MS,
  isQueryLimitError,
  type QueryLimitOptions,
} from '../adapters/http/admission/query-limits.js'
import { DEFAULT_MAX_STREAM_SUBSCRIBERS, DEFAULT_STREAM_HEARTBEAT_MS, type StreamEndpointOptions } from '../adapters/http/live/stream-endpoint.js'
import { DEFAULT_MAX_EXPORTS, type ExportEndpointOptions } from '../adapters/http/live/export-endpoint.js'
import { DEFAULT_MAX_WS_CONNECTIONS, DEFAULT_WS_MAX_SUBSCRIPTIONS, DEFAULT_WS_MAX_SYMBOLS, type WebSocketOptions } from '../adapters/http/ws/ws-options.js'
import type { AccessLogEntry, ObservationOptions } from '../adapters/http/observe/access-log.js'
import { DEFAULT_MAX_WRITE_BYTES, type WriteEndpointOptions } from '../adapters/http/live/write-endpoint.js'
import { readCursorSecret } from './cursor-secret-file.js'
import { readKeysFile } from './read-keys-file.js'
import { environmentPort, readEnvironment, resolveWriteToken, ENVIRONMENT_HELP, type WriteTokenSource } from './environment.js'
import { MAX_TIMER_MS } from '../rules/options.js'
import { isPriceStoreError } from '../errors.js'
import type { PriceStore } from '../store/price-store.js'
import { CliError, UsageError, parseCommandArgs, parseIntegerOption } from './args.js'
import { DEFAULT_DB, STORE_OPTIONS, STORE_OPTIONS_HELP, resolveStoreConfig } from './config.js'
import { SIGNATURE_OPTIONS, SIGNATURE_OPTIONS_HELP, withSignatureFlags } from './signature-flags.js'
import type { CliIo } from './io.js'
import { LIMIT_OPTIONS, LIMIT_OPTIONS_HELP, withLimitFlags } from './limit-options.js'
import { backupDirOption } from './backup-command.js'
import { ensureDemo } from './load-demo.js'
import { openServedStore } from './served-store.js'
import { startLiveDemo, type LiveDemo } from './live-demo.js'
import { countOf, formatCount } from './progress.js'
import { ENCODING_FLAGS_HELP, encodingOptions } from './encoding-flags.js'
import { CLUSTER_FLAGS, CLUSTER_FLAGS_HELP, defaultNodeId, parseClusterFlags } from './cluster-flags.js'
import { scheduleSnapshots, type SnapshotSchedule } from './snapshot-schedule.js'
import { FORKED, finishRebuild, rebuildServedStore, reopenRebuilt, startServedNode } from './node-rebuild.js'
import type { ClusterNode } from '../cluster/cluster-node.js'

const DEFAULT_PORT = 9000
const DEFAULT_HOST = '127.0.0.1'

const HELP = `Usage: price-store serve [options]

Serves GET /prices, TradingView UDF under /udf/ and a chart page at /
(see docs/http.md) from the database until SIGINT (Ctrl+C) or SIGTERM, then
stops gracefully: it stops accepting connections, finishes the requests in
flight, closes the database and exits with 0.

Options:
  --port N                    port to listen on (default $PORT, else ${DEFAULT_PORT}; 0 picks a free one)
  --host HOST                 interface to listen on (default $PRICE_STORE_HOST, else ${DEFAULT_HOST}; 0.0.0.0 for all)
  --demo-if-empty             write the demo data set first when the database holds no records; a demo
                              database of another format (at ${DEFAULT_DB}, or one written by --demo-if-empty
                              or "price-store demo") is rebuilt (the one at ${DEFAULT_DB} is kept aside)
  --live-demo                 on a demo database: continue its data up to now, then write a new price of
                              each demo token every second while serving (a seeded random walk), so the
                              chart and /prices/stream move; "npm start" turns it on. Any other database
                              is left alone
  --no-live-demo              no live demo (wins over --live-demo: npm start -- --no-live-demo)
  --retention-days N          keep only the last N days: older records are removed in the background, an
                              hour at a time (counted back from the newest record or now, whichever is
                              earlier; overrides "retention" in --config; see "price-store prune")
  --access-log                write one JSON line per request to standard output (time, method, path,
                              query, endpoint, form, status, bytes, durationMs, remoteAddress; never a
                              header or a token); off by default
  --no-metrics                do not serve GET /metrics (Prometheus text format; served by default)
${ENCODING_FLAGS_HELP}

Limits (so one client cannot starve the others; see docs/reliability.md):
  --light-query-cost N        a query costing at most N (records returned, plus 1/8 per record only read, as the
                              store estimates them) is light and runs at once (default ${DEFAULT_LIGHT_QUERY_COST})
  --max-concurrent-queries N  heavy queries run at once (default ${DEFAULT_MAX_CONCURRENT_QUERIES}); they wait in a line ordered by
                              arrival plus cost, so cheaper ones pass costlier ones
  --max-answers-in-flight N   heavy answers being sent at once, to slow clients included (default ${DEFAULT_MAX_ANSWERS_IN_FLIGHT})
  --max-queued-queries N      heavy queries that may wait for a slot (default ${DEFAULT_MAX_QUEUED_QUERIES}); more get
                              503 HTTP_BUSY with retry-after
  --query-timeout-ms N        time budget of a query, waiting included (default ${DEFAULT_QUERY_TIMEOUT_MS}; 0 = none);
                              then 503 HTTP_QUERY_TIMEOUT (or HTTP_BUSY if it never started)
  --headers-timeout-ms N      time to receive the request line and headers (default ${DEFAULT_HEADERS_TIMEOUT_MS}); then 408
  --request-timeout-ms N      time to receive the whole request (default ${DEFAULT_REQUEST_TIMEOUT_MS}; 0 = none); then 408
  --max-stream-subscribers N  live streams (GET /prices/stream) open at once (default ${DEFAULT_MAX_STREAM_SUBSCRIBERS}); more get
                              503 HTTP_BUSY with retry-after
  --stream-heartbeat-ms N     time an idle live stream waits before sending a heartbeat comment, so proxies
                              keep it open (default ${DEFAULT_STREAM_HEARTBEAT_MS})
  --max-exports N             exports (GET /prices/export) sent at once (default ${DEFAULT_MAX_EXPORTS}; 0 = none); more get
                              503 HTTP_BUSY with retry-after
  --max-ws-connections N      WebSocket connections (/ws) open at once (default ${DEFAULT_MAX_WS_CONNECTIONS}; 0 = no /ws); more
                              are closed with code 4001
  --ws-max-subscriptions N    subscriptions one WebSocket connection may hold (default ${DEFAULT_WS_MAX_SUBSCRIPTIONS})
  --ws-max-symbols N          symbols one WebSocket connection may follow over its subscriptions (default ${DEFAULT_WS_MAX_SYMBOLS})

Writes (POST /prices, off unless a token is given; see docs/http.md):
  --write-token-file FILE     take records on POST /prices from requests with "Authorization: Bearer TOKEN",
                              TOKEN being the file's content (one final newline dropped); keep the file
                              readable by its owner only (chmod 600)
  --max-write-bytes N         largest POST /prices body (default ${DEFAULT_MAX_WRITE_BYTES}); larger gets 413
  --backup-dir DIR            serve POST /admin/backup (with the write token): the server writes a backup of
                              the database into a new subdirectory of DIR while it serves ("price-store
                              backup --url"); a request names the subdirectory only, never a path

Reads (off unless a file is given; see docs/http.md, "Read keys"):
  --read-keys FILE            meter readers by key ("Authorization: Bearer KEY" or "x-api-key: KEY"): FILE is
                              JSON naming each key's id and SHA-256 and its budget, delay, symbols and fields,
                              and whether readers without a key may read

Pages (GET /prices?...&cursor=, see docs/http.md):
  --cursor-secret-file FILE   sign page cursors with FILE's content (at least 32 random bytes, one final
                              newline dropped) instead of the database's own secret: give every node behind
                              one balancer the same file so each accepts the others' cursors

${CLUSTER_FLAGS_HELP}

${LIMIT_OPTIONS_HELP}

${SIGNATURE_OPTIONS_HELP}

${STORE_OPTIONS_HELP}

${ENVIRONMENT_HELP}
`

/** `price-store serve`: the HTTP service, until asked to stop. */
export async function serveCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs(
    argv,
    {
      ...STORE_OPTIONS,
      ...LIMIT_OPTIONS,
      ...SIGNATURE_OPTIONS,
      port: { type: 'string' },
      host: { type: 'string' },
      'demo-if-empty': { type: 'boolean' },
      'live-demo': { type: 'boolean' },
      'no-live-demo': { type: 'boolean' },
      'retention-days': { type: 'string' },
      'access-log': { type: 'boolean' },
      'no-metrics': { type: 'boolean' },
      'no-compression': { type: 'boolean' },
      cors: { type: 'string' },
      'max-concurrent-queries': { type: 'string' },
      'max-queued-queries': { type: 'string' },
      'max-answers-in-flight': { type: 'string' },
      'light-query-cost': { type: 'string' },
      'query-timeout-ms': { type: 'string' },
      'headers-timeout-ms': { type: 'string' },
      'request-timeout-ms': { type: 'string' },
      'write-token-file': { type: 'string' },
      'read-keys': { type: 'string' },
      'cursor-secret-file': { type: 'string' },
      'max-write-bytes': { type: 'string' },
      'backup-dir': { type: 'string' },
      'max-stream-subscribers': { type: 'string' },
      'stream-heartbeat-ms': { type: 'string' },
      'max-exports': { type: 'string' },
      'max-ws-connections': { type: 'string' },
      'ws-max-subscriptions': { type: 'string' },
      'ws-max-symbols': { type: 'string' },
      ...CLUSTER_FLAGS,
    },
    false,
  )
  if (values.help === true) {
    io.stdout.write(HELP)
    return 0
  }
  // A flag, else its environment variable (containers), else the default.
  const env = readEnvironment()
  const port = parseIntegerOption('port', values.port, 0, 65_535) ?? environmentPort(env) ?? DEFAULT_PORT
  const host = values.host ?? env.host ?? DEFAULT_HOST
  const limits = parseLimits(values)
  const token = await resolveWriteToken(values['write-token-file'], env, io)
  const writes = writeOptions(token, values['max-write-bytes'])
  const retentionDays = parseIntegerOption('retention-days', values['retention-days'], 1, 1_000_000)
  const resolved = withSignatureFlags(withLimitFlags(await resolveStoreConfig(values), values), values)
  const retained = retentionDays === undefined ? resolved : { ...resolved, retention: { days: retentionDays } }
  const cursorSecret = await readCursorSecret(values['cursor-secret-file'], env, io)
  const { readKeys, summary: readersLine } = await readKeysFile(values['read-keys'])
  const config = cursorSecret === undefined ? retained : { ...retained, cursorSecret }
  const demoIfEmpty = values['demo-if-empty'] === true
  const liveDemo = values['live-demo'] === true && values['no-live-demo'] !== true
  const cluster = parseClusterFlags(values)
  const encoding = encodingOptions(values['no-compression'], values.cors)
  if (cluster !== undefined && liveDemo) throw new UsageError(`--live-demo cannot be used with --${cluster.follow === undefined ? 'nats' : 'follow'}: a node takes its records from the ${cluster.follow === undefined ? 'stream' : 'primary'}`)
  if (cluster !== undefined && demoIfEmpty) throw new UsageError(`--demo-if-empty cannot be used with --${cluster.follow === undefined ? 'nats' : 'follow'}: a node takes its records from the ${cluster.follow === undefined ? 'stream' : 'primary'}`)
  if (cluster?.follow !== undefined && token.token !== undefined) throw new UsageError(`${values['write-token-file'] === undefined ? `a write token (from ${token.from})` : '--write-token-file'} cannot be used with --follow: a follower takes no writes (write to its primary)`)
  // A rebuild from the stream that a killed process left half done is finished (or removed) first.
  if (cluster?.options !== undefined) await finishRebuild(config.location, io)
  let store = await openServedStore(config, demoIfEmpty, io)
  let running: RunningServer | undefined
  let node: ClusterNode | undefined
  let live: LiveDemo | undefined
  let snapshots: SnapshotSchedule | undefined
  let unsubscribe = (): void => {}
  try {
    // Into an empty store, or finishing one an interrupted run left half written.
    if (demoIfEmpty) await ensureDemo(store, config.location, io)
    if (liveDemo) live = await startLiveDemo(store, config.location, io)
    let served = cluster === undefined ? undefined : await startServedNode(store, config, cluster, io)
    if (served !== undefined) ({ store, node } = served)
    if (cluster?.options !== undefined && cluster.snapshots !== undefined) {
      snapshots = scheduleSnapshots(() => store, cluster.options, cluster.options.nodeId ?? defaultNodeId(config.location), cluster.snapshots, io)
    }
    const observation = { metrics: values['no-metrics'] !== true, ...(values['access-log'] === true ? { accessLog: accessLogWriter(io) } : {}) }
    const backups = await backupDirOption(values['backup-dir'], token.token !== undefined, config.location)
    const serverOptions = (replica: ClusterNode | undefined): ServerOptions => ({
      ...limits, ...writes, ...observation, ...backups, ...encoding, ...(readKeys === undefined ? {} : { readKeys }),
      ...(replica === undefined ? {} : {
        replica,
        ...(cluster?.maxLag === undefined ? {} : { maxLag: cluster.maxLag }),
        ...(cluster?.maxStalenessMs === undefined ? {} : { maxStalenessMs: cluster.maxStalenessMs }),
      }),
    })
    running = await listen(store, host, port, serverOptions(node), io)
    const endpoint = `${running.url}/prices`
    const symbols = await store.symbols()
    const tokenFile = token.file
    const importHint = tokenFile === undefined ? 'price-store import FILE' : `price-store import --url ${running.url} --token-file ${tokenFile} FILE`
    const lines = [
      `price-store is serving ${countOf(symbols.length, 'symbol')} from ${config.location}`,
      `  ${endpoint}`,
      `  ${running.url}/ shows charts (TradingView UDF at /udf/)`,
      ...(readersLine === undefined ? [] : [`  reads are metered: ${readersLine}`]),
      ...(writes.writeToken === undefined ? [] : [`  POST ${endpoint} takes records (NDJSON or a JSON array) with the bearer token from ${token.from}`]),
      ...(backups.backupDir === undefined ? [] : [`  POST ${running.url}/admin/backup writes backups into ${backups.backupDir} (price-store backup --url ${running.url} --token-file ${token.file ?? 'FILE'})`]),
      ...(node === undefined ? [] : [cluster?.follow === undefined
        ? `  a node of the cluster on stream ${node.stream} (at position ${store.position}; writes go through the stream)`
        : `  a read copy of ${node.stream} (at position ${store.position})`]),
      `  ${endpoint}/stream streams commits live (Server-Sent Events)`,
      ...(limits.maxWsConnections === 0 ? [] : [`  ${running.url.replace(/^http/, 'ws')}/ws takes WebSocket subscriptions to the same commits`]),
      ...(live === undefined ? [] : [
        '  live demo: a new price of every demo token each second (off with --no-live-demo); watch it with',
        `  curl -N '${endpoint}/stream?symbols=BTC'`,
      ]),
      `  ${endpoint}/export, ${running.url}/stats, ${running.url}/health${observation.metrics ? ` and ${running.url}/metrics` : ''} for operations`,
      '',
      symbols.length === 0 ? `The database is empty: add records with "${importHint}". Then try:` : 'Try:',
      ...(await exampleQueries(store, symbols, endpoint)).map((url) => `  curl '${url}'`),
      '',
      'Press Ctrl+C to stop.',
    ]
    // Listening for Ctrl+C before the banner says to press it: whoever reads the banner may signal at once.
    // The listener stays until the end, so a second Ctrl+C while requests finish exits at once (processIo).
    const stopped = new Promise<string>((resolve) => (unsubscribe = io.onShutdown(resolve)))
    // With --access-log, standard output carries only the log's JSON lines.
    ;(observation.accessLog === undefined ? io.stdout : io.stderr).write(`${lines.join('\n')}\n`)

    let signal: string
    for (;;) {
      const woken = await Promise.race([stopped, served?.forked ?? stopped])
      if (woken !== FORKED) {
        signal = woken
        break
      }
      // Rebuilt beside the store while it serves; then the server stops for the swap, and listens again on its port.
      if (cluster?.options === undefined || !(await rebuildServedStore(store, config, cluster.options, io, true))) {
        signal = await stopped
        break
      }
      const { port: taken } = new URL(running.url)
      await running.close()
      running = undefined
      await node?.stop()
      node = undefined
      store = await reopenRebuilt(store, config, io)
      served = await startServedNode(store, config, cluster, io)
      ;({ store, node } = served)
      running = await listen(store, host, Number(taken), serverOptions(node), io)
      io.stderr.write(`serving the rebuilt store at ${running.url} (at position ${store.position})\n`)
    }
    io.stderr.write(`${signal}: stopping (finishing requests in flight)...\n`)
    // The writer first: nothing is written once the streams end and the store closes.
    await live?.stop()
    await snapshots?.stop()
    await running.close()
    running = undefined
    await node?.stop()
    node = undefined
    await store.close()
    io.stderr.write('stopped\n')
    return 0
  } finally {
    unsubscribe()
    // Reached with a server or an open store only on failure; close both quietly.
    await live?.stop()
    await snapshots?.stop()
    await running?.close().catch(() => {})
    await node?.stop().catch(() => {})
    await store.close().catch(() => {})
  }
}

/** The server limits given as flags; absent flags keep the library's defaults. */
interface ServeLimits
  extends QueryLimitOptions, Pick<StreamEndpointOptions, 'maxStreamSubscribers' | 'streamHeartbeatMs'>, Pick<ExportEndpointOptions, 'maxExports'>,
    Pick<WebSocketOptions, 'maxWsConnections' | 'wsMaxSubscriptions' | 'wsMaxSymbols'> {
  readonly headersTimeoutMs?: number
  readonly requestTimeoutMs?: number
}

function parseLimits(values: Readonly<Record<string, string | string[] | boolean | undefined>>): ServeLimits {
  const text = (name: string): string | undefined => {
    const value = values[name]
    return typeof value === 'string' ? value : undefined
  }
  const entries: [keyof ServeLimits, number | undefined][] = [
    ['maxConcurrentQueries', parseIntegerOption('max-concurrent-queries', text('max-concurrent-queries'), 1, 1_000_000)],
    ['maxQueuedQueries', parseIntegerOption('max-queued-queries', text('max-queued-queries'), 0, 1_000_000)],
    ['maxAnswersInFlight', parseIntegerOption('max-answers-in-flight', text('max-answers-in-flight'), 1, 1_000_000)],
    ['lightQueryCost', parseIntegerOption('light-query-cost', text('light-query-cost'), 0, Number.MAX_SAFE_INTEGER)],
    ['queryTimeoutMs', parseIntegerOption('query-timeout-ms', text('query-timeout-ms'), 0, MAX_TIMER_MS)],
    ['requestTimeoutMs', parseIntegerOption('request-timeout-ms', text('request-timeout-ms'), 0, MAX_TIMER_MS)],
    ['headersTimeoutMs', parseIntegerOption('headers-timeout-ms', text('headers-timeout-ms'), 1, MAX_TIMER_MS)],
    ['maxStreamSubscribers', parseIntegerOption('max-stream-subscribers', text('max-stream-subscribers'), 0, 1_000_000)],
    ['streamHeartbeatMs', parseIntegerOption('stream-heartbeat-ms', text('stream-heartbeat-ms'), 1, MAX_TIMER_MS)],
    ['maxExports', parseIntegerOption('max-exports', text('max-exports'), 0, 1_000_000)],
    ['maxWsConnections', parseIntegerOption('max-ws-connections', text('max-ws-connections'), 0, 1_000_000)],
    ['wsMaxSubscriptions', parseIntegerOption('ws-max-subscriptions', text('ws-max-subscriptions'), 1, 10_000)],
    ['wsMaxSymbols', parseIntegerOption('ws-max-symbols', text('ws-max-symbols'), 1, 1_000_000)],
  ]
  const limits = Object.fromEntries(entries.filter(([, value]) => value !== undefined)) as ServeLimits
  const request = limits.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const headers = limits.headersTimeoutMs ?? Math.min(DEFAULT_HEADERS_TIMEOUT_MS, request === 0 ? DEFAULT_HEADERS_TIMEOUT_MS : request)
  if (request !== 0 && headers > request) {
    throw new UsageError(`--headers-timeout-ms (${headers}) must not be more than --request-timeout-ms (${request})`)
  }
  return limits
}

/** How often a repeated refusal (HTTP_BUSY, HTTP_QUERY_TIMEOUT, PRICE_LOG_UNAVAILABLE) is logged at most: a flood must not flood stderr. */
const LIMIT_LOG_EVERY_MS = 10_000

/** The server's onError: the real reason behind each 5xx, with refusals summed up rather than logged one by one. */
export function requestErrorLogger(io: CliIo, now: () => number = Date.now): (err: unknown) => void {
  const last = new Map<string, { at: number; skipped: number }>()
  return (err) => {
    // Refusals a busy server or a NATS outage makes by the hundred: logged at most once per code and period.
    if (isQueryLimitError(err) || isPriceStoreError(err, 'PRICE_LOG_UNAVAILABLE')) {
      const seen = last.get(err.code)
      const at = now()
      if (seen !== undefined && at - seen.at < LIMIT_LOG_EVERY_MS) {
        seen.skipped++
        return
      }
      const more = seen === undefined || seen.skipped === 0 ? '' : ` (and ${formatCount(seen.skipped)} more like it since the last report)`
      last.set(err.code, { at, skipped: 0 })
      io.stderr.write(`refused a request: ${err.message} [${err.code}]${more}\n`)
      return
    }
    // The client gets a generic 500; the operator gets the real reason.
    io.stderr.write(`error while answering a request: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  }
}

/** The `accessLog` of `serve --access-log`: each entry as one JSON line on standard output. */
export function accessLogWriter(io: CliIo): (entry: AccessLogEntry) => void {
  return (entry) => void io.stdout.write(`${JSON.stringify(entry)}\n`)
}

/** What `listen` passes to the server besides the store and address. */
type ServerOptions = ServeLimits & WriteEndpointOptions & ObservationOptions & { replica?: ClusterNode; maxLag?: number; maxStalenessMs?: number }

async function listen(store: PriceStore, host: string, port: number, limits: ServerOptions, io: CliIo): Promise<RunningServer> {
  try {
    return await startServer({ store, host, port, ...limits, onError: requestErrorLogger(io) })
  } catch (err) {
    const code = (err as { code?: string }).code
    const where = `${host}:${port}`
    if (code === 'EADDRINUSE') {
      // `npm start` passes flags on only after "--": the form people starting with it need.
      const other = port === 65_535 ? port - 1 : port + 1
      throw new CliError(
        `cannot listen on ${where}: the port is in use; choose another with --port ${other} (with npm start: npm start -- --port ${other})`,
        1,
        { cause: err },
      )
    }
    if (code === 'EACCES') throw new CliError(`cannot listen on ${where}: permission denied (choose a port above 1023)`, 1, { cause: err })
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new CliError(`cannot listen on ${where}: no such address on this machine (check --host)`, 1, { cause: err })
    }
    throw err
  }
}

/** Three queries that answer something on the data actually stored: latest, several, a day by the hour. */
async function exampleQueries(store: PriceStore, symbols: readonly string[], endpoint: string): Promise<string[]> {
  const pick = (wanted: readonly string[]): string[] => {
    const present = wanted.filter((symbol) => symbols.includes(symbol))
    return present.length > 0 ? present : symbols.slice(0, wanted.length)
  }
  const [main = 'BTC'] = pick(['BTC'])
  const several = symbols.length === 0 ? ['BTC', 'ETH', 'AR'] : pick(['BTC', 'ETH', 'AR'])
  const [latest] = symbols.length === 0 ? [] : await store.latest(main)
  const to = latest?.timestamp ?? Date.now()
  const from = Math.max(0, to - 86_400_000)
  return [
    `${endpoint}?symbol=${encode(main)}`,
    `${endpoint}?symbols=${several.map(encode).join(',')}`,
    `${endpoint}?symbol=${encode(main)}&fromTimestamp=${from}&toTimestamp=${to}&interval=3600000`,
  ]
}

/** Percent-encodes a symbol for a URL pasted inside single quotes in a shell. */
function encode(symbol: string): string {
  return encodeURIComponent(symbol).replaceAll("'", '%27')
}

/** The write endpoint's options from the write token (environment.ts) and `--max-write-bytes`; none without a token. */
function writeOptions({ token: writeToken }: WriteTokenSource, maxBytes: string | undefined): WriteEndpointOptions {
  const maxWriteBytes = parseIntegerOption('max-write-bytes', maxBytes, 1, 2 ** 31 - 1)
  if (writeToken === undefined) {
    if (maxWriteBytes !== undefined) throw new UsageError('--max-write-bytes needs --write-token-file (writes are off without a token)')
    return {}
  }
  return maxWriteBytes === undefined ? { writeToken } : { writeToken, maxWriteBytes }
}
