/**
 * The real /metrics text passes Prometheus's own lint (issue 23: `promtool
 * check metrics` exited non-zero on prom-client's default
 * `nodejs_active_*_total` gauges). The rules promtool applies are checked
 * here on every run, since CI has no promtool; where promtool is installed,
 * it is run on the same text too. And the store's size gauges
 * (`price_store_records`, `_symbols`, `_disk_bytes`) are there, equal to
 * `store.stats()`, read at most once per `STORE_SIZE_MAX_AGE_MS`.
 */
import { spawnSync } from 'node:child_process'
import { ClassicLevel } from 'classic-level'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '../../../src/adapters/http/node.js'
import { DROPPED_DEFAULT_METRICS } from '../../../src/adapters/http/observe/metrics.js'
import { STORE_SIZE_MAX_AGE_MS, registerStoreSizeMetrics } from '../../../src/adapters/http/observe/store-size-metrics.js'
import { PriceStore } from '../../../src/index.js'
import { tempDir } from '../../cli/helpers.js'
import { PROVIDER, demoRecords } from '../../support/http/demo-server.js'
import { parsePrometheus } from '../../support/http/operations-helpers.js'

let store: PriceStore
let server: RunningServer
let text: string
let cleanup: () => Promise<void>

beforeAll(async () => {
  // On disk, so the disk gauge has a size to show.
  const dir = await tempDir()
  cleanup = dir.cleanup
  store = await PriceStore.open(new ClassicLevel(dir.dir), { provider: PROVIDER })
  await store.putMany(demoRecords())
  server = await startServer({ store, metrics: true })
  // Requests of several endpoints, forms and statuses, so every family has samples.
  for (const path of ['/prices?symbol=BTC', '/prices?symbol=BTC&limit=x', '/health', '/udf/config', '/nope']) await (await fetch(`${server.url}${path}`)).arrayBuffer()
  for (let i = 0; i < 100 && !text?.includes('endpoint="not_found"'); i++) text = await (await fetch(`${server.url}/metrics`)).text()
})

afterAll(async () => {
  await server?.close()
  await store?.close()
  await cleanup?.()
})

/** One metric family of a scrape: its `# HELP`, `# TYPE` and sample lines. */
interface Family {
  help?: string | undefined
  type?: string | undefined
  readonly samples: { readonly name: string; readonly labels: readonly string[] }[]
}

/** The families of a scrape in Prometheus's text format, by name. */
function familiesOf(scrape: string): Map<string, Family> {
  const families = new Map<string, Family>()
  const family = (name: string): Family => {
    let found = families.get(name)
    if (found === undefined) families.set(name, (found = { samples: [] }))
    return found
  }
  for (const line of scrape.split('\n')) {
    if (line === '') continue
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line)
    if (meta !== null) {
      if (meta[1] === 'HELP') family(meta[2]!).help = meta[3]
      else family(meta[2]!).type = meta[3]
      continue
    }
    const sample = /^([^{\s]+)(?:\{(.*)\})? \S+$/.exec(line)
    if (sample === null) throw new Error(`not a sample line: ${line}`)
    const name = sample[1]!
    const labels = [...(sample[2] ?? '').matchAll(/([^=,\s]+)="(?:[^"\\]|\\.)*"/g)].map((match) => match[1]!)
    const owner = [name, name.replace(/_(bucket|sum|count)$/, '')].find((candidate) => families.get(candidate)?.type !== undefined) ?? name
    family(owner).samples.push({ name, labels })
  }
  return families
}

/** Units promtool wants in their base form (promlint's `lintMetricUnits`), and abbreviations it refuses (`lintUnitAbbreviations`). */
const NON_BASE_UNITS = /(^|_)(milliseconds|microseconds|nanoseconds|minutes|hours|days|weeks|kilobytes|megabytes|gigabytes|millimeters|kilometers|percent)(_|$)/
const ABBREVIATED_UNITS = /(^|_)(s|ms|us|ns|sec|b|kb|mb|gb|tb|pb|m|h|d)(_|$)/

/** The problems `promtool check metrics` reports for a scrape, by the rules of its promlint. */
function lintProblems(scrape: string): string[] {
  const problems: string[] = []
  for (const [name, family] of familiesOf(scrape)) {
    if (family.type === undefined) problems.push(`${name}: no # TYPE`)
    if (family.help === undefined || family.help.trim() === '') problems.push(`${name}: no help text`)
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) problems.push(`${name}: not a valid metric name`)
    if (name.includes(':')) problems.push(`${name}: metric names should not contain ':'`)
    if (/[A-Z]/.test(name)) problems.push(`${name}: metric names should be written in snake_case not camelCase`)
    if (family.type === 'counter' && !name.endsWith('_total')) problems.push(`${name}: counter metrics should have "_total" suffix`)
    if (family.type !== 'counter' && name.endsWith('_total')) problems.push(`${name}: non-counter metrics should not have "_total" suffix`)
    if (NON_BASE_UNITS.test(name)) problems.push(`${name}: use base unit`)
    if (ABBREVIATED_UNITS.test(name)) problems.push(`${name}: metric names should not contain abbreviated units`)
    if (/_(counter|gauge|histogram|summary)(_|$)/.test(name)) problems.push(`${name}: metric name should not include type`)
    for (const sample of family.samples) {
      for (const label of sample.labels) {
        if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(label) || label.startsWith('__')) problems.push(`${sample.name}: bad label name ${label}`)
        if (/[A-Z]/.test(label)) problems.push(`${sample.name}: label names should be written in snake_case not camelCase`)
        if (label === 'le' && family.type !== 'histogram') problems.push(`${sample.name}: non-histogram metrics should not have "le" label`)
        if (label === 'quantile' && family.type !== 'summary') problems.push(`${sample.name}: non-summary metrics should not have "quantile" label`)
      }
      const suffixed = sample.name !== name
      if (suffixed && family.type !== 'histogram' && family.type !== 'summary') problems.push(`${sample.name}: a sample of ${name} with a histogram's suffix`)
    }
  }
  return problems
}

