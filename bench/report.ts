/**
 * Renders a run as markdown: the issue's targets with the measured ratios,
 * then every case with median and p90 for each contender, the ratios
 * store/SQLite and store/floor (time ratios: 0.20 means the store takes a
 * fifth of the time, i.e. is 5× faster), ingest and HTTP.
 */
import type { HttpCaseResult } from './http.bench.js'
import type { IngestResult } from './load.js'
import type { CaseResult, Stats } from './measure.js'

export interface RunInfo {
  readonly date: string
  readonly mode: string
  readonly command: string
  readonly machine: string
  readonly node: string
  /** The project commit measured. */
  readonly source: string
  readonly versions: string
  readonly data: string
  readonly seconds: number
}

export interface IngestRow extends IngestResult {
  /** Measured in an earlier run (the data set was reused). */
  readonly reused: boolean
}

export interface RunResults {
  readonly info: RunInfo
  readonly cases: readonly CaseResult[]
  readonly ingest: readonly IngestRow[]
  readonly http: readonly HttpCaseResult[]
  readonly familyRss: Readonly<Record<string, number>>
  readonly notes: readonly string[]
}

const int = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—')
const us = (x: number): string => {
  if (!Number.isFinite(x)) return '—'
  if (x >= 100_000) return `${(x / 1000).toFixed(0)} ms`
  if (x >= 10_000) return `${(x / 1000).toFixed(1)} ms`
  if (x >= 100) return `${x.toFixed(0)} µs`
  return `${x.toFixed(1)} µs`
}
const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? (a / b).toFixed(2) : '—')
const medP90 = (s: Stats | undefined): string => (s === undefined ? '—' : `${us(s.median)} / ${us(s.p90)}`)
const times = (storeTime: number, otherTime: number): string => {
  const r = otherTime / storeTime
  if (!Number.isFinite(r)) return '—'
  return r >= 1 ? `${r.toFixed(r >= 10 ? 0 : 1)}× faster` : `${(1 / r).toFixed(r <= 0.1 ? 0 : 1)}× slower`
}

interface TargetRow {
  readonly item: string
  readonly target: string
  readonly measured: string
  readonly met: boolean | undefined
}

/** The SQLite layout whose sustained ingest was faster: the ingest baseline. */
export function ingestBaseline(rows: readonly IngestRow[], batchSize: number): IngestRow | undefined {
  return rows
    .filter((row) => row.label.startsWith('SQLite') && row.batchSize === batchSize)
    .sort((a, b) => b.recordsPerSecond - a.recordsPerSecond)[0]
}

function targetRows(results: RunResults): TargetRow[] {
  const rows: TargetRow[] = []
  for (const result of results.cases) {
    for (const target of result.targets ?? []) {
      const other = target.against === 'sqlite' ? result.warm.sqlite : result.warm.floor
      if (other === undefined) continue
      const r = result.warm.store.median / other.median
      const spacedOther = target.against === 'sqlite' ? result.spaced.sqlite : result.spaced.floor
      const spaced = spacedOther === undefined ? '' : `; spaced ${ratio(result.spaced.store.median, spacedOther.median)}`
      rows.push({
        item: result.name,
        target: `${target.text} (store/${target.against === 'sqlite' ? 'SQLite' : 'floor'} ≤ ${target.maxRatio.toFixed(2)})`,
        measured: `${r.toFixed(2)} (${times(result.warm.store.median, other.median)})${spaced}`,
        met: r <= target.maxRatio,
      })
    }
  }
  const store = results.ingest.find((row) => row.label === 'store' && row.batchSize === 10_000)
  const baseline = ingestBaseline(results.ingest, 10_000)
  if (store !== undefined && baseline !== undefined) {
    const share = store.recordsPerSecond / baseline.recordsPerSecond
    const span = `${store.days} d`
    rows.push({
      item: `ingest, ${span}, batches of 10,000`,
      target: `≥ 1.2× SQLite's records/s (baseline: ${baseline.label})`,
      measured: `${share.toFixed(2)}× (${int(store.recordsPerSecond)} vs ${int(baseline.recordsPerSecond)} rec/s)`,
      met: share >= 1.2,
    })
    rows.push({
      item: `ingest, ${span}, batches of 10,000`,
      target: 'no write stall over 1 s (longest batch)',
      measured: `${int(store.maxBatchMs)} ms (SQLite ${int(baseline.maxBatchMs)} ms)`,
      met: store.maxBatchMs <= 1000,
    })
    rows.push({
      item: `ingest, ${span}, batches of 10,000`,
      target: "bytes/record ≤ SQLite's",
      measured: `${int(store.bytesPerRecord)} vs ${int(baseline.bytesPerRecord)} B/record`,
      met: store.bytesPerRecord <= baseline.bytesPerRecord,
    })
  }
  for (const result of results.http) {
    if (result.target === undefined) continue
    const share = result.servers.store.requestsPerSecond / result.servers.constant.requestsPerSecond
    rows.push({
      item: result.name,
      target: result.target.text,
      measured: `${(share * 100).toFixed(0)} % (${int(result.servers.store.requestsPerSecond)} vs ${int(result.servers.constant.requestsPerSecond)} req/s)`,
      met: share >= result.target.minShareOfConstant,
    })
  }
  return rows
}

