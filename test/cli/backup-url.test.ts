/**
 * `price-store backup --url URL --token-file F [NAME]` against a running
 * `price-store serve --write-token-file F --backup-dir DIR` (both in this
 * process): the server writes the backup into DIR/NAME while it serves, the
 * command prints its summary, refusals read plainly, and the lock message a
 * local backup gets while the server runs points to --url.
 */
import { chmod, readdir, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import { runCli } from '../../src/cli/run-cli.js'
import { demoDbForFile, memoryIo, run, startServe } from './helpers.js'

const TOKEN = 'bak_3c9e1f7a2b5d48e0a6c4f1e9d7b3a5c2'
/** Records of the demo database: 0.05 days of 20 tokens. */
const DEMO_RECORDS = 8_640

let dir: string
let db: string
demoDbForFile((d, b) => {
  dir = d
  db = b
})

async function tokenFile(name: string, token = TOKEN): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, `${token}\n`)
  await chmod(path, 0o600)
  return path
}

/** Runs `use` with `serve ARGS` on the demo database, then stops it (exit 0). */
async function withServer(args: readonly string[], use: (url: string, banner: string) => Promise<void>): Promise<void> {
  const served = await startServe(['--db', db, ...args])
  try {
    await use(served.endpoint.replace(/\/prices$/, ''), served.banner)
  } finally {
    served.memory.signal('SIGTERM')
    expect(await served.exit).toBe(0)
  }
}

describe('price-store backup --url', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  it('has the running server write the backup into its --backup-dir, and prints where', async () => {
    const token = await tokenFile('token')
    const backups = join(dir, 'backups')
    await withServer(['--write-token-file', token, '--backup-dir', backups], async (url, banner) => {
      expect(banner).toContain(`POST ${url}/admin/backup writes backups into ${backups}`)
      const { code, stdout, stderr } = await run(['backup', '--url', url, '--token-file', token, 'nightly'])
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      expect(stdout).toMatch(new RegExp(`^backed up 8,640 records of 20 symbols from ${url} to ${join(backups, 'nightly')} on the server in [\\d.]+ s, [\\d.]+ [KM]i?B\\n$`))
      // Without a name, the server names it after the time.
      const unnamed = await run(['backup', '--url', `${url}/`, '--token-file', token])
      expect(unnamed.code).toBe(0)
      // The lock message of a local backup, while the server holds the database, says how to back it up through it.
      const local = await run(['backup', '--db', db, join(dir, 'local')])
      expect(local.code).toBe(1)
      expect(local.stderr).toContain('price-store backup --url URL --token-file FILE')
    })
    const names = (await readdir(backups)).sort()
    expect(names).toHaveLength(2)
    expect(names[0]).toMatch(/^backup-\d{4}-/)
    expect(names[1]).toBe('nightly')
    const copy = await PriceStore.open(join(backups, 'nightly'), { provider: DEFAULT_PROVIDER })
    try {
      expect((await copy.stats()).records).toBe(DEMO_RECORDS)
    } finally {
      await copy.close()
    }
    // The local backup works again once the server is gone.
    const local = await run(['backup', '--db', db, join(dir, 'local')])
    expect(local.code).toBe(0)
  })

  it('reads refusals plainly: a wrong token, a bad name, a name taken, a server without --backup-dir', async () => {
    const token = await tokenFile('token2')
    const wrong = await tokenFile('wrong', 'not-the-server-token')
    const backups = join(dir, 'backups2')
    await withServer(['--write-token-file', token, '--backup-dir', backups], async (url) => {
      const refused = await run(['backup', '--url', url, '--token-file', wrong, 'x'])
      expect(refused.code).toBe(2)
      expect(refused.stderr).toContain(`the server at ${url} refused the token from ${wrong}`)
      expect(refused.stderr).not.toContain('not-the-server-token')
      const path = await run(['backup', '--url', url, '--token-file', token, '../escape'])
      expect(path.code).toBe(2)
      expect(path.stderr).toMatch(/name must be a new directory's name, not a path.*\[HTTP_BAD_REQUEST\]/)
      expect((await run(['backup', '--url', url, '--token-file', token, 'once'])).code).toBe(0)
      const taken = await run(['backup', '--url', url, '--token-file', token, 'once'])
      expect(taken.code).toBe(1)
      expect(taken.stderr).toContain('[HTTP_BACKUP_EXISTS]')
    })
    expect(await readdir(backups)).toEqual(['once'])
    await withServer(['--write-token-file', token], async (url) => {
      const off = await run(['backup', '--url', url, '--token-file', token])
      expect(off.code).toBe(2)
      expect(off.stderr).toContain('takes no backups')
      expect(off.stderr).toContain('--backup-dir DIR')
    })
  })

  it('refuses wrong arguments with exit 2', async () => {
    const token = await tokenFile('token3')
    const cases: [string[], RegExp][] = [
      [['backup', '--url', 'http://127.0.0.1:1'], /--url needs --token-file/],
      [['backup', '--url', 'http://127.0.0.1:1', '--token-file', token, '--db', db], /--url and --db exclude each other/],
      [['backup', '--url', 'http://127.0.0.1:1', '--token-file', token, 'a', 'b'], /at most one NAME/],
      [['backup', '--token-file', token, join(dir, 'x')], /--token-file goes with --url/],
      [['backup', '--url', 'ftp://host', '--token-file', token], /--url must start with http/],
      [['serve', '--db', db, '--backup-dir', join(dir, 'b')], /--backup-dir needs a write token/],
      [['serve', '--db', db, '--write-token-file', token, '--backup-dir', join(db, 'inside')], /is inside the database/],
    ]
    for (const [argv, message] of cases) {
      const { code, stderr } = await run(argv)
      expect({ argv, code }).toEqual({ argv, code: 2 })
      expect(stderr).toMatch(message)
    }
  })

  it('takes the write token from the environment too (PRICE_STORE_WRITE_TOKEN), like POST /prices', async () => {
    vi.stubEnv('PRICE_STORE_WRITE_TOKEN', TOKEN)
    const token = await tokenFile('token5')
    const backups = join(dir, 'backups-env')
    await withServer(['--backup-dir', backups], async (url, banner) => {
      expect(banner).toContain(`POST ${url}/admin/backup writes backups into ${backups}`)
      const { code, stderr } = await run(['backup', '--url', url, '--token-file', token, 'from-env'])
      expect({ code, stderr }).toEqual({ code: 0, stderr: expect.any(String) })
    })
    expect(await readdir(backups)).toEqual(['from-env'])
  })

  it('says plainly when the server cannot be reached (exit 1)', async () => {
    const token = await tokenFile('token4')
    const { code, stderr } = await run(['backup', '--url', 'http://127.0.0.1:1', '--token-file', token])
    expect(code).toBe(1)
    expect(stderr).toContain('cannot reach the server at http://127.0.0.1:1')
  })
})

