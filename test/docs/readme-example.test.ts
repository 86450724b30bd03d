import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test, vi } from 'vitest'

const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8')
const marker = '<!-- readme-example:'

afterEach(() => vi.restoreAllMocks())

test('the README usage example runs as written and prints what its comments say', async () => {
  const start = readme.indexOf(marker)
  expect(start).toBeGreaterThan(-1)
  const block = /```js\n([\s\S]*?)```/.exec(readme.slice(start))?.[1]
  expect(block).toBeDefined()

  // The example's only change: its database goes to a fresh temporary directory.
  const dir = await mkdtemp(join(tmpdir(), 'price-store-readme-'))
  const code = (block as string).replace("'./data/example'", JSON.stringify(join(dir, 'db')))
  expect(code).not.toBe(block)
  // Written inside the project so vitest resolves `price-store` to the source.
  const file = new URL(`./.readme-example-${process.pid}.mjs`, import.meta.url)
  const printed: unknown[][] = []
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args))
  try {
    await writeFile(file, code)
    await import(/* @vite-ignore */ file.href)
  } finally {
    await rm(file, { force: true })
    await rm(dir, { recursive: true, force: true })
  }

  expect(printed[0]).toEqual([67100])
  expect(printed[1]).toEqual([[67012.5, 67100]])
  const several = printed[2]?.[0] as Record<string, { value: number; providerPublicKey: string }>
  expect(Object.keys(several)).toEqual(['BTC'])
  expect(several.BTC?.value).toBe(67100)
  expect(several.BTC?.providerPublicKey).toBe('xyz...')
})
