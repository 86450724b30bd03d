/**
 * `POST /admin/backup`: an online backup. The running server
 * writes a consistent copy of its store (`store.backup()`: one snapshot,
 * written into `NAME.partial`, checked by opening it, then renamed, so
 * nothing that looks complete is left by a kill) into a new subdirectory
 * `NAME` of the directory the operator configured (`backupDir`,
 * `serve --backup-dir`). The client names the subdirectory only, never a
 * path: a client-chosen path on the server's disk would let a token holder
 * write anywhere the server may.
 *
 * Authorised by the write token (`Authorization: Bearer`, as `POST /prices`):
 * a backup reveals nothing `GET /prices/export` does not, and a writer can
 * already fill the disk, so a second token would add configuration and no
 * protection. Off unless both `backupDir` and `writeToken` are set.
 *
 * The answer is NDJSON, one event per line, sent as the backup goes (a
 * client shows progress, and a long backup keeps its connection busy):
 * `started`, `progress` after each batch copied (records, of the total, and
 * bytes), then `done` with what was written, or `error` with
 * a coded error (the status, 200, was sent before). Refusals before the start
 * are ordinary coded errors: 401/403 credentials, 400 `HTTP_BAD_REQUEST` for a
 * bad name or parameter, 409 `HTTP_BACKUP_EXISTS` for a name taken, 409
 * `HTTP_BACKUP_RUNNING` while another backup runs (one at a time: each reads
 * the whole store). A client that leaves stops its backup (the partial copy
 * is removed), as Ctrl+C stops a local one; so does the server's shutdown.
 *
 * No download (a tar of the copy): the copy must be complete and checked on
 * disk before it can be trusted, and a portable copy to another machine is
 * already served by `GET /prices/export` (NDJSON from one snapshot) and
 * `price-store import`.
 */
import { mkdir, stat } from 'node:fs/promises'
import { isAbsolute, join, resolve } from 'node:path'
import type { ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import { PriceStoreError, describeValue } from '../../../errors.js'
import { toExactJson } from '../../../rules/exact-json.js'
import type { BackupOptions, BackupProgress, BackupResult } from '../../../store/services/backup.js'
import { errorParts, httpErrorAnswer, reportError, type ErrorReportOptions, type HttpAnswer } from '../core/answer.js'
import { drainRequest } from '../core/request-body.js'
import { sendAnswer } from '../core/send.js'
import type { LiveEndpointHandler, LiveRequest } from './endpoint.js'
import { WriteToken } from './write-token.js'

/** Options of `POST /admin/backup` (part of the handler's options). */
export interface BackupEndpointOptions {
  /**
   * The directory on the server's disk that online backups are written into,
   * each into a new subdirectory named by the request (created when missing).
   * With `writeToken`, `POST /admin/backup` is served; without it, it is not.
   */
  readonly backupDir?: string
}

/** What `POST /admin/backup` needs of a store: `PriceStore.backup`. */
export interface BackupSource {
  backup(dir: string, options?: BackupOptions): Promise<BackupResult>
}

/** The parameters `POST /admin/backup` takes. */
export const BACKUP_PARAMETERS = ['name'] as const

/** A backup's name: a single path segment of letters, digits, `.`, `_` and `-`, starting with a letter or digit. */
export const BACKUP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/** One line of the answer's NDJSON body. */
export type BackupEvent =
  | { readonly event: 'started'; readonly name: string }
  | { readonly event: 'progress'; readonly records: number; readonly total: number; readonly bytes: number }
  | {
    readonly event: 'done'; readonly name: string; readonly location: string; readonly records: number
    readonly symbols: number; readonly bytes: number | null; readonly seconds: number
  }
  | { readonly event: 'error'; readonly error: { readonly code: string; readonly message: string } }

const HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/x-ndjson',
  'cache-control': 'no-store',
  // Rare and long: its connection goes with it, so a closing server is not held by a client's idle keep-alive.
  connection: 'close',
}

/** The backup running now. */
interface Running {
  readonly name: string
  readonly stop: AbortController
  readonly done: Promise<void>
}

/** The endpoint and what ends a backup running at shutdown. */
export interface BackupEndpoint {
  readonly handler: LiveEndpointHandler
  /** Stops a running backup (its partial copy is removed); resolves once it has ended. */
  close(): Promise<void>
}

/**
 * The `POST /admin/backup` endpoint over `store`, or `undefined` when it is
 * off (no `backupDir`, no `writeToken`, or a store without `backup`).
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for a `backupDir` that is not a non-empty string
 */
