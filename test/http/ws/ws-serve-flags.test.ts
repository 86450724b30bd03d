/** `price-store serve` and `/ws`: the banner names it, its limits are flags, a bad one is exit 2. */
import { describe, expect, it } from 'vitest'
import { demoDbForFile, run, startServe } from '../../cli/helpers.js'
import { WS_CLOSE_CODES } from '../../../src/adapters/http/ws/ws-options.js'
import { connectWs } from './ws-client.js'

let db: string
demoDbForFile((_dir, newDb) => {
  db = newDb
})

describe('price-store serve: WebSocket flags', () => {
  it('serves /ws, with --max-ws-connections and --ws-max-symbols', async () => {
    const { memory, exit, banner, endpoint } = await startServe(['--db', db, '--max-ws-connections', '1', '--ws-max-symbols', '1'])
    const url = endpoint.replace(/^http/, 'ws').replace(/\/prices$/, '/ws')
    try {
      expect(banner).toContain(`\n  ${url} takes WebSocket subscriptions to the same commits\n`)
      const ws = await connectWs(url)
      ws.send({ type: 'subscribe', symbols: ['BTC', 'ETH'] })
      expect(await ws.next()).toMatchObject({ type: 'error', code: 'PRICE_WS_TOO_MANY_SYMBOLS' })
      ws.send({ type: 'subscribe', symbols: ['BTC'] })
      expect(await ws.next()).toMatchObject({ type: 'subscribed', symbols: ['BTC'], unknown: [] })
      const second = await connectWs(url)
      expect((await second.closed).code).toBe(WS_CLOSE_CODES.SERVER_FULL)
      await ws.close()
    } finally {
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    }
  })

  it('refuses a bad value with exit 2 naming the flag; help lists the flags', async () => {
    for (const flag of ['--max-ws-connections', '--ws-max-subscriptions', '--ws-max-symbols']) {
      const bad = await run(['serve', '--db', db, '--port', '0', flag, 'many'])
      expect(bad.code, flag).toBe(2)
      expect(bad.stderr, flag).toContain(flag)
    }
    const help = await run(['serve', '--help'])
    expect(help.stdout).toMatch(/--max-ws-connections N/)
    expect(help.stdout).toMatch(/--ws-max-subscriptions N/)
  })
})
