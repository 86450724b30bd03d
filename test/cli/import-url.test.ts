/**
 * `price-store import --url URL --token-file F FILE...` against a running
 * `price-store serve --write-token-file F`: both real child processes of the
 * bin built from source. The records land whole (compared with the records
 * sent, over GET /prices), bad records are reported by file and line (and
 * skipped with --skip-bad), refusals read plainly, and Ctrl+C keeps whole
 * batches and exits 130.
 */
import { chmod, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { useBuiltCli, type Running } from './built-cli.js'
import { ndjson, record, storedIds, tempDir, writeLines } from './helpers.js'

const TOKEN = 'imp_5b0e3f1a9c7d42e8b6a1f0c3d5e7a9b2'

const children: Running[] = []
let dir: string
let cleanup: (() => Promise<void>) | undefined
const spawnCli = useBuiltCli(() => dir)

afterEach(async () => {
  for (const running of children.splice(0)) {
    if (running.child.exitCode === null && running.child.signalCode === null) running.child.kill('SIGKILL')
    await running.exited
  }
  await cleanup?.()
})

function start(args: readonly string[], stdin: 'ignore' | 'pipe' = 'ignore'): Running {
  const running = spawnCli(args, { stdin })
  children.push(running)
  return running
}

async function until(check: () => boolean, what: () => string): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  if (!check()) throw new Error(`timed out waiting: ${what()}`)
}

/** A server on DIR/db with the token in DIR/token; resolves with its base URL once it printed its banner. */
async function startServer(): Promise<{ server: Running; url: string; tokenFile: string; db: string }> {
  ;({ dir, cleanup } = await tempDir())
  const tokenFile = join(dir, 'token')
  await writeFile(tokenFile, `${TOKEN}\n`)
  await chmod(tokenFile, 0o600)
  const db = join(dir, 'db')
  const server = start(['serve', '--port', '0', '--db', db, '--write-token-file', tokenFile])
  await until(() => /Press Ctrl\+C/.test(server.stdout()), () => server.stdout() + server.stderr())
  const url = /(http:\/\/[^/\s]+)\/prices/.exec(server.stdout())![1]!
  return { server, url, tokenFile, db }
}

async function stop(server: Running): Promise<void> {
  server.child.kill('SIGTERM')
  expect(await server.exited).toBe(0)
}

const records = Array.from({ length: 250 }, (_, i) => record(['BTC', 'ETH', 'AR'][i % 3]!, 1_700_000_000_000 + i * 1000))