export function createBackupEndpoint(
  store: object, options: BackupEndpointOptions & { readonly writeToken?: string | undefined } & ErrorReportOptions,
): BackupEndpoint | undefined {
  const { backupDir, writeToken } = options
  if (backupDir === undefined) return undefined
  if (typeof backupDir !== 'string' || backupDir.length === 0) {
    throw new PriceStoreError('PRICE_INVALID_OPTIONS', `option backupDir must be a non-empty path (got ${describeValue(backupDir)})`, { details: { field: 'backupDir' } })
  }
  if (writeToken === undefined || typeof (store as Partial<BackupSource>).backup !== 'function') return undefined
  const token = new WriteToken(writeToken)
  const root = resolve(backupDir)
  const source = store as BackupSource
  let running: Running | undefined

  const start = async ({ req, res, params }: LiveRequest): Promise<void> => {
    drainRequest(req) // a body means nothing here
    const refusal = credentialsRefusal(token, req.headers.authorization) ?? paramsRefusal(params)
    if (refusal !== undefined) return sendAnswer(res, refusal)
    const name = params.get('name') ?? defaultName(new Date())
    if (running !== undefined) {
      return sendAnswer(res, httpErrorAnswer(409, 'HTTP_BACKUP_RUNNING', `the backup ${JSON.stringify(running.name)} is running; one backup runs at a time: try again when it is done`))
    }
    const stop = new AbortController()
    let finished = (): void => {}
    running = { name, stop, done: new Promise((resolve) => (finished = resolve)) }
    try {
      await mkdir(root, { recursive: true })
      const target = join(root, name)
      if (await exists(target)) {
        return sendAnswer(res, httpErrorAnswer(409, 'HTTP_BACKUP_EXISTS', `a backup named ${JSON.stringify(name)} exists already; choose another name (or move it away)`))
      }
      if (res.destroyed) return // the client left before the backup began
      await runBackup(source, target, name, stop, res, options)
    } finally {
      running = undefined
      finished()
    }
  }

  return {
    handler: (request) => {
      request.req.on('error', () => {})
      start(request).catch((err: unknown) => {
        reportError(options, err)
        if (request.res.headersSent) request.res.destroy()
        else sendAnswer(request.res, httpErrorAnswer(500, 'HTTP_INTERNAL_ERROR', 'internal error while answering the request'))
      })
    },
    async close() {
      const now = running
      now?.stop.abort()
      await now?.done
    },
  }
}

/** Runs one backup into `target`, its events written as NDJSON lines on `res`. Never throws for a failed backup: the `error` event tells it. */
async function runBackup(source: BackupSource, target: string, name: string, stop: AbortController, res: ServerResponse, options: ErrorReportOptions): Promise<void> {
  const leave = (): void => stop.abort()
  res.once('close', leave)
  const started = performance.now()
  const send = (event: BackupEvent): void => {
    if (!res.destroyed && !res.writableEnded) res.write(`${toExactJson(event)}\n`)
  }
  try {
    res.writeHead(200, HEADERS)
    send({ event: 'started', name })
    const result = await source.backup(target, {
      signal: stop.signal,
      onProgress: ({ records, total, bytes }: BackupProgress) => send({ event: 'progress', records, total, bytes }),
    })
    const { stats } = result
    send({
      event: 'done', name, location: result.location, records: stats.records, symbols: stats.symbols,
      bytes: stats.disk === null ? null : stats.disk.bytes, seconds: Math.round(performance.now() - started) / 1000,
    })
  } catch (err) {
    if (stop.signal.aborted && res.destroyed) return // the client left: no one to tell
    const { status, code, message } = errorParts(err)
    if (status >= 500) reportError(options, err)
    send({ event: 'error', error: { code, message: stop.signal.aborted ? 'the server is shutting down: the backup was stopped and its partial copy removed' : message } })
  } finally {
    res.off('close', leave)
    if (!res.destroyed && !res.writableEnded) res.end()
  }
}

/** 401 without bearer credentials, 403 with another token, as `POST /prices`; `undefined` for the write token. */
function credentialsRefusal(token: WriteToken, authorization: string | undefined): HttpAnswer | undefined {
  const credentials = token.check(authorization)
  if (credentials === 'missing') {
    return httpErrorAnswer(401, 'HTTP_UNAUTHORIZED', 'a backup needs the header "Authorization: Bearer <write token>"', { 'www-authenticate': 'Bearer realm="price-store"' })
  }
  return credentials === 'wrong' ? httpErrorAnswer(403, 'HTTP_FORBIDDEN', 'the bearer token does not allow backups') : undefined
}

/** 400 for an unknown or repeated parameter, or a name that is not one path segment of the allowed characters. */
function paramsRefusal(params: URLSearchParams): HttpAnswer | undefined {
  for (const key of new Set(params.keys())) {
    if (!(BACKUP_PARAMETERS as readonly string[]).includes(key)) return badRequest(`unknown parameter ${JSON.stringify(key)}: /admin/backup takes ${BACKUP_PARAMETERS.join(', ')}`)
    if (params.getAll(key).length > 1) return badRequest(`parameter ${key} is given more than once`)
  }
  const name = params.get('name')
  if (name === null) return undefined
  if (!BACKUP_NAME.test(name) || name.endsWith('.partial') || isAbsolute(name)) {
    return badRequest(
      `name must be a new directory's name, not a path: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit, not ending in ".partial" (got ${describeValue(name)}); the backup is written below the server's --backup-dir`,
    )
  }
  return undefined
}

function badRequest(message: string): HttpAnswer {
  return httpErrorAnswer(400, 'HTTP_BAD_REQUEST', `${message}; no backup was written`)
}

/** `backup-2024-06-01T12-00-00-000Z`: the time the backup was asked for, sortable, without the colons some file systems refuse. */
export function defaultName(at: Date): string {
  return `backup-${at.toISOString().replaceAll(':', '-').replace('.', '-')}`
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined
}
