import { PriceStore } from '../src/index.js'
import { answerJsonPieces } from '../src/engine/answer-json.js'
import { DEFAULT_PROVIDER } from '../src/cli/config.js'
import { DeferredAnswer } from '../src/engine/deferred-answer.js'
const store = await PriceStore.open('/tmp/load-db-issue12', { provider: DEFAULT_PROVIDER })
const syms = await store.symbols()
const t0 = 1716940800993, span = 3 * 86400000
let sel = 0, dec = 0, js = 0, n = 0, bytes = 0
for (let i = 0; i < 30; i++) {
  const s = syms[i % 50]; const from = Math.floor((t0 + Math.random() * (span - 100000000)) / 10000) * 10000
  const plan = store.plan({ symbol: s, fromTimestamp: String(from), toTimestamp: String(from + 99999999), interval: '10000' })
  let t = performance.now()
  const ans = await store.runDeferred(plan) as DeferredAnswer
  sel += performance.now() - t; t = performance.now()
  if (process.env.DECODE) for (let k = 0; k < ans.length; k++) ans.item(k)
  dec += performance.now() - t; t = performance.now()
  for (const p of answerJsonPieces(ans)) bytes += Buffer.byteLength(p)
  js += performance.now() - t; n += ans.length
}
console.log(`per 10k records: select ${(sel / n * 1e4).toFixed(1)} ms, decode ${(dec / n * 1e4).toFixed(1)} ms, json+utf8 ${(js / n * 1e4).toFixed(1)} ms; ${(bytes / n).toFixed(0)} B/record`)
await store.close()
