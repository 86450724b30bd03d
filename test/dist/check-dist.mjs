// Checks the built package as a user gets it: both module formats of price-store and
// price-store/http load, work, and recognise each other's errors by code; a store from
// price-store is served by price-store/http (one shared copy of the code, so a deferred
// answer is streamed); the chart page finds its script; the bin starts. Run after `npm run build`.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { MemoryLevel } from 'memory-level'

const require = createRequire(import.meta.url)
const esm = await import('price-store')
const cjs = require('price-store')
const httpEsm = await import('price-store/http')
const httpCjs = require('price-store/http')

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
// The HTTP adapter is price-store/http's alone: the main entry leaves it (and its internals) out.
for (const name of ['startServer', 'createPricesHandler', 'answerPrices', 'QueryGate', 'StreamedBody', 'DeferredAnswer', 'READ_COST']) {
  assert.equal(esm[name], undefined, `the main entry does not export ${name}`)
  assert.equal(cjs[name], undefined, `the main entry (cjs) does not export ${name}`)
}
for (const name of ['QueryGate', 'StreamedBody', 'DeferredAnswer', 'planRequest', 'answerPlanned']) {
  assert.equal(httpEsm[name], undefined, `price-store/http does not export ${name}`)
}
assert.deepEqual(Object.keys(httpCjs).sort(), Object.keys(httpEsm).sort(), 'price-store/http: the same names in both formats')
// A store from price-store served by price-store/http of the same format, with and without a
// basePath: the chart page's script is found in dist/ from the built code, whichever file and
// format loaded it, and a long answer (a deferred answer of the store) is streamed.
const many = Array.from({ length: 300 }, (_, i) => ({ ...record, id: `r${i}`, timestamp: 1_000 + i }))
for (const [name, api, http] of [['esm', esm, httpEsm], ['cjs', cjs, httpCjs]]) {
  const store = await api.PriceStore.open(new MemoryLevel(), { provider })
  await store.putMany(many)
  for (const basePath of ['', '/v1']) {
    const running = await http.startServer(basePath === '' ? { store } : { store, basePath })
    const at = `${name}${basePath === '' ? '' : ` under ${basePath}`}`
    try {
      const page = await fetch(`${running.url}${basePath}/`)
      assert.equal(page.status, 200, `${at}: the chart page`)
      assert.ok((await page.text()).includes(`<script src="${basePath}/page/chart.js"`), `${at}: the page loads its script`)
      const script = await fetch(`${running.url}${basePath}/page/chart.js`)
      assert.equal(script.status, 200, `${at}: the page's script`)
      assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8')
      assert.ok((await script.text()).length > 10_000, `${at}: the script holds lightweight-charts`)
      const prices = await fetch(`${running.url}${basePath}/prices?symbol=BTC&limit=300`)
      assert.equal(prices.status, 200, `${at}: /prices`)
      assert.equal(prices.headers.get('content-length'), null, `${at}: a long answer is streamed`)
      assert.equal((await prices.json()).length, 300, `${at}: the streamed answer holds every record`)
      const api = await fetch(`${running.url}${basePath}/openapi.yaml`, { headers: { 'accept-encoding': 'identity' } })
      assert.equal(api.status, 200, `${at}: /openapi.yaml`)
      assert.equal(await api.text(), readFileSync(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8'), `${at}: the package's OpenAPI document`)
    } finally {
      await running.close()
    }
  }
  await store.close()
}
// price-store/engine shares the main entry's code: a plan it makes is run by a store of the same format (a
// plan is told by `instanceof`). price-store/trust is checked with the worker threads below.
const engineEsm = await import('price-store/engine')
const engineCjs = require('price-store/engine')
const trustEsm = await import('price-store/trust')
const trustCjs = require('price-store/trust')
for (const [name, api, engine] of [['esm', esm, engineEsm], ['cjs', cjs, engineCjs]]) {
  const store = await api.PriceStore.open(new MemoryLevel(), { provider })
  await store.put(record)
  const plan = engine.planQuery(engine.parseQuery({ symbol: 'BTC' }, { provider, limits: api.DEFAULT_LIMITS }), api.DEFAULT_LIMITS.maxRangePoints)
  assert.deepEqual((await store.run(plan)).map((r) => r.value), [1.5], `${name}: store.run of price-store/engine's plan`)
  await store.close()
}
for (const name of ['parseQuery', 'verifyRecord', 'SignatureVerifier']) assert.equal(esm[name], undefined, `the main entry leaves ${name} to its own entry`)
// Errors of one entry and format are recognised by the others.
for (const [name, http] of [['esm', httpEsm], ['cjs', httpCjs]]) {
  assert.equal(http.statusForError(new esm.PriceStoreError('PRICE_NOT_OPEN', 'x').code), 503, `${name}: statusForError`)
  assert.equal(http.toExactJson({ value: -0 }), '{"value":-0}', `${name}: toExactJson`)
}
// price-store/testing: its own entry, in both formats, never loaded by the main one.
assert.equal(esm.referenceQuery, undefined, 'the main entry leaves the testing helpers out')
assert.ok(!Object.keys(require.cache).some((path) => path.includes('/fast-check/')), 'the main and http entries load no fast-check')
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
// price-store/cluster: its own entry in both formats, sharing the store's code (a PriceStore of price-store is
// what a ClusterNode follows), and refusing bad options before any connection is tried.
const clusterEsm = await import('price-store/cluster')
const clusterCjs = require('price-store/cluster')
assert.deepEqual(Object.keys(clusterCjs).sort(), Object.keys(clusterEsm).sort(), 'price-store/cluster: the same names in both formats')
for (const [name, cluster, api] of [['esm', clusterEsm, esm], ['cjs', clusterCjs, cjs]]) {
  const store = await api.PriceStore.open(new MemoryLevel(), { provider })
  await assert.rejects(cluster.ClusterNode.start(store, { servers: 'not-a-url' }), (err) => err.code === 'PRICE_INVALID_OPTIONS', `${name}: ClusterNode.start checks its options`)
  await store.close()
}
// price-store/client: its own entry in both formats, built for browsers: no import or require of anything (Node's
// modules least of all), so a page bundles it as it is; with every node refusing, a read says so by code.
const clientEsm = await import('price-store/client')
const clientCjs = require('price-store/client')
assert.deepEqual(Object.keys(clientCjs).sort(), Object.keys(clientEsm).sort(), 'price-store/client: the same names in both formats')
for (const file of ['client.js', 'client.cjs']) {
  const text = readFileSync(new URL(`../../dist/${file}`, import.meta.url), 'utf8')
  assert.doesNotMatch(text, /\brequire\(|^import\b|\bfrom\s*["']|\bimport\(/m, `dist/${file} imports nothing`)
}
for (const [name, client] of [['esm', clientEsm], ['cjs', clientCjs]]) {
  const reader = new client.PriceClient({ nodes: ['http://127.0.0.1:1'], retry: { rounds: 1 } })
  await assert.rejects(reader.latest('BTC'), (err) => client.isPriceClientError(err, 'PRICE_CLIENT_NO_NODE') && err.details.nodes.length === 1, `${name}: PriceClient fails over, then gives up`)
}
// Signature verification: SignatureVerifier starts its worker threads from dist/trust-worker.js in both formats,
// and they verify records RedStone's API served (test/trust/fixtures) as valid, a changed one as invalid; a store
// under `reject` does the same in its own workers (dist/ingest-worker.js).
const fixture = JSON.parse(readFileSync(new URL('../trust/fixtures/redstone-api-lite-records.json', import.meta.url), 'utf8'))
const served = fixture.captures.flatMap((capture) => capture.records)
const signers = { providers: [{ id: fixture.provider.id, publicKey: fixture.provider.publicKey, evmAddresses: [fixture.provider.evmAddress] }] }
for (const [name, api, trust] of [['esm', esm, trustEsm], ['cjs', cjs, trustCjs]]) {
  const verifier = new trust.SignatureVerifier({ signers, threads: 2 })
  try {
    const verdicts = await verifier.verifyMany([...served, { ...served[0], value: served[0].value + 1 }])
    assert.deepEqual(verdicts.map((verdict) => verdict.overall), [...served.map(() => 'valid'), 'invalid'], `${name}: SignatureVerifier in worker threads`)
  } finally {
    await verifier.close()
  }
  // A store verifies its batches in its own workers, from dist/ingest-worker.js. The captured records carry a lite
  // EVM signature alone, and a store takes a record with an Arweave one: given one that fails, each record's stored
  // verdict is what verifyRecord says in this thread (the Arweave check malformed, the lite one valid).
  const store = await api.PriceStore.open(new MemoryLevel(), {
    provider: { name: 'redstone', id: fixture.provider.id, publicKey: fixture.provider.publicKey },
    signatures: { policy: 'flag', evmSigners: [fixture.provider.evmAddress], threads: 2 },
  })
  try {
    const given = served.map((record) => ({ ...record, signature: 'AAAA' }))
    await store.putBatch(given)
    const expected = given.map((record) => trust.verifyRecord(record, signers))
    assert.deepEqual(expected.map((verdict) => verdict.checks.map((check) => check.result)), given.map(() => ['malformed', 'valid']), `${name}: the expected verdicts`)
    const report = await store.verify({ limit: given.length })
    assert.deepEqual(report.failing.map((failing) => failing.verdict), expected, `${name}: a store's ingest workers verify its batches`)
  } finally {
    await store.close()
  }
}
const help = execFileSync(process.execPath, [new URL('../../dist/cli.js', import.meta.url).pathname, '--help'], { encoding: 'utf8' })
assert.match(help, /serve/, 'the bin prints its help')
console.log('dist: esm, cjs, price-store/engine, price-store/trust, price-store/http (the chart page, also under a basePath), price-store/cluster, price-store/client, price-store/testing, the signature workers and bin OK')
