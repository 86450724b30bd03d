// Checks the built package as a user gets it: both module formats load, work,
// and recognise each other's errors by code; the bin starts. Run after `npm run build`.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { MemoryLevel } from 'memory-level'

const require = createRequire(import.meta.url)
const esm = await import('price-store')
const cjs = require('price-store')

const provider = { name: 'redstone', id: 'prov', publicKey: 'key' }
const record = { id: 'a', symbol: 'BTC', provider: 'prov', value: 1.5, signature: 's', permawebTx: 't', version: '1', source: {}, timestamp: 1 }

for (const [name, api] of [['esm', esm], ['cjs', cjs]]) {
  const store = await api.PriceStore.open(new MemoryLevel(), { provider })
  await store.put(record)
  assert.deepEqual((await store.latest('BTC')).map((r) => r.value), [1.5], `${name}: latest`)
  const other = name === 'esm' ? cjs : esm
  await assert.rejects(store.query({ limit: 'x' }), (err) => other.isPriceStoreError(err, 'PRICE_INVALID_QUERY'), `${name}: coded error`)
  await store.close()
}
// The chart page's script is found in dist/ from the built code, whichever format loaded it.
for (const [name, api] of [['esm', esm], ['cjs', cjs]]) {
  const store = await api.PriceStore.open(new MemoryLevel(), { provider })
  const running = await api.startServer({ store })
  try {
    const page = await fetch(`${running.url}/`)
    assert.equal(page.status, 200, `${name}: the chart page`)
    assert.match(await page.text(), /<script src="\/page\/chart.js"/, `${name}: the page loads its script`)
    const script = await fetch(`${running.url}/page/chart.js`)
    assert.equal(script.status, 200, `${name}: the page's script`)
    assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8')
    assert.ok((await script.text()).length > 10_000, `${name}: the script holds lightweight-charts`)
  } finally {
    await running.close()
    await store.close()
  }
}
// price-store/testing: its own entry, in both formats, never loaded by the main one.
assert.equal(esm.referenceQuery, undefined, 'the main entry leaves the testing helpers out')
assert.ok(!Object.keys(require.cache).some((path) => path.includes('/fast-check/')), 'the main entry loads no fast-check')
const testingEsm = await import('price-store/testing')
const testingCjs = require('price-store/testing')
for (const [name, testing, api] of [['esm', testingEsm, esm], ['cjs', testingCjs, cjs]]) {
  const fc = name === 'esm' ? (await import('fast-check')).default : require('fast-check')
  const { TEST_PROVIDER, TEST_LIMITS, dataSetArb, rangeParamsArb, referenceQuery, storedRecords, outcomeOf } = testing
  const cases = dataSetArb.chain((data) => fc.tuple(fc.constant(data), rangeParamsArb(data)))
  await fc.assert(
    fc.asyncProperty(cases, async ([data, params]) => {
      const store = await api.PriceStore.open(new MemoryLevel(), { provider: TEST_PROVIDER, limits: TEST_LIMITS })
      try {
        await store.putMany(data.records)
        const expected = referenceQuery(storedRecords(data.records, TEST_PROVIDER), params, { provider: TEST_PROVIDER, limits: TEST_LIMITS })
        assert.deepEqual(await outcomeOf(() => store.query(params)), expected)
      } finally {
        await store.close()
      }
    }),
    { numRuns: 20, seed: 13 },
  )
}
const help = execFileSync(process.execPath, [new URL('../../dist/cli.js', import.meta.url).pathname, '--help'], { encoding: 'utf8' })
assert.match(help, /serve/, 'the bin prints its help')
console.log('dist: esm, cjs, the chart page, price-store/testing and bin OK')
