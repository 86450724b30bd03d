import type { BackupEvent } from '../adapters/http/live/backup-endpoint.js'
import { CliError } from './args.js'
import { Interrupt } from './interrupt.js'
import { serverEndpoint } from './server-url.js'
import type { CliIo } from './io.js'
import { Progress, formatCount } from './progress.js'
import { formatBytes } from './stats-command.js'

/** What `price-store backup --url` asks of a server. */
export interface RemoteBackupRequest {
  /** The server's base URL, as given. */
  readonly url: string
  readonly token: string
  /** Where the token came from, for messages (never the token). */
  readonly tokenFile: string
  /** The backup's directory below the server's `--backup-dir`; the server names it when absent. */
  readonly name?: string | undefined
}

/**
 * `price-store backup --url`: one `POST /admin/backup`, its NDJSON events
 * shown as the progress line of a local backup, and its final `done` as the
 * summary. Ctrl+C ends the request, which stops the server's backup (it
 * removes the partial copy). Exit code 2 for a refusal of the request
 * itself (token, name), 1 for a failed backup or an unreachable server.
 */
export async function remoteBackup(request: RemoteBackupRequest, io: CliIo): Promise<number> {
  const endpoint = backupUrl(request.url, request.name)
  const interrupt = new Interrupt(io)
  let done = { records: 0, total: 0 }
  const progress = new Progress(io, 'backing up', { fractionDone: () => (done.total === 0 ? undefined : done.records / done.total) })
  try {
    const res = await fetch(endpoint, { method: 'POST', headers: { authorization: `Bearer ${request.token}` }, signal: interrupt.abortSignal })
    if (res.status !== 200) throw await refusal(res, request)
    let finished: Extract<BackupEvent, { event: 'done' }> | undefined
    for await (const event of ndjsonEvents(res)) {
      if (event.event === 'progress') {
        const copied = event.records - done.records
        done = event // before add(), which draws the fraction done
        progress.add(copied)
      } else if (event.event === 'done') finished = event
      else if (event.event === 'error') {
        progress.finish()
        throw new CliError(`the server's backup failed: ${event.error.message} [${event.error.code}]; it wrote no backup (its partial copy is removed)`)
      }
    }
    const { seconds } = progress.finish()
    if (finished === undefined) {
      throw new CliError(`the connection to ${request.url} ended before the backup finished: the server stops it and removes its partial copy, so no backup was written`)
    }
    const size = finished.bytes === null ? '' : `, ${formatBytes(finished.bytes)}`
    io.stdout.write(
      `backed up ${formatCount(finished.records)} records of ${formatCount(finished.symbols)} symbols from ${request.url} to ${finished.location} on the server in ${seconds.toFixed(1)} s${size}\n`,
    )
    return 0
  } catch (err) {
    progress.finish()
    if (interrupt.signal !== undefined) {
      io.stderr.write(`price-store backup: interrupted by ${interrupt.signal}: the server stops the backup and removes its partial copy, so no backup was written\n`)
      return interrupt.exitCode
    }
    if (err instanceof CliError) throw err
    throw new CliError(`cannot reach the server at ${request.url}: ${reasonOf(err)}`, 1, { cause: err })
  } finally {
    interrupt.dispose()
  }
}

/** `URL/admin/backup[?name=NAME]`. @throws UsageError for a URL that is not http(s) or has a query */
function backupUrl(url: string, name: string | undefined): string {
  const base = serverEndpoint(url, '/admin/backup')
  return name === undefined ? base : `${base}?${new URLSearchParams({ name }).toString()}`
}

/** The error for an answer other than 200, in the server's words where it sent a coded error. */
async function refusal(res: Response, request: RemoteBackupRequest): Promise<CliError> {
  const body = (await res.json().catch(() => undefined)) as { error?: { code?: string; message?: string } } | undefined
  const said = body?.error?.message === undefined ? `HTTP ${res.status}` : `${body.error.message} [${body.error.code}]`
  if (res.status === 401 || res.status === 403) return new CliError(`the server at ${request.url} refused the token from ${request.tokenFile}: ${said}`, 2)
  if (res.status === 404 || res.status === 405) {
    return new CliError(`the server at ${request.url} takes no backups (${said}): start it with --backup-dir DIR and --write-token-file FILE`, 2)
  }
  return new CliError(`the server at ${request.url} refused the backup: ${said}`, res.status === 400 ? 2 : 1)
}

/** The answer's lines, each parsed as one event. */
async function* ndjsonEvents(res: Response): AsyncGenerator<BackupEvent> {
  if (res.body === null) return
  const decoder = new TextDecoder()
  let pending = ''
  for await (const chunk of res.body) {
    pending += decoder.decode(chunk as Uint8Array, { stream: true })
    let end: number
    while ((end = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, end)
      pending = pending.slice(end + 1)
      if (line.trim() !== '') yield JSON.parse(line) as BackupEvent
    }
  }
}

function reasonOf(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause
  if (typeof cause?.code === 'string') return cause.code
  return err instanceof Error ? err.message : String(err)
}