export function renderMarkdown(results: RunResults): string {
  const { info } = results
  const out: string[] = []
  out.push(`## Results: ${info.mode}`, '')
  out.push(`- Date: ${info.date}; run took ${(info.seconds / 60).toFixed(1)} min`)
  out.push(`- Command: \`${info.command}\`; store code: ${info.source}`)
  out.push(`- Machine: ${info.machine}`)
  out.push(`- Node ${info.node}; ${info.versions}`)
  out.push(`- Data: ${info.data}`)
  out.push('')

  const targets = targetRows(results)
  if (targets.length > 0) {
    out.push('### Targets (issue 4)', '')
    out.push('| case | target | measured (store/other, warm median) | met |', '|---|---|---|:-:|')
    for (const row of targets) out.push(`| ${row.item} | ${row.target} | ${row.measured} | ${row.met === undefined ? '—' : row.met ? 'yes' : '**no**'} |`)
    out.push('')
  }

  if (results.cases.length > 0) {
    out.push('### Queries (per call: median / p90)', '')
    out.push(
      'Warm: calls back to back. Spaced: 2 ms idle before each call. Ratios are time ratios (below 1: the store is faster).',
      '',
      '| case | records | store | SQLite | floor | store/SQLite | store/floor | spaced: store · SQLite · ratio | SQLite plan | peak RSS (anon) |',
      '|---|--:|--:|--:|--:|--:|--:|--:|---|--:|',
    )
    for (const c of results.cases) {
      const floorMedian = c.warm.floor?.median ?? Number.NaN
      out.push(
        `| ${c.name} | ${int(c.recordsPerOp)} | ${medP90(c.warm.store)} | ${medP90(c.warm.sqlite)} | ${medP90(c.warm.floor)} | ` +
          `${ratio(c.warm.store.median, c.warm.sqlite.median)} | ${ratio(c.warm.store.median, floorMedian)} | ` +
          `${us(c.spaced.store.median)} · ${us(c.spaced.sqlite.median)} · ${ratio(c.spaced.store.median, c.spaced.sqlite.median)} | ` +
          `${c.sqlitePlan} | ${int(c.peakRssMB)} (${int(c.peakAnonMB)}) MB |`,
      )
    }
    out.push('')
    const streams = results.cases.filter((c) => c.family === 'stream')
    if (streams.length > 0) {
      out.push('Streaming throughput (records/s at the warm median):', '')
      for (const c of streams) {
        const rate = (s: Stats | undefined): string => (s === undefined ? '—' : int((c.recordsPerOp / s.median) * 1e6))
        out.push(`- ${c.name}: store ${rate(c.warm.store)}, SQLite ${rate(c.warm.sqlite)}, floor ${rate(c.warm.floor)} records/s`)
      }
      out.push('')
    }
  }

  if (results.ingest.length > 0) {
    out.push('### Ingest', '')
    out.push(
      'Rates count time inside the write calls (`putMany` / one SQLite transaction per batch). Chunks: the load cut in 20 equal parts.',
      '',
      '| target | batch | records | rec/s | first chunk · last chunk · slowest chunk | batch median / p99 / max (stall) | finish | bytes/record | peak RSS |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
    )
    for (const row of results.ingest) {
      const chunks = row.chunkRates
      out.push(
        `| ${row.label}${row.reused ? ' (reused build)' : ''} | ${int(row.batchSize)} | ${int(row.records)} | ${int(row.recordsPerSecond)} | ` +
          `${int(chunks[0] ?? Number.NaN)} · ${int(chunks[chunks.length - 1] ?? Number.NaN)} · ${int(Math.min(...chunks))} | ` +
          `${row.medianBatchMs.toFixed(0)} / ${row.p99BatchMs.toFixed(0)} / ${row.maxBatchMs.toFixed(0)} ms | ${row.finishSeconds.toFixed(1)} s | ` +
          `${int(row.bytesPerRecord)} | ${int(row.peakRssMB)} MB |`,
      )
    }
    out.push('')
  }

  if (results.http.length > 0) {
    out.push('### HTTP over loopback', '')
    out.push(
      '| case | connections | bytes/answer | store req/s | constant req/s | SQLite req/s | store/constant | store/SQLite (req/s) | latency median / p90: store · constant · SQLite |',
      '|---|--:|--:|--:|--:|--:|--:|--:|---|',
    )
    for (const h of results.http) {
      const s = h.servers
      out.push(
        `| ${h.name} | ${h.concurrency} | ${int(h.bytesPerAnswer)} | ${int(s.store.requestsPerSecond)} | ${int(s.constant.requestsPerSecond)} | ${int(s.sqlite.requestsPerSecond)} | ` +
          `${ratio(s.store.requestsPerSecond, s.constant.requestsPerSecond)} | ${ratio(s.store.requestsPerSecond, s.sqlite.requestsPerSecond)} | ` +
          `${us(s.store.medianUs)} / ${us(s.store.p90Us)} · ${us(s.constant.medianUs)} / ${us(s.constant.p90Us)} · ${us(s.sqlite.medianUs)} / ${us(s.sqlite.p90Us)} |`,
      )
    }
    const errors = results.http.reduce((a, h) => a + h.servers.store.errors + h.servers.sqlite.errors + h.servers.constant.errors, 0)
    out.push('', `${results.http[0]?.rounds ?? 0} rounds of ${results.http[0]?.secondsPerRound ?? 0} s per server, alternated; median round shown; non-200 answers: ${errors}.`, '')
  }

  const calibrated = results.cases.filter((c) => Object.keys(c.calibration).length > 1)
  if (calibrated.length > 0) {
    out.push('### SQLite plans tried (calibration median µs; the fastest is measured)', '')
    for (const c of calibrated) {
      const entries = Object.entries(c.calibration).map(([name, v]) => `${name} ${typeof v === 'number' ? int(v) : v}`)
      out.push(`- ${c.name}: ${entries.join(', ')}`)
    }
    out.push('')
  }
  const rss = Object.entries(results.familyRss)
  const notes = [
    ...results.notes,
    ...(rss.length > 0 ? [`Peak RSS per family process (store, both SQLite files and the floor open in one process; RSS counts SQLite's mmap and LevelDB's mapped table files): ${rss.map(([f, mb]) => `${f} ${int(mb)} MB`).join(', ')}.`] : []),
    ...results.cases.filter((c) => c.note !== undefined).map((c) => `${c.name}: ${c.note}.`),
    ...(results.cases.length > 0
      ? [`Calls checked equal (store vs SQLite records, floor entry count): ${results.cases.map((c) => `${c.name} ${c.checkedCalls}`).join(', ')}.`]
      : []),
  ]
  if (notes.length > 0) {
    out.push('### Notes', '')
    for (const note of notes) out.push(`- ${note}`)
    out.push('')
  }
  return out.join('\n')
}