/** The promtool on PATH, if any. */
function promtool(): string | undefined {
  const found = spawnSync('promtool', ['--version'], { encoding: 'utf8' })
  return found.status === 0 ? 'promtool' : undefined
}
const PROMTOOL = promtool()

describe('GET /metrics passes Prometheus\'s lint', () => {
  it('by the rules promtool applies: HELP and TYPE, names, _total only on counters, base units, label names', () => {
    expect(text).toContain('price_store_http_requests_total{')
    expect(lintProblems(text)).toEqual([])
    // prom-client's gauges named like counters are left out; their labelled twins stay.
    for (const name of DROPPED_DEFAULT_METRICS) expect(text).not.toContain(`${name} `)
    expect(text).toMatch(/^nodejs_active_handles\{type="[^"]+"\} \d+$/m)
    expect(text).toContain('# TYPE process_cpu_seconds_total counter')
  })

  it('the lint catches what promtool caught: a gauge named like a counter, a counter without _total, a family without HELP', () => {
    expect(lintProblems('# HELP nodejs_active_handles_total Total.\n# TYPE nodejs_active_handles_total gauge\nnodejs_active_handles_total 3\n')).toEqual([
      'nodejs_active_handles_total: non-counter metrics should not have "_total" suffix',
    ])
    expect(lintProblems('# HELP requests Requests.\n# TYPE requests counter\nrequests 3\n')).toEqual(['requests: counter metrics should have "_total" suffix'])
    expect(lintProblems('# TYPE latency_ms gauge\nlatency_ms 3\n')).toEqual([
      'latency_ms: no help text',
      'latency_ms: metric names should not contain abbreviated units',
    ])
  })

  it.skipIf(PROMTOOL === undefined)(`promtool check metrics exits 0${PROMTOOL === undefined ? ' (skipped: promtool is not on PATH)' : ''}`, () => {
    const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
    expect(`${checked.stdout}${checked.stderr}`).toBe('')
    expect(checked.status).toBe(0)
  })
})

describe('the store\'s size: price_store_records, price_store_symbols, price_store_disk_bytes', () => {
  it('equal store.stats(), as gauges', async () => {
    const stats = await store.stats()
    const scrape = parsePrometheus(text)
    expect(scrape.types.get('price_store_records')).toBe('gauge')
    expect(scrape.types.get('price_store_symbols')).toBe('gauge')
    expect(scrape.types.get('price_store_disk_bytes')).toBe('gauge')
    expect(scrape.value('price_store_records')).toBe(stats.records)
    expect(scrape.value('price_store_records')).toBe(demoRecords().length)
    expect(scrape.value('price_store_symbols')).toBe(stats.symbols)
    expect(scrape.value('price_store_disk_bytes')).toBeGreaterThan(0)
  })

  it('are read once per scrape and at most once per STORE_SIZE_MAX_AGE_MS; a size the store cannot tell shows no sample', async () => {
    let now = 1_000_000
    let reads = 0
    let records = 5
    const stub = {
      stats: () => {
        reads++
        return Promise.resolve({ records, symbols: 2, disk: null })
      },
    }
    const registry = new Registry()
    registerStoreSizeMetrics(registry, stub, () => now)
    const read = async () => parsePrometheus(await registry.metrics())
    const first = await read()
    expect(reads).toBe(1) // one read for the three gauges
    expect([first.value('price_store_records'), first.value('price_store_symbols')]).toEqual([5, 2])
    expect(first.has('price_store_disk_bytes')).toBe(false)
    records = 7
    now += STORE_SIZE_MAX_AGE_MS - 1
    expect((await read()).value('price_store_records')).toBe(5) // from the last reading
    expect(reads).toBe(1)
    now += 1
    expect((await read()).value('price_store_records')).toBe(7)
    expect(reads).toBe(2)
  })

  it('a store that fails to tell its size shows none of them, and is asked again on the next scrape', async () => {
    let fail = true
    const stub = { stats: () => (fail ? Promise.reject(new Error('closing')) : Promise.resolve({ records: 1, symbols: 1, disk: { bytes: 10 } })) }
    const registry = new Registry()
    registerStoreSizeMetrics(registry, stub, () => 0)
    const failed = parsePrometheus(await registry.metrics())
    expect(failed.has('price_store_records')).toBe(false)
    fail = false
    const scrape = parsePrometheus(await registry.metrics())
    expect([scrape.value('price_store_records'), scrape.value('price_store_disk_bytes')]).toEqual([1, 10])
  })
})
