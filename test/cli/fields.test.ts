import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { toExactJson } from '../../src/http.js'
import { record, run, tempDir, writeLines } from './helpers.js'

// `price-store export --fields` and `price-store query ... fields=...`.

let db: string
let cleanup: () => Promise<void>
const tricky = [
  record('BTC', 1_000, { source: { 'a,b': 'say "hi"' }, note: 'line\nbreak', signature: 'x,y' }),
  record('BTC', 2_000, { value: -0 }),
  record('ETH', 1_500),
]

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  db = join(temp.dir, 'db')
  const input = await writeLines(temp.dir, 'in.ndjson', tricky.map((r) => toExactJson(r)))
  expect((await run(['import', '--db', db, input])).code).toBe(0)
})

afterAll(async () => {
  await cleanup?.()
})

const lines = (text: string): string[] => text.split(/\r?\n/).filter((line) => line !== '')

describe('price-store export --fields', () => {
  it('NDJSON: a drop list leaves those fields out and keeps extras; a keep list keeps its fields in record order', async () => {
    const whole = lines((await run(['export', '--db', db])).stdout)
    const dropped = await run(['export', '--db', db, '--fields=-signature,-providerPublicKey'])
    expect(dropped.code).toBe(0)
    expect(lines(dropped.stdout)).toEqual(whole.map((line) => {
      const { signature: _s, providerPublicKey: _k, ...rest } = JSON.parse(line) as Record<string, unknown>
      return toExactJson(rest)
    }))
    expect(dropped.stdout).toContain('"note":"line\\nbreak"')
    const kept = await run(['export', '--db', db, '--fields', 'timestamp,value,symbol'])
    expect(lines(kept.stdout)).toEqual(['{"symbol":"BTC","value":1100,"timestamp":1000}', '{"symbol":"BTC","value":-0,"timestamp":2000}', '{"symbol":"ETH","value":1600,"timestamp":1500}'])
  })

  it('CSV: the columns of the selected stored fields, extra only with a drop list', async () => {
    const kept = await run(['export', '--db', db, '--format', 'csv', '--fields', 'timestamp,signature,symbol'])
    expect(kept.stdout).toBe('symbol,signature,timestamp\r\nBTC,"x,y",1000\r\nBTC,c2lnbmF0dXJl,2000\r\nETH,c2lnbmF0dXJl,1500\r\n')
    const dropped = await run(['export', '--db', db, '--format', 'csv', '--fields=-signature,-source,-permawebTx,-version,-provider,-id'])
    expect(lines(dropped.stdout)).toEqual(['symbol,value,timestamp,extra', 'BTC,1100,1000,"{""note"":""line\\nbreak""}"', 'BTC,-0,2000,', 'ETH,1600,1500,'])
  })

  it('a bad list is refused (exit 2) before anything is written', async () => {
    for (const bad of ['', 'nope', 'value,-id', 'value,,id', '-nope']) {
      const { code, stdout, stderr } = await run(['export', '--db', db, `--fields=${bad}`])
      expect(code, bad).toBe(2)
      expect(stdout).toBe('')
      expect(stderr).toContain('--fields')
    }
  })
})

describe('price-store query fields=', () => {
  it('takes fields like GET /prices, as NAME=VALUE or --fields', async () => {
    expect((await run(['query', '--db', db, 'symbol=BTC', 'limit=2', 'fields=timestamp'])).stdout).toBe('[{"timestamp":2000},{"timestamp":1000}]\n')
    expect((await run(['query', '--db', db, '--symbols', 'BTC,ETH', '--fields', 'symbol'])).stdout).toBe('{"BTC":{"symbol":"BTC"},"ETH":{"symbol":"ETH"}}\n')
    const bad = await run(['query', '--db', db, 'symbol=BTC', 'fields=nope'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('unknown record field "nope"')
  })
})
