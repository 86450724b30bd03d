import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toExactJson } from '../../src/rules/exact-json.js'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore, type BatchAsOfOptions } from '../../src/index.js'
import { run, tempDir } from './helpers.js'

let db: string
let tmp: string
let cleanup: () => Promise<void>
let newest = 0

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  tmp = temp.dir
  db = join(temp.dir, 'db')
  expect((await run(['demo', '--db', db, '--days', '0.01'])).code).toBe(0)
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  try {
    newest = (await store.latest('BTC'))[0]!.timestamp
  } finally {
    await store.close()
  }
})

afterAll(async () => {
  await cleanup()
})

async function expected(options: BatchAsOfOptions): Promise<string> {
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  try {
    return `${toExactJson(await store.batchAsOf(options))}\n`
  } finally {
    await store.close()
  }
}

describe('price-store query --times-file', () => {
  it('answers a batch as-of at the file\'s times (ms and ISO, blank and # lines skipped), as the library does', async () => {
    const file = join(tmp, 'times.txt')
    const times = [newest - 25_000, newest - 5_000, newest + 60_000]
    await writeFile(file, `# times\n${times[0]}\n\n${new Date(times[1]!).toISOString()}\n${times[2]}\n`)
    const { code, stdout, stderr } = await run(['query', '--db', db, '--times-file', file, 'symbols=BTC,ETH', 'direction=nearest', 'tolerance=20000'])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(stdout).toBe(await expected({ symbols: ['BTC', 'ETH'], times, direction: 'nearest', tolerance: 20_000 }))
    const answer = JSON.parse(stdout) as Record<string, Record<string, { age: number } | null>>
    expect(Object.keys(answer['BTC']!)).toEqual(times.map(String))
    expect(answer['BTC']![String(times[2])]).toBeNull()
  })

  it('refuses other parameters and bad times, with exit code 2', async () => {
    const file = join(tmp, 'bad.txt')
    await writeFile(file, '1.5\n')
    expect((await run(['query', '--db', db, '--times-file', file, 'symbols=BTC'])).code).toBe(2)
    expect((await run(['query', '--db', db, '--times-file', file, 'symbols=BTC', 'limit=2'])).code).toBe(2)
    await writeFile(file, '')
    expect((await run(['query', '--db', db, '--times-file', file, 'symbols=BTC'])).code).toBe(2)
  })
})
