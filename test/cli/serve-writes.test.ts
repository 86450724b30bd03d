/**
 * `serve --write-token-file FILE` and `--max-write-bytes N`, in-process:
 * refused token files, the warning for a file others may read, and a 413
 * past the configured size; the token is never printed.
 */
import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { eachTempDb, ndjson, record, run, startServe } from './helpers.js'

let dir: string
let db: string
eachTempDb((newDir, newDb) => {
  dir = newDir
  db = newDb
})

const TOKEN = 'srv_0d9c8b7a6f5e4d3c2b1a09f8e7d6c5b4'

describe('serve --write-token-file', () => {
  it('refuses an empty token file and a token a header cannot carry, without printing it', async () => {
    const file = join(dir, 'token')
    for (const [content, message] of [['', /is empty/], ['\n', /is empty/], [`${TOKEN} more\n`, /white space/]] as const) {
      await writeFile(file, content, { mode: 0o600 })
      const { code, stderr, stdout } = await run(['serve', '--port', '0', '--db', db, '--write-token-file', file])
      expect(code).toBe(2)
      expect(stderr).toMatch(message)
      expect(stderr + stdout).not.toContain(TOKEN)
    }
    const missing = await run(['serve', '--port', '0', '--db', db, '--write-token-file', join(dir, 'nope')])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/cannot read the token file/)
  })

  it('--max-write-bytes needs a token file', async () => {
    const { code, stderr } = await run(['serve', '--port', '0', '--db', db, '--max-write-bytes', '1000'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/--max-write-bytes needs --write-token-file/)
  })

  it('takes writes with the token (warning about a file others may read) and refuses bodies over --max-write-bytes', async () => {
    const file = join(dir, 'token')
    await writeFile(file, `${TOKEN}\r\n`)
    await chmod(file, 0o644)
    const { memory, exit, endpoint, banner } = await startServe(['--db', db, '--write-token-file', file, '--max-write-bytes', '2000'])
    try {
      expect(banner).toMatch(/POST http:\/\/\S+\/prices takes records/)
      expect(memory.stderr()).toMatch(/may be read by other users; make it private with: chmod 600/)
      const post = (body: string) =>
        fetch(endpoint, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' }, body })
      const small = await post(ndjson([record('BTC', 1)]).join('\n'))
      expect(await small.json()).toEqual({ stored: 1, position: 1 })
      const large = await post(ndjson(Array.from({ length: 20 }, (_, i) => record('BTC', i + 2))).join('\n'))
      expect(large.status).toBe(413)
      expect(memory.stdout() + memory.stderr()).not.toContain(TOKEN)
    } finally {
      memory.signal()
      expect(await exit).toBe(0)
    }
  })
})
