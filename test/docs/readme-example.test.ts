import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test, vi } from 'vitest'
import { runCli } from '../../src/cli/run-cli.js'
import { REDSTONE_PROVIDER } from '../../src/index.js'
import { memoryIo, record } from '../cli/helpers.js'

const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
const marker = '<!-- readme-example:'

afterEach(() => vi.restoreAllMocks())

/** Each run imports a file of its own: a module is loaded once per name. */
let runs = 0

/** The README's usage example, run with its database at `location` (its only change); resolves with what it printed. */
async function runExample(location: string): Promise<unknown[][]> {
  const start = readme.indexOf(marker)
  expect(start).toBeGreaterThan(-1)
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(start))?.[1]
  expect(block).toBeDefined()
  const code = (block as string).replace("'./data/example'", JSON.stringify(location))
  expect(code).not.toBe(block)
  // Written inside the project so vitest resolves `price-store` to the source (and strips the block's types).
  const file = new URL(`./.readme-example-${process.pid}-${++runs}.ts`, import.meta.url)
  const printed: unknown[][] = []
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args))
  try {
    await writeFile(file, code)
    await import(/* @vite-ignore */ file.href)
  } finally {
    await rm(file, { force: true })
  }
  return printed
}

test('the README usage example runs as written and prints what its comments say', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'price-store-readme-'))
  try {
    const printed = await runExample(join(dir, 'db'))
    expect(printed[0]).toEqual([67100])
    expect(printed[1]).toEqual([[67012.5, 67100]])
    const several = printed[2]?.[0] as Record<string, { value: number; providerPublicKey: string }>
    expect(Object.keys(several)).toEqual(['BTC'])
    expect(several.BTC?.value).toBe(67100)
    expect(several.BTC?.providerPublicKey).toBe(REDSTONE_PROVIDER.publicKey)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test("the example's provider opens a database the CLI wrote with its defaults, as npm start's is (issue 23)", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'price-store-readme-'))
  try {
    const db = join(dir, 'prices')
    // `npm start` is `serve --demo-if-empty` with no provider flags: an import without them makes the same kind of
    // database (the demo's timestamps are not this test's business).
    const file = join(dir, 'eth.ndjson')
    await writeFile(file, `${JSON.stringify(record('ETH', Date.UTC(2024, 5, 1)))}\n${JSON.stringify(record('BTC', Date.UTC(2024, 5, 1)))}\n`)
    const memory = memoryIo()
    expect(await runCli(['import', '--db', db, file], memory.io), memory.stderr()).toBe(0)
    const printed = await runExample(db)
    // The example's records are the newest BTC ones.
    expect(printed[0]).toEqual([67100])
    expect(printed[1]).toEqual([[67012.5, 67100]])
    const several = printed[2]?.[0] as Record<string, { value: number }>
    expect(Object.keys(several).sort()).toEqual(['BTC', 'ETH'])
    expect(several.BTC?.value).toBe(67100)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
