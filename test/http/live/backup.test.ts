/**
 * POST /admin/backup (issue 23, online backup): off unless a backup
 * directory and a write token are set; the write token checked before
 * anything is written; a name that is one path segment only; one backup at
 * a time; a backup taken while writes go on holds every record committed
 * before it began and exactly the records of its own position; a client
 * that leaves stops its backup and leaves nothing that looks complete.
 */
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { parse } from 'yaml'
import { afterEach, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { PriceStore, type PriceRecord } from '../../../src/index.js'
import type { BackupEvent } from '../../../src/adapters/http/live/backup-endpoint.js'
import { tempDir } from '../../cli/helpers.js'
import { PROVIDER, demoRecords } from '../../support/http/demo-server.js'
import { TOKEN } from '../../support/http/write-server.js'
import { checkSchema } from '../../support/http/schema-check.js'

const AUTH = { authorization: `Bearer ${TOKEN}` }

interface BackupServer {
  readonly store: PriceStore
  readonly running: RunningServer
  readonly url: string
  readonly backupDir: string
  readonly reported: unknown[]
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A server on a memory-level store holding `records`, writing backups below a fresh temporary directory. */
async function startBackupServer(
  options: { records?: readonly object[]; writeToken?: string | undefined; backupDir?: boolean; wrap?: (store: PriceStore) => object } = {},
): Promise<BackupServer> {
  const temp = await tempDir()
  cleanups.push(temp.cleanup)
  const store = await PriceStore.open(new MemoryLevel(), { provider: PROVIDER })
  if (options.records !== undefined) await store.putMany(options.records as never)
  const backupDir = join(temp.dir, 'backups')
  const reported: unknown[] = []
  const writeToken = 'writeToken' in options ? options.writeToken : TOKEN
  const running = await startServer({
    store: (options.wrap?.(store) ?? store) as PriceStore,
    ...(writeToken === undefined ? {} : { writeToken }),
    ...(options.backupDir === false ? {} : { backupDir }),
    onError: (err) => reported.push(err),
  })
  cleanups.push(async () => {
    await running.close()
    await store.close()
  })
  return { store, running, url: running.url, backupDir, reported }
}

/** Reads the NDJSON events of a backup's answer, calling `onEvent` on each as it arrives. */
async function eventsOf(res: Response, onEvent: (event: BackupEvent) => Promise<void> | void = () => {}): Promise<BackupEvent[]> {
  const events: BackupEvent[] = []
  const decoder = new TextDecoder()
  let pending = ''
  for await (const chunk of res.body!) {
    pending += decoder.decode(chunk, { stream: true })
    let end: number
    while ((end = pending.indexOf('\n')) >= 0) {
      const event = JSON.parse(pending.slice(0, end)) as BackupEvent
      pending = pending.slice(end + 1)
      events.push(event)
      await onEvent(event)
    }
  }
  expect(pending).toBe('')
  return events
}

async function listing(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).sort()
}

/** Every record of the store at `location` (a backup), opened and closed again, with its position. */
async function openedBackup(location: string): Promise<{ records: PriceRecord[]; position: number }> {
  const copy = await PriceStore.open(location, { provider: PROVIDER })
  try {
    const records: PriceRecord[] = []
    for await (const record of copy.export()) records.push(record)
    return { records, position: copy.position }
  } finally {
    await copy.close()
  }
}

const key = (record: { symbol: string; timestamp: number; id: string }): string => `${record.symbol}/${record.timestamp}/${record.id}`

/** Polls `check` until it holds; the deadline only bounds a failure. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** A store whose `backup` waits for `gate` first: a backup that is certainly running while a test acts. */
function gatedBackup(gate: Promise<void>): (store: PriceStore) => object {
  return (store) =>
    new Proxy(store, {
      get(target, property) {
        if (property === 'backup') {
          return async (...args: Parameters<PriceStore['backup']>) => {
            await gate
            return target.backup(...args)
          }
        }
        const value: unknown = Reflect.get(target, property, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
}

describe('POST /admin/backup is off by default', () => {
  it('is not served without a backup directory, nor without a write token', async () => {
    for (const options of [{ backupDir: false }, { writeToken: undefined }]) {
      const server = await startBackupServer(options)
      const res = await fetch(`${server.url}/admin/backup`, { method: 'POST', headers: AUTH })
      expect(res.status).toBe(404)
      expect(await listing(server.backupDir)).toEqual([])
    }
  })

  it('takes POST only', async () => {
    const server = await startBackupServer()
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE']) {
      const res = await fetch(`${server.url}/admin/backup`, { method, headers: AUTH })
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('POST')
    }
    expect(await listing(server.backupDir)).toEqual([])
  })
})

describe('POST /admin/backup refusals', () => {
  it('needs the write token: 401 without bearer credentials, 403 with another token; nothing written, the token never echoed', async () => {
    const server = await startBackupServer({ records: demoRecords().slice(0, 50) })
    const cases: [Record<string, string>, number, string][] = [
      [{}, 401, 'HTTP_UNAUTHORIZED'],
      [{ authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` }, 401, 'HTTP_UNAUTHORIZED'],
      [{ authorization: 'Bearer' }, 401, 'HTTP_UNAUTHORIZED'],
      [{ authorization: 'Bearer not-the-token' }, 403, 'HTTP_FORBIDDEN'],
      [{ authorization: `Bearer ${TOKEN}x` }, 403, 'HTTP_FORBIDDEN'],
    ]
    for (const [headers, status, code] of cases) {
      const res = await fetch(`${server.url}/admin/backup?name=nope`, { method: 'POST', headers })
      const text = await res.text()
      expect(res.status).toBe(status)
      expect(JSON.parse(text).error.code).toBe(code)
      expect(text).not.toContain(TOKEN)
      if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
    }
    expect(await listing(server.backupDir)).toEqual([])
  })

  it('takes a name, never a path: 400 HTTP_BAD_REQUEST and nothing written for anything else', async () => {
    const server = await startBackupServer({ records: demoRecords().slice(0, 50) })
    const queries = [
      'name=..', 'name=.', 'name=../escape', 'name=%2Ftmp%2Fx', 'name=a%2Fb', 'name=a%5Cb', 'name=.hidden', 'name=', 'name=a%20b',
      'name=%C3%BC', 'name=x.partial', `name=${'a'.repeat(129)}`, 'name=a%00', 'name=a&name=b', 'dir=%2Ftmp', 'Name=x',
    ]
    for (const query of queries) {
      const res = await fetch(`${server.url}/admin/backup?${query}`, { method: 'POST', headers: AUTH })
      expect({ query, status: res.status }).toEqual({ query, status: 400 })
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(body.error.code).toBe('HTTP_BAD_REQUEST')
      expect(body.error.message).toMatch(/no backup was written/)
    }
    expect(await listing(server.backupDir)).toEqual([])
    expect(await listing(join(server.backupDir, '..'))).toEqual([])
  })

  it('refuses a name taken: 409 HTTP_BACKUP_EXISTS, the backup there untouched', async () => {
    const server = await startBackupServer({ records: demoRecords().slice(0, 50) })
    const first = await fetch(`${server.url}/admin/backup?name=daily`, { method: 'POST', headers: AUTH })
    expect((await eventsOf(first)).at(-1)).toMatchObject({ event: 'done', name: 'daily', records: 50 })
    const again = await fetch(`${server.url}/admin/backup?name=daily`, { method: 'POST', headers: AUTH })
    expect(again.status).toBe(409)
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('HTTP_BACKUP_EXISTS')
    expect((await openedBackup(join(server.backupDir, 'daily'))).records).toHaveLength(50)
  })
})

describe('POST /admin/backup while the server serves and writes', () => {
  it('holds every record committed before it began, and exactly the records of its position', async () => {
    const records = demoRecords()
    const before = records.slice(0, 2400)
    const during = records.slice(2400)
    const server = await startBackupServer()
    // Committed in batches before the backup: each batch's position is known.
    for (let i = 0; i < before.length; i += 400) await server.store.putBatch(before.slice(i, i + 400) as never)
    const positionBefore = server.store.position
    const res = await fetch(`${server.url}/admin/backup?name=live-1`, { method: 'POST', headers: AUTH })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/x-ndjson')
    let wroteDuring = false
    const events = await eventsOf(res, async (event) => {
      // The first progress comes after the backup's snapshot was taken: these writes commit after it.
      if (event.event === 'progress' && !wroteDuring) {
        wroteDuring = true
        for (let i = 0; i < during.length; i += 300) await server.store.putBatch(during.slice(i, i + 300) as never)
      }
    })
    expect(wroteDuring).toBe(true)
    expect(events[0]).toEqual({ event: 'started', name: 'live-1' })
    const done = events.at(-1)
    expect(done).toMatchObject({ event: 'done', name: 'live-1', location: join(server.backupDir, 'live-1'), records: before.length, symbols: 5 })
    const progress = events.filter((event) => event.event === 'progress')
    expect(progress.length).toBeGreaterThan(0)
    for (const event of progress) expect(event).toMatchObject({ total: before.length })
    expect(server.store.position).toBeGreaterThan(positionBefore)

    const copy = await openedBackup(join(server.backupDir, 'live-1'))
    expect(copy.position).toBe(positionBefore)
    expect(copy.records.map(key).sort()).toEqual(before.map(key).sort())
    expect(await listing(server.backupDir)).toEqual(['live-1'])
    // The server went on serving all along: the records written during the backup are there.
    const latest = (await (await fetch(`${server.url}/prices?symbol=BTC`)).json()) as { timestamp: number }[]
    expect(latest[0]!.timestamp).toBe(Math.max(...during.filter((record) => record.symbol === 'BTC').map((record) => record.timestamp)))
  })

  it('names the backup after the time it was asked for when no name is given', async () => {
    const server = await startBackupServer({ records: demoRecords().slice(0, 10) })
    const events = await eventsOf(await fetch(`${server.url}/admin/backup`, { method: 'POST', headers: AUTH }))
    const done = events.at(-1) as Extract<BackupEvent, { event: 'done' }>
    expect(done.name).toMatch(/^backup-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/)
    expect(await listing(server.backupDir)).toEqual([done.name])
  })
})

describe('a backup that fails', () => {
  it('ends its answer with an error event (a fixed message for a server fault, reported to onError), and the next backup runs', async () => {
    let fail = true
    const failing = (store: PriceStore): object =>
      new Proxy(store, {
        get(target, property) {
          if (property === 'backup') {
            return async (...args: Parameters<PriceStore['backup']>) => {
              if (fail) throw new Error('disk on fire at /secret/path')
              return target.backup(...args)
            }
          }
          const value: unknown = Reflect.get(target, property, target)
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
    const server = await startBackupServer({ records: demoRecords().slice(0, 20), wrap: failing })
    const events = await eventsOf(await fetch(`${server.url}/admin/backup?name=broken`, { method: 'POST', headers: AUTH }))
    expect(events).toEqual([
      { event: 'started', name: 'broken' },
      { event: 'error', error: { code: 'HTTP_INTERNAL_ERROR', message: 'internal error while answering the request' } },
    ])
    expect(String(server.reported)).toContain('disk on fire')
    fail = false
    const next = await eventsOf(await fetch(`${server.url}/admin/backup?name=broken`, { method: 'POST', headers: AUTH }))
    expect(next.at(-1)).toMatchObject({ event: 'done', name: 'broken', records: 20 })
  })
})

describe('one backup at a time', () => {
  it('answers 409 HTTP_BACKUP_RUNNING while one runs, and takes the next once it is done', async () => {
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    const server = await startBackupServer({ records: demoRecords().slice(0, 100), wrap: gatedBackup(gate) })
    const first = await fetch(`${server.url}/admin/backup?name=first`, { method: 'POST', headers: AUTH })
    expect(first.status).toBe(200)
    const second = await fetch(`${server.url}/admin/backup?name=second`, { method: 'POST', headers: AUTH })
    expect(second.status).toBe(409)
    const refusal = (await second.json()) as { error: { code: string; message: string } }
    expect(refusal.error.code).toBe('HTTP_BACKUP_RUNNING')
    expect(refusal.error.message).toContain('"first"')
    open()
    expect((await eventsOf(first)).at(-1)).toMatchObject({ event: 'done', name: 'first', records: 100 })
    const third = await fetch(`${server.url}/admin/backup?name=third`, { method: 'POST', headers: AUTH })
    expect((await eventsOf(third)).at(-1)).toMatchObject({ event: 'done', name: 'third', records: 100 })
    expect(await listing(server.backupDir)).toEqual(['first', 'third'])
  })

  it('a client that leaves stops its backup: nothing that looks complete is left, and the next backup runs', async () => {
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    const server = await startBackupServer({ records: demoRecords().slice(0, 100), wrap: gatedBackup(gate) })
    const leave = new AbortController()
    const res = await fetch(`${server.url}/admin/backup?name=left`, { method: 'POST', headers: AUTH, signal: leave.signal })
    const reader = res.body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('"started"')
    leave.abort()
    open()
    // Observable once the backup has ended: the next one is taken.
    let next: Response | undefined
    await until(async () => {
      next = await fetch(`${server.url}/admin/backup?name=after`, { method: 'POST', headers: AUTH })
      if (next.status === 409) await next.body?.cancel()
      return next.status !== 409
    }, 'the stopped backup to end')
    expect((await eventsOf(next!)).at(-1)).toMatchObject({ event: 'done', name: 'after' })
    expect(await listing(server.backupDir)).toEqual(['after'])
    expect(server.reported).toEqual([])
  })

  it('the server\'s close stops a running backup and waits for it', async () => {
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    const server = await startBackupServer({ records: demoRecords().slice(0, 100), wrap: gatedBackup(gate) })
    const res = await fetch(`${server.url}/admin/backup?name=closing`, { method: 'POST', headers: AUTH })
    const events = eventsOf(res).catch(() => [] as BackupEvent[])
    const closed = server.running.close()
    open()
    await closed
    const seen = await events
    expect(seen.some((event) => event.event === 'done')).toBe(false)
    expect(await listing(server.backupDir)).toEqual([])
  })
})

describe('POST /admin/backup conforms to docs/openapi.yaml', () => {
  it('each event line is a BackupEvent, each refusal a documented BackupErrorBody', async () => {
    const doc = parse(await readFile(new URL('../../../docs/openapi.yaml', import.meta.url), 'utf8')) as Record<string, any>
    const operation = doc.paths['/admin/backup'].post
    const server = await startBackupServer({ records: demoRecords().slice(0, 30) })
    const ok = await fetch(`${server.url}/admin/backup?name=${operation.parameters[0].example}`, { method: 'POST', headers: AUTH })
    expect(operation.responses['200'].content[ok.headers.get('content-type')!]).toBeDefined()
    const events = await eventsOf(ok)
    expect(events.map((event) => event.event)).toContain('done')
    for (const event of events) expect(checkSchema(event, { $ref: '#/components/schemas/BackupEvent' }, doc)).toEqual([])
    const refusals: [string, Record<string, string>][] = [['name=a%2Fb', AUTH], ['name=x', {}], ['name=x', { authorization: 'Bearer nope' }], ['name=nightly', AUTH]]
    for (const [query, headers] of refusals) {
      const res = await fetch(`${server.url}/admin/backup?${query}`, { method: 'POST', headers })
      const documented = operation.responses[String(res.status)]
      expect(documented, `${res.status} is documented`).toBeDefined()
      const media = documented.content[res.headers.get('content-type')!]
      expect(checkSchema(await res.json(), media.schema, doc)).toEqual([])
    }
  })
})
