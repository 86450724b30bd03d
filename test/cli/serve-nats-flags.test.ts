/**
 * `serve --nats` credentials and TLS flags: secrets come from files only;
 * bad combinations, unreadable or empty files and credentials in a --nats
 * URL are usage errors (exit 2) that quote no secret and create no
 * database; `--config` with a "nats" key is refused; and a node started with
 * --nats-user / --nats-password-file serves on a NATS server that demands
 * them.
 */
import { chmod, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseClusterFlags } from '../../src/cli/cluster-flags.js'
import { NATS_SKIP_REASON, natsServerPath, startNatsCluster } from '../cluster/support/nats-cluster.js'
import { run, startServe, tempDir } from './helpers.js'

let dir: string
let done: () => Promise<void>
beforeEach(async () => {
  ;({ dir, cleanup: done } = await tempDir())
})
afterEach(async () => {
  await done()
})

async function file(name: string, content: string): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, content, { mode: 0o600 })
  return path
}

const NATS = 'nats://127.0.0.1:4222'

describe('serve --nats credentials and TLS flags', () => {
  it('turns each way to authenticate into the library option, secrets read from files less one final newline', async () => {
    const password = await file('pass', 's3cret\n')
    const token = await file('token', 'tok-1\r\n')
    const creds = await file('node.creds', 'creds')
    const nkey = await file('node.nk', 'SUAxxx')
    expect(parseClusterFlags({ nats: NATS, 'nats-user': 'node-a', 'nats-password-file': password })?.options?.auth).toEqual({ user: 'node-a', password: 's3cret' })
    expect(parseClusterFlags({ nats: NATS, 'nats-token-file': token })?.options?.auth).toEqual({ token: 'tok-1' })
    expect(parseClusterFlags({ nats: NATS, 'nats-creds': creds })?.options?.auth).toEqual({ credsFile: creds })
    expect(parseClusterFlags({ nats: NATS, 'nats-nkey': nkey })?.options?.auth).toEqual({ nkeySeedFile: nkey })
    expect(parseClusterFlags({ nats: NATS })?.options).not.toHaveProperty('auth')
  })

  it('turns the TLS flags into the library option', async () => {
    const ca = await file('ca.pem', 'ca')
    const cert = await file('cert.pem', 'cert')
    const key = await file('key.pem', 'key')
    expect(parseClusterFlags({ nats: NATS, 'nats-tls-ca': ca })?.options?.tls).toEqual({ caFile: ca })
    expect(parseClusterFlags({ nats: NATS, 'nats-tls-ca': ca, 'nats-tls-cert': cert, 'nats-tls-key': key })?.options?.tls).toEqual({ caFile: ca, certFile: cert, keyFile: key })
    expect(parseClusterFlags({ nats: NATS })?.options).not.toHaveProperty('tls')
  })

  it('refuses bad combinations, unreadable and empty files, and credentials in a URL, quoting no secret', async () => {
    const password = await file('pass', 'pw-SECRET\n')
    const empty = await file('empty', '\n')
    const missing = join(dir, 'missing')
    const cases: [Record<string, string>, RegExp][] = [
      [{ nats: NATS, 'nats-creds': password, 'nats-token-file': password }, /one way to authenticate to NATS, not --nats-creds and --nats-token-file/],
      [{ nats: NATS, 'nats-user': 'node-a' }, /--nats-user needs --nats-password-file/],
      [{ nats: NATS, 'nats-password-file': password }, /--nats-password-file needs --nats-user/],
      [{ nats: NATS, 'nats-tls-cert': password }, /--nats-tls-cert and --nats-tls-key go together/],
      [{ nats: NATS, 'nats-tls-key': password }, /--nats-tls-cert and --nats-tls-key go together/],
      [{ nats: NATS, 'nats-creds': missing }, /--nats-creds: cannot read .*missing \(ENOENT\)/],
      [{ nats: NATS, 'nats-tls-ca': missing }, /--nats-tls-ca: cannot read .*missing \(ENOENT\)/],
      [{ nats: NATS, 'nats-user': 'a', 'nats-password-file': empty }, /--nats-password-file: the file .* is empty/],
      [{ nats: NATS, 'nats-token-file': empty }, /--nats-token-file: the file .* is empty/],
      [{ nats: 'nats://node-a:pw-SECRET@127.0.0.1:4222' }, /--nats: a server URL holds credentials/],
      [{ nats: `${NATS},nats://pw-SECRET@127.0.0.1:4223` }, /--nats: a server URL holds credentials/],
      [{ 'nats-creds': password }, /--nats-creds needs --nats/],
      [{ follow: 'http://127.0.0.1:9000', 'nats-user': 'a' }, /--nats-user needs --nats/],
    ]
    for (const [values, message] of cases) {
      const err = (() => {
        try {
          parseClusterFlags(values)
        } catch (e) {
          return e as Error
        }
        throw new Error(`accepted ${JSON.stringify(values)}`)
      })()
      expect(err.name).toBe('UsageError')
      expect(err.message).toMatch(message)
      expect(err.message).not.toContain('SECRET')
    }
  })

  it('serve exits with 2 on a bad combination before it creates the database; --config refuses a "nats" key', async () => {
    const db = join(dir, 'db')
    const bad = await run(['serve', '--db', db, '--port', '0', '--nats', NATS, '--nats-user', 'node-a'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--nats-user needs --nats-password-file')
    expect(existsSync(db)).toBe(false)
    const config = await file('config.json', JSON.stringify({ nats: { servers: NATS } }))
    const refused = await run(['serve', '--db', db, '--port', '0', '--config', config])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('"nats" is not read from a config file')
    expect(existsSync(db)).toBe(false)
  })

  describe.skipIf(natsServerPath() === undefined)(`against a NATS server that demands a password${natsServerPath() === undefined ? ` (${NATS_SKIP_REASON})` : ''}`, () => {
    it('a node with --nats-user and --nats-password-file serves; serve warns when others may read the password file', async () => {
      const nats = await startNatsCluster({ size: 1, name: 'cli-auth', authorization: 'authorization { users = [ { user: node-a, password: pwCliSecret } ] }' })
      try {
        const password = await file('pass', 'pwCliSecret\n')
        await chmod(password, 0o644)
        const { memory, exit, banner } = await startServe(['--db', join(dir, 'db'), '--nats', nats.urls[0]!, '--nats-user', 'node-a', '--nats-password-file', password])
        memory.signal('SIGINT')
        expect(await exit).toBe(0)
        expect(banner).toContain('a node of the cluster on stream PRICES')
        expect(memory.stderr()).toContain(`warning: the NATS password file ${password} may be read by other users`)
        expect(memory.stdout() + memory.stderr()).not.toContain('pwCliSecret')
      } finally {
        await nats.close()
      }
    })
  })
})
