import http from 'node:http'
import { PriceStore } from '../src/index.js'
import { createPricesHandler } from '../src/adapters/http/handler.js'
import { DEFAULT_PROVIDER } from '../src/cli/config.js'
const store = await PriceStore.open('/tmp/load-db-issue12', { provider: DEFAULT_PROVIDER })
const server = http.createServer(createPricesHandler(store, { streamAbove: Number(process.env.SA ?? 256) })).listen(0, '127.0.0.1')
await new Promise((r) => server.once('listening', r))
const port = (server.address() as any).port
const agent = new http.Agent({ keepAlive: true })
const get = (path: string) => new Promise<number>((resolve, reject) => http.get(`http://127.0.0.1:${port}${path}`, { agent }, (res) => { let n = 0; res.on('data', (c) => (n += c.length)); res.on('end', () => resolve(n)) }).on('error', reject))
const syms = await store.symbols()
const t0 = 1716940800000, span = 3 * 86400000
for (let round = 0; round < 2; round++) {
  const t = performance.now(); let bytes = 0
  for (let i = 0; i < 10; i++) { const from = Math.floor((t0 + Math.random() * (span - 100000000)) / 10000) * 10000; bytes += await get(`/prices?symbol=${syms[i]}&fromTimestamp=${from}&toTimestamp=${from + 99999999}&interval=10000`) }
  console.log(`10 max ranges one after another: ${((performance.now() - t) / 10).toFixed(0)} ms each, ${(bytes / 10 / 1e6).toFixed(1)} MB each`)
}
server.close(); agent.destroy(); await store.close()
