/**
 * `price-store query --all-pages` (issue 24, cursors in the CLI): follows a list answer's cursors through
 * `store.page` and prints every page's items as one JSON array, the unpaged answer's items in order, from
 * `cursor=` on; `cursor=C` without it is refused (only pages resume), as are forms that are not lists.
 */
import { describe, expect, it } from 'vitest'
import { toExactJson } from '../../src/rules/exact-json.js'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import { demoDbForFile, run, writeLines } from './helpers.js'

let dir = ''
let db = ''
demoDbForFile((tempDir, tempDb) => {
  dir = tempDir
  db = tempDb
})

async function query(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(['query', '--db', db, ...args])
}

describe('price-store query --all-pages', () => {
  it('prints every page of a history, a range, candles and a cross-rate range: the unpaged answer, also with --pretty', async () => {
    const latest = JSON.parse((await query('symbol=BTC', 'limit=1')).stdout) as { timestamp: number }[]
    const to = latest[0]!.timestamp
    const window = [`fromTimestamp=${to - 3_600_000}`, `toTimestamp=${to}`]
    for (const [params, whole] of [
      [['symbol=BTC'], ['symbol=BTC', 'limit=3000']],
      [['symbol=ETH', ...window, 'limit=17'], ['symbol=ETH', ...window, 'limit=3000']],
      [['symbol=AR', ...window, 'interval=300000', 'fill=none', 'limit=5'], ['symbol=AR', ...window, 'interval=300000', 'fill=none']],
      [['symbol=AR', ...window, 'interval=600000', 'aggregate=candles', 'limit=2', 'fields=id,timestamp'], ['symbol=AR', ...window, 'interval=600000', 'aggregate=candles', 'fields=id,timestamp']],
      [['quote=ETH', 'base=BTC', ...window, 'interval=60000', 'limit=7'], ['quote=ETH', 'base=BTC', ...window, 'interval=60000']],
    ]) {
      const expected = await query(...whole!)
      expect(expected.code, expected.stderr).toBe(0)
      const paged = await query(...params!, '--all-pages')
      expect(paged.code, paged.stderr).toBe(0)
      expect(paged.stdout, params!.join('&')).toBe(expected.stdout)
      expect((JSON.parse(paged.stdout) as unknown[]).length).toBeGreaterThan(5)
      const pretty = await query(...params!, '--all-pages', '--pretty')
      expect(pretty.stdout).toBe(`${toExactJson(JSON.parse(expected.stdout), 2)}\n`)
    }
  })

  it('starts at cursor=C; prints [] for an empty answer; refuses cursor=C without it, forms that are not lists, and --times-file', async () => {
    const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    let next: string
    let rest: unknown
    try {
      next = (await store.page({ symbol: 'ETH', limit: '100', cursor: '' })).next!
      rest = (await store.query({ symbol: 'ETH', limit: '3000' }) as unknown[]).slice(100)
    } finally {
      await store.close()
    }
    const resumed = await query('symbol=ETH', 'limit=100', `cursor=${next}`, '--all-pages')
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(JSON.parse(resumed.stdout)).toEqual(rest)
    expect((await query('symbol=NOPE', '--all-pages')).stdout).toBe('[]\n')
    const refused = await query('symbol=ETH', 'limit=100', `cursor=${next}`)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('[PRICE_INVALID_QUERY]')
    expect(refused.stderr).toContain('add --all-pages')
    for (const args of [['symbols=BTC,ETH', '--all-pages'], ['quote=ETH', 'base=BTC', '--all-pages'], ['symbol=ETH', 'offset=3', '--all-pages']]) {
      const answer = await query(...args)
      expect(answer.code, args.join(' ')).toBe(2)
      expect(answer.stderr).toContain('[PRICE_INVALID_QUERY]')
    }
    const times = await writeLines(dir, 'times.txt', ['now'])
    const batch = await query('symbols=BTC', '--times-file', times, '--all-pages')
    expect(batch.code).toBe(2)
    expect(batch.stderr).toContain('--all-pages')
  })
})
