/**
 * `serve --cursor-secret-file FILE` / `PRICE_STORE_CURSOR_SECRET_FILE` (the store's `cursorSecret` option): nodes
 * given the same file accept each other's page cursors, as replicas behind a balancer must; a node with its
 * own secret refuses them. A short file exits with 2 without quoting it.
 */
import { randomBytes } from 'node:crypto'
import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { readCursorSecret } from '../../src/cli/cursor-secret-file.js'
import { eachTempDb, memoryIo, ndjson, record, run, startServe, writeLines } from './helpers.js'

let dir = ''
eachTempDb((tempDir) => {
  dir = tempDir
})
afterEach(() => vi.unstubAllEnvs())

async function secretFile(name: string, content: string | Buffer): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, content)
  await chmod(path, 0o600)
  return path
}

describe('serve --cursor-secret-file', () => {
  it('nodes with the same secret file (flag or variable) resume each other\'s pages; a node with its own secret refuses them', async () => {
    const records = await writeLines(dir, 'records.ndjson', ndjson(Array.from({ length: 30 }, (_, i) => record('BTC', 1_000 + i * 1_000))))
    const dbs = ['a', 'b', 'c'].map((name) => join(dir, name))
    for (const db of dbs) expect((await run(['import', '--db', db, records])).code).toBe(0)
    const secret = await secretFile('cursor.secret', `${randomBytes(48).toString('base64')}\n`)
    const a = await startServe(['--db', dbs[0]!, '--cursor-secret-file', secret])
    vi.stubEnv('PRICE_STORE_CURSOR_SECRET_FILE', secret)
    const b = await startServe(['--db', dbs[1]!])
    vi.unstubAllEnvs()
    const c = await startServe(['--db', dbs[2]!])
    try {
      const first = await fetch(`${a.endpoint}?symbol=BTC&limit=10&cursor=`)
      const next = first.headers.get('x-next-cursor')!
      expect(next).toBeTruthy()
      const onA = await fetch(`${a.endpoint}?symbol=BTC&limit=10&cursor=${next}`)
      const onB = await fetch(`${b.endpoint}?symbol=BTC&limit=10&cursor=${next}`)
      expect(onB.status).toBe(200)
      const body = await onB.text()
      expect(body).toBe(await onA.text())
      expect((JSON.parse(body) as { timestamp: number }[]).map((r) => r.timestamp)).toEqual(Array.from({ length: 10 }, (_, i) => 20_000 - i * 1_000))
      expect(onB.headers.get('x-next-cursor')).toBe(onA.headers.get('x-next-cursor'))
      const onC = await fetch(`${c.endpoint}?symbol=BTC&limit=10&cursor=${next}`)
      expect(onC.status).toBe(400)
      expect(((await onC.json()) as { error: { code: string } }).error.code).toBe('PRICE_INVALID_QUERY')
    } finally {
      for (const node of [a, b, c]) node.memory.signal()
      for (const node of [a, b, c]) expect(await node.exit).toBe(0)
    }
  })

  it('refuses a short or unreadable file with exit code 2, never quoting it; drops one final newline; warns about a readable file', async () => {
    const short = await secretFile('short.secret', 'tooshort-secret-text\n')
    const refused = await run(['serve', '--db', join(dir, 'db'), '--port', '0', '--cursor-secret-file', short])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(`the cursor secret file ${short} holds 20 bytes`)
    expect(refused.stderr).not.toContain('tooshort')
    const missing = await run(['serve', '--db', join(dir, 'db'), '--port', '0', '--cursor-secret-file', join(dir, 'nope')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('cannot read the cursor secret file')
    const bytes = randomBytes(32)
    const crlf = await secretFile('crlf.secret', Buffer.concat([bytes, Buffer.from('\r\n')]))
    const memory = memoryIo()
    expect(await readCursorSecret(crlf, {}, memory.io)).toEqual(bytes)
    expect(await readCursorSecret(undefined, { cursorSecretFile: crlf }, memory.io)).toEqual(bytes)
    expect(await readCursorSecret(undefined, {}, memory.io)).toBeUndefined()
    expect(memory.stderr()).toBe('')
    await chmod(crlf, 0o644)
    await readCursorSecret(crlf, {}, memory.io)
    if (process.platform !== 'win32') expect(memory.stderr()).toContain('chmod 600')
  })
})
