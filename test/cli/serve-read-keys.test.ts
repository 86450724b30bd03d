/** `serve --read-keys FILE`: a key file meters readers; a bad file stops serve before it starts, naming the field. */
import { createHash } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { demoDbForFile, run, startServe } from './helpers.js'

let dir: string
let db: string
demoDbForFile((newDir, newDb) => {
  dir = newDir
  db = newDb
})

const sha = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex')

describe('price-store serve --read-keys', () => {
  it('refuses readers without a key when the file closes anonymous reads, and lets a listed key read', async () => {
    const file = join(dir, 'read-keys.json')
    await writeFile(file, JSON.stringify({ anonymous: 'closed', keys: [{ id: 'desk', sha256: sha('desk-key-1'), fields: '-signature' }] }))
    const { memory, exit, endpoint, banner } = await startServe(['--db', db, '--read-keys', file])
    try {
      expect(banner).toContain(`1 read key from ${file}; readers without a key are refused`)
      expect((await fetch(`${endpoint}?symbol=BTC`)).status).toBe(401)
      const answer = await fetch(`${endpoint}?symbol=BTC`, { headers: { 'x-api-key': 'desk-key-1' } })
      expect(answer.status).toBe(200)
      const [record] = (await answer.json()) as Record<string, unknown>[]
      expect(record).toHaveProperty('value')
      expect(record).not.toHaveProperty('signature')
      expect(memory.stdout() + memory.stderr()).not.toContain('desk-key-1')
    } finally {
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    }
  })

  it('stops with exit 2 on a file that is missing, not JSON, or holds a bad key, naming the file and the field', async () => {
    const missing = await run(['serve', '--db', db, '--port', '0', '--read-keys', join(dir, 'nope.json')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('nope.json')
    const notJson = join(dir, 'not-json.json')
    await writeFile(notJson, '{ keys: ')
    const bad = await run(['serve', '--db', db, '--port', '0', '--read-keys', notJson])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('is not JSON')
    const badKey = join(dir, 'bad-key.json')
    await writeFile(badKey, JSON.stringify({ keys: [{ id: 'x', sha256: 'short' }] }))
    const refused = await run(['serve', '--db', db, '--port', '0', '--read-keys', badKey])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('keys[0].sha256')
  })
})