/** A stand-in server for POST /admin/backup: answers `started` and one `progress`, then what `rest` writes (or nothing). */
async function fakeServer(rest: (res: import('node:http').ServerResponse) => void): Promise<{ server: Server; url: string; closed: Promise<void>; asked: Promise<string> }> {
  let closed!: () => void
  let asked!: (url: string) => void
  const whenClosed = new Promise<void>((resolve) => (closed = resolve))
  const whenAsked = new Promise<string>((resolve) => (asked = resolve))
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    res.write('{"event":"started","name":"n"}\n{"event":"progress","records":50,"total":100,"bytes":5000}\n')
    res.once('close', () => closed())
    asked(`${req.method} ${req.url} ${req.headers.authorization}`)
    rest(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, closed: whenClosed, asked: whenAsked }
}

describe('price-store backup --url against the event stream', () => {
  it('draws the server\'s progress on a terminal, and Ctrl+C ends the request (exit 130)', async () => {
    const token = await tokenFile('token5')
    const fake = await fakeServer(() => {}) // never finishes: only Ctrl+C ends it
    try {
      const memory = memoryIo({ isTTY: true })
      const exit = runCli(['backup', '--url', fake.url, '--token-file', token, 'n'], memory.io)
      expect(await fake.asked).toBe(`POST /admin/backup?name=n Bearer ${TOKEN}`)
      await memory.waitForStderr(/backing up: 50 records, .*, 50 %, /)
      memory.signal('SIGINT')
      expect(await exit).toBe(130)
      await fake.closed
      expect(memory.stderr()).toMatch(/interrupted by SIGINT: the server stops the backup and removes its partial copy, so no backup was written\n$/)
      expect(memory.stdout()).toBe('')
    } finally {
      fake.server.closeAllConnections()
      fake.server.close()
    }
  })

  it('an error event, or an answer that ends without done, is a failed backup (exit 1)', async () => {
    const token = await tokenFile('token6')
    for (const [ending, message] of [
      ['{"event":"error","error":{"code":"PRICE_STORAGE_ERROR","message":"internal error while answering the request"}}\n', /the server's backup failed: internal error while answering the request \[PRICE_STORAGE_ERROR\]/],
      ['', /ended before the backup finished/],
    ] as const) {
      const fake = await fakeServer((res) => res.end(ending))
      try {
        const { code, stderr } = await run(['backup', '--url', fake.url, '--token-file', token])
        expect(code).toBe(1)
        expect(stderr).toMatch(message)
      } finally {
        fake.server.closeAllConnections()
        fake.server.close()
      }
    }
  })
})
