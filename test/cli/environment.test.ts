/**
 * Environment variables for containers (issue 23, point 7): PRICE_STORE_DB, PORT, PRICE_STORE_HOST and the write
 * token; a flag wins over its variable, a variable over the default. The process environment is only stubbed
 * (vi.stubEnv) and restored after each test.
 */
import { chmod, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { DEFAULT_DB, resolveStoreConfig } from '../../src/cli/config.js'
import { environmentPort, readEnvironment, resolveWriteToken } from '../../src/cli/environment.js'
import { runCli } from '../../src/cli/run-cli.js'
import { eachTempDb, memoryIo, record } from './helpers.js'

const TOKEN = 'env_5b0e3f1a9c7d42e8b6a1f0c3d5e7a9b2'
let dir = ''
let db = ''
eachTempDb((tempDir, tempDb) => {
  dir = tempDir
  db = tempDb
})
afterEach(() => vi.unstubAllEnvs())

describe('reading the environment', () => {
  it('takes the documented variables, ignoring empty ones and any other', () => {
    expect(readEnvironment({ PRICE_STORE_DB: '/srv/db', PORT: '8080', PRICE_STORE_HOST: '', HOST: 'box', PRICE_STORE_WRITE_TOKEN: 't' })).toEqual({
      db: '/srv/db', port: '8080', writeToken: 't',
    })
    expect(readEnvironment({})).toEqual({})
  })

  it('PORT must be a port number', () => {
    expect(environmentPort({ port: '8080' })).toBe(8080)
    expect(environmentPort({})).toBeUndefined()
    for (const bad of ['80a', '70000', '-1', ' 80']) expect(() => environmentPort({ port: bad })).toThrow(/^PORT must be a whole number from 0 to 65535/)
  })

  it('--db, else PRICE_STORE_DB, else ./data/prices', async () => {
    expect((await resolveStoreConfig({ db: '/flag' }, { db: '/env' })).location).toBe('/flag')
    expect((await resolveStoreConfig({}, { db: '/env' })).location).toBe('/env')
    expect((await resolveStoreConfig({}, {})).location).toBe(resolve(DEFAULT_DB))
  })

  it('the write token: --write-token-file, else PRICE_STORE_WRITE_TOKEN_FILE, else PRICE_STORE_WRITE_TOKEN', async () => {
    const { io } = memoryIo()
    const file = join(dir, 'token')
    await writeFile(file, `${TOKEN}-file\n`, { mode: 0o600 })
    await chmod(file, 0o600)
    expect(await resolveWriteToken(file, { writeToken: TOKEN }, io)).toEqual({ token: `${TOKEN}-file`, from: `the token file ${file}`, file })
    expect(await resolveWriteToken(undefined, { writeTokenFile: file }, io)).toMatchObject({ token: `${TOKEN}-file`, file })
    expect(await resolveWriteToken(undefined, { writeToken: TOKEN }, io)).toEqual({ token: TOKEN, from: '$PRICE_STORE_WRITE_TOKEN' })
    expect(await resolveWriteToken(undefined, {}, io)).toEqual({})
    await expect(resolveWriteToken(undefined, { writeToken: TOKEN, writeTokenFile: file }, io)).rejects.toThrow(/not both/)
    const bad = await resolveWriteToken(undefined, { writeToken: 'has space' }, io).catch((err: unknown) => err as Error)
    expect((bad as Error).message).toMatch(/^the token in PRICE_STORE_WRITE_TOKEN /)
    expect((bad as Error).message).not.toContain('has space')
  })
})

describe('serve configured by the environment alone', () => {
  it('listens on PORT, serves PRICE_STORE_DB and takes writes with PRICE_STORE_WRITE_TOKEN', async () => {
    vi.stubEnv('PORT', '0')
    vi.stubEnv('PRICE_STORE_DB', db)
    vi.stubEnv('PRICE_STORE_WRITE_TOKEN', TOKEN)
    const memory = memoryIo()
    const exit = runCli(['serve'], memory.io)
    const banner = await Promise.race([
      memory.waitForStdout(/Press Ctrl\+C to stop\.\n/).then(() => memory.stdout()),
      exit.then((code) => {
        throw new Error(`serve exited with ${code}: ${memory.stderr()}`)
      }),
    ])
    try {
      expect(banner).toContain(`price-store is serving 0 symbols from ${db}`)
      expect(banner).toContain('with the bearer token from $PRICE_STORE_WRITE_TOKEN')
      const endpoint = /^ {2}(http:\/\/\S+\/prices)$/m.exec(banner)?.[1] as string
      expect(endpoint).not.toContain(':9000/')
      const post = (token: string): Promise<Response> =>
        fetch(endpoint, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' }, body: `${JSON.stringify(record('BTC', 1_000))}\n` })
      expect((await post('wrong-token-0000000000000000')).status).toBe(403)
      expect((await post(TOKEN)).status).toBe(200)
      const latest = (await (await fetch(`${endpoint}?symbol=BTC`)).json()) as { timestamp: number }[]
      expect(latest[0]?.timestamp).toBe(1_000)
    } finally {
      memory.signal()
      expect(await exit).toBe(0)
    }
  })

  it('a flag wins over its variable: --port over PORT', async () => {
    vi.stubEnv('PORT', 'not-a-port')
    // The flag is used, so the bad variable is never read.
    const memory = memoryIo()
    const exit = runCli(['serve', '--db', db, '--port', '0'], memory.io)
    await Promise.race([memory.waitForStdout(/Press Ctrl\+C to stop\.\n/), exit.then(() => {
      throw new Error(memory.stderr())
    })])
    memory.signal()
    expect(await exit).toBe(0)
    vi.stubEnv('PORT', 'not-a-port')
    const refused = memoryIo()
    expect(await runCli(['serve', '--db', db], refused.io)).toBe(2)
    expect(refused.stderr()).toContain('PORT must be a whole number from 0 to 65535 (got "not-a-port")')
  })
})