describe('import --url', () => {
  it('sends the files in batches to a running server, which answers them over GET; serve never prints the token', async () => {
    const { server, url, tokenFile } = await startServer()
    expect(server.stdout()).toMatch(/POST http:\/\/\S+\/prices takes records/)
    const a = await writeLines(dir, 'a.ndjson', ndjson(records.slice(0, 100)))
    await writeFile(join(dir, 'b.json'), JSON.stringify(records.slice(100)))
    const imported = start(['import', '--url', url, '--token-file', tokenFile, '--batch-size', '40', a, join(dir, 'b.json')])
    expect(await imported.exited).toBe(0)
    expect(imported.stdout()).toMatch(new RegExp(`imported 250 records from 2 files in .* into ${url}`))
    for (const symbol of ['BTC', 'ETH', 'AR']) {
      const answered = await (await fetch(`${url}/prices?symbol=${symbol}&limit=3000`)).json()
      const expected = records
        .filter((r) => r.symbol === symbol)
        .sort((x, y) => (y.timestamp as number) - (x.timestamp as number))
        .map((r) => ({ ...r, providerPublicKey: DEFAULT_PROVIDER.publicKey }))
      expect(answered).toEqual(expected)
    }
    await stop(server)
    expect(server.stdout() + server.stderr() + imported.stdout() + imported.stderr()).not.toContain(TOKEN)
  })

  it('reports a bad record by file and line with nothing of its batch written; --skip-bad writes the rest', async () => {
    const { server, url, tokenFile, db } = await startServer()
    const lines = ndjson(records.slice(0, 30))
    lines[24] = JSON.stringify({ ...records[24], value: 'oops' })
    const file = await writeLines(dir, 'bad.ndjson', lines)
    const failed = start(['import', '--url', url, '--token-file', tokenFile, '--batch-size', '10', file])
    expect(await failed.exited).toBe(2)
    expect(failed.stderr()).toMatch(/bad\.ndjson:25: bad record \(field "value"\): value must be a finite number \(got "oops"\)/)
    expect(failed.stderr()).toMatch(/20 records were written before this batch; this batch \(10 records, .*bad\.ndjson lines 21-30\) was not written/)
    const skipped = start(['import', '--url', url, '--token-file', tokenFile, '--batch-size', '10', '--skip-bad', file])
    expect(await skipped.exited).toBe(0)
    expect(skipped.stderr()).toMatch(/skipped \S*bad\.ndjson:25: bad record \(field "value"\)/)
    expect(skipped.stdout()).toMatch(/imported 29 records .*1 bad record skipped/)
    await stop(server)
    const ids = Object.values(await storedIds(db)).flat().sort()
    expect(ids).toEqual(records.slice(0, 30).filter((_, i) => i !== 24).map((r) => r.id as string).sort())
  })

  it('says plainly when the token is wrong, the server takes no writes, or nothing listens', async () => {
    const { server, url } = await startServer()
    const wrong = join(dir, 'wrong')
    await writeFile(wrong, 'not-the-token\n', { mode: 0o600 })
    const file = await writeLines(dir, 'a.ndjson', ndjson(records.slice(0, 5)))
    const refused = start(['import', '--url', url, '--token-file', wrong, file])
    expect(await refused.exited).toBe(2)
    expect(refused.stderr()).toMatch(/refused the token in .*wrong: it is not the server's write token \[HTTP_FORBIDDEN\]/)
    await stop(server)
    const noWrites = start(['serve', '--port', '0', '--db', join(dir, 'db2')])
    await until(() => /Press Ctrl\+C/.test(noWrites.stdout()), () => noWrites.stderr())
    const plainUrl = /(http:\/\/[^/\s]+)\/prices/.exec(noWrites.stdout())![1]!
    const off = start(['import', '--url', plainUrl, '--token-file', wrong, file])
    expect(await off.exited).toBe(1)
    expect(off.stderr()).toMatch(/takes no writes: start the server with --write-token-file/)
    await stop(noWrites)
    const nobody = start(['import', '--url', url, '--token-file', wrong, file])
    expect(await nobody.exited).toBe(1)
    expect(nobody.stderr()).toMatch(/cannot reach .*: connection refused/)
  })

  it('Ctrl+C keeps the batches sent whole and exits 130', async () => {
    const { server, url, tokenFile, db } = await startServer()
    const importing = start(['import', '--url', url, '--token-file', tokenFile, '--batch-size', '10', '-'], 'pipe')
    importing.child.stdin!.write(`${ndjson(records.slice(0, 25)).join('\n')}\n`)
    // Two batches of 10 reach the server; the last 5 wait in a batch that does not fill.
    const count = async (): Promise<number> => {
      let total = 0
      for (const symbol of ['BTC', 'ETH', 'AR']) total += ((await (await fetch(`${url}/prices?symbol=${symbol}&limit=3000`)).json()) as unknown[]).length
      return total
    }
    await expect.poll(count, { timeout: 10_000 }).toBe(20)
    importing.child.kill('SIGINT')
    expect(await importing.exited).toBe(130)
    expect(importing.stderr()).toMatch(new RegExp(`interrupted by SIGINT: 20 records stored in ${url}.*The 5 records read after them \\(<stdin> lines 21-25\\) were not written`, 's'))
    await stop(server)
    expect(Object.values(await storedIds(db)).flat().sort()).toEqual(records.slice(0, 20).map((r) => r.id as string).sort())
  })
})
