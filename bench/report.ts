/**
 * Renders a run as markdown: the issues' targets with the measured ratios,
 * then every case with median and p90 for each contender, the ratios
 * store/SQLite and store/floor (time ratios: 0.20 means the store takes a
 * fifth of the time, i.e. is 5× faster), ingest and HTTP. A store-only run
 * (issue 9) has the store's columns only.
 */
import type { HttpCaseResult } from './http.bench.js'
import type { IngestResult } from './load.js'
import { ingestHttpLines, type IngestHttpResult } from './ingest-http.bench.js'
import type { CaseResult, Stats } from './measure.js'
import type { StoreCaseResult } from './store-only.js'
import type { LiveCaseResult } from './stream-latency.bench.js'
import { writeTargetRows, writesLines, type WritesResults } from './writes.bench.js'

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
  /** Days of data, and whether SQLite and the floor were left out (both absent in results from before issue 9). */
  readonly days?: number
  readonly storeOnly?: boolean
}

export interface IngestRow extends IngestResult {
  /** Measured in an earlier run (the data set was reused). */
  readonly reused: boolean
}

export interface RunResults {
  readonly info: RunInfo
  readonly cases: readonly CaseResult[]
  /** The cases of a store-only run (`cases` is then empty); absent in results from before issue 9. */
  readonly storeCases?: readonly StoreCaseResult[]
  readonly ingest: readonly IngestRow[]
  readonly http: readonly HttpCaseResult[]
  /** The live stream's cases (issue 11); absent in results from before it. */
  readonly live?: readonly LiveCaseResult[]
  readonly familyRss: Readonly<Record<string, number>>
  readonly notes: readonly string[]
  /** POST /prices against in-process ingest (issue 11); absent in results from before it. */
  readonly ingestHttp?: readonly IngestHttpResult[]
  /** The write workloads (issue 20); absent in results from before them or when the family did not run. */
  readonly writes?: WritesResults
}

/** Issue 9: the store's ingest rate over the data's last day must be at least this share of its first day's. */
export const DAY_RATE_TARGET = 0.8

export const int = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—')
/** A time given in µs, shown in µs or ms. */
export const us = (x: number): string => {
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
  /** The issue that set the target. */
  readonly issue: number
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

/**
 * Whether a load's last day can be told from its first: with less than two
 * days of data their 24 h share records (at a day or less, all of them), so
 * their ratio says nothing about growth.
 */
export function daysApart(row: IngestRow): boolean {
  return row.days >= 2 && row.lastToFirstDay !== undefined
}

/** A load's first- and last-day rates and their ratio, `—` when its build predates them. */
function dayRates(row: IngestRow): string {
  if (row.firstDayRecordsPerSecond === undefined || row.lastDayRecordsPerSecond === undefined || row.lastToFirstDay === undefined) return '—'
  return `${int(row.firstDayRecordsPerSecond)} · ${int(row.lastDayRecordsPerSecond)} · ${row.lastToFirstDay.toFixed(2)}`
}

/**
 * The ingest targets: against SQLite's faster layout (issue 4) when SQLite
 * was loaded; the longest batch and the last day against the first (issue 9)
 * for the store alone too.
 */
function ingestTargetRows(ingest: readonly IngestRow[]): TargetRow[] {
  const rows: TargetRow[] = []
  const store = ingest.find((row) => row.label === 'store' && row.batchSize === 10_000)
  if (store === undefined) return rows
  const item = `ingest, ${store.days} d, batches of 10,000`
  const baseline = ingestBaseline(ingest, 10_000)
  if (baseline !== undefined) {
    const share = store.recordsPerSecond / baseline.recordsPerSecond
    rows.push({
      issue: 4,
      item,
      target: `≥ 1.2× SQLite's records/s (baseline: ${baseline.label})`,
      measured: `${share.toFixed(2)}× (${int(store.recordsPerSecond)} vs ${int(baseline.recordsPerSecond)} rec/s)`,
      met: share >= 1.2,
    })
  }
  rows.push({
    issue: 4,
    item,
    target: 'no write stall over 1 s (longest batch)',
    measured: `${int(store.maxBatchMs)} ms${baseline === undefined ? '' : ` (SQLite ${int(baseline.maxBatchMs)} ms)`}`,
    met: store.maxBatchMs <= 1000,
  })
  if (baseline !== undefined) {
    rows.push({
      issue: 4,
      item,
      target: "bytes/record ≤ SQLite's",
      measured: `${int(store.bytesPerRecord)} vs ${int(baseline.bytesPerRecord)} B/record`,
      met: store.bytesPerRecord <= baseline.bytesPerRecord,
    })
  }
  if (daysApart(store)) {
    const ratioOfDays = store.lastToFirstDay as number
    rows.push({
      issue: 9,
      item,
      target: `last day's rate ≥ ${DAY_RATE_TARGET}× the first day's`,
      measured: `${ratioOfDays.toFixed(2)}× (${int(store.lastDayRecordsPerSecond ?? Number.NaN)} vs ${int(store.firstDayRecordsPerSecond ?? Number.NaN)} rec/s)`,
      met: ratioOfDays >= DAY_RATE_TARGET,
    })
  }
  return rows
}

/** `(issue 4)`, `(issues 4 and 9)`: the issues whose targets the table holds. */
function issuesOf(rows: readonly TargetRow[]): string {
  const issues = [...new Set(rows.map((row) => row.issue))].sort((a, b) => a - b)
  return issues.length === 1 ? `(issue ${issues[0]})` : `(issues ${issues.slice(0, -1).join(', ')} and ${issues[issues.length - 1]})`
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
      const { maxRatio } = target
      rows.push({
        issue: target.issue ?? 4,
        item: result.name,
        // No number set (the issue asks for the ratio): target and met are "—".
        target: maxRatio === undefined ? '—' : `${target.text} (store/${target.against === 'sqlite' ? 'SQLite' : 'floor'} ≤ ${maxRatio.toFixed(2)})`,
        measured: `${r.toFixed(2)} (${times(result.warm.store.median, other.median)})${spaced}`,
        met: maxRatio === undefined ? undefined : r <= maxRatio,
      })
    }
  }
  rows.push(...ingestTargetRows(results.ingest))
  rows.push(...writeTargetRows(results.writes).map((row) => ({ issue: 20, ...row })))
  for (const result of results.http) {
    if (result.target === undefined) continue
    const share = result.servers.store.requestsPerSecond / result.servers.constant.requestsPerSecond
    rows.push({
      issue: 4,
      item: result.name,
      target: result.target.text,
      measured: `${(share * 100).toFixed(0)} % (${int(result.servers.store.requestsPerSecond)} vs ${int(result.servers.constant.requestsPerSecond)} req/s)`,
      met: share >= result.target.minShareOfConstant,
    })
  }
  return rows
}

/** The queries of a store-only run: the store's columns of the full table, and the stream's rate. */
function storeCaseLines(cases: readonly StoreCaseResult[]): string[] {
  if (cases.length === 0) return []
  const out: string[] = []
  out.push('### Queries, store only (per call: median / p90)', '')
  out.push(
    'Warm: calls back to back. Spaced: 2 ms idle before each call. No SQLite and no floor: the store runs alone, so its calls do not alternate with theirs.',
    '',
    '| case | records | warm | spaced | peak RSS (anon) |',
    '|---|--:|--:|--:|--:|',
  )
  for (const c of cases) {
    out.push(`| ${c.name} | ${int(c.recordsPerOp)} | ${medP90(c.warm.store)} | ${medP90(c.spaced.store)} | ${int(c.peakRssMB)} (${int(c.peakAnonMB)}) MB |`)
  }
  out.push('')
  const streams = cases.filter((c) => c.family === 'stream')
  if (streams.length > 0) {
    out.push('Streaming throughput (records/s at the warm median):', '')
    for (const c of streams) out.push(`- ${c.name}: store ${int((c.recordsPerOp / c.warm.store.median) * 1e6)} records/s`)
    out.push('')
  }
  return out
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
    out.push(`### Targets ${issuesOf(targets)}`, '')
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
  out.push(...storeCaseLines(results.storeCases ?? []))

  if (results.ingest.length > 0) {
    out.push('### Ingest', '')
    out.push(
      'Rates count time inside the write calls (`putMany` / one SQLite transaction per batch). Chunks: the load cut in 20 equal parts. ' +
        "Days: the records of the data's first and last 24 h (the same records when the data spans a day or less), and last/first.",
      '',
      '| target | batch | records | rec/s | first chunk · last chunk · slowest chunk | first day · last day · last/first | batch median / p99 / max (stall) | finish | bytes/record | peak RSS |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    )
    for (const row of results.ingest) {
      const chunks = row.chunkRates
      out.push(
        `| ${row.label}${row.reused ? ' (reused build)' : ''} | ${int(row.batchSize)} | ${int(row.records)} | ${int(row.recordsPerSecond)} | ` +
          `${int(chunks[0] ?? Number.NaN)} · ${int(chunks[chunks.length - 1] ?? Number.NaN)} · ${int(Math.min(...chunks))} | ${dayRates(row)} | ` +
          `${row.medianBatchMs.toFixed(0)} / ${row.p99BatchMs.toFixed(0)} / ${row.maxBatchMs.toFixed(0)} ms | ${row.finishSeconds.toFixed(1)} s | ` +
          `${int(row.bytesPerRecord)} | ${int(row.peakRssMB)} MB |`,
      )
    }
    out.push('')
  }

  out.push(...ingestHttpLines(results.ingestHttp ?? []))
  out.push(...writesLines(results.writes))

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

  out.push(...liveCaseLines(results.live ?? []))

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
  const storeCases = results.storeCases ?? []
  const opened =
    results.info.storeOnly === true
      ? 'the store alone open in each; RSS counts LevelDB\'s mapped table files'
      : "store, both SQLite files and the floor open in one process; RSS counts SQLite's mmap and LevelDB's mapped table files"
  const notes = [
    ...results.notes,
    ...(rss.length > 0 ? [`Peak RSS per family process (${opened}): ${rss.map(([f, mb]) => `${f} ${int(mb)} MB`).join(', ')}.`] : []),
    ...[...results.cases, ...storeCases].filter((c) => c.note !== undefined).map((c) => `${c.name}: ${c.note}.`),
    ...(results.cases.length > 0
      ? [`Calls checked equal (store vs SQLite records, floor entry count): ${results.cases.map((c) => `${c.name} ${c.checkedCalls}`).join(', ')}.`]
      : []),
    ...(results.cases.some((c) => c.setupChecked !== undefined)
      ? [
          "Parameter sets checked at setup, untimed, against every SQLite plan tried (each plan must return the store's answer exactly): " +
            `${results.cases.flatMap((c) => (c.setupChecked === undefined ? [] : [`${c.name} ${c.setupChecked}`])).join(', ')}.`,
        ]
      : []),
    ...(storeCases.length > 0
      ? [`Calls checked for the record count the data implies (no SQLite to compare with): ${storeCases.map((c) => `${c.name} ${c.checkedCalls}`).join(', ')}.`]
      : []),
  ]
  if (notes.length > 0) {
    out.push('### Notes', '')
    for (const note of notes) out.push(`- ${note}`)
    out.push('')
  }
  return out.join('\n')
}

/** The live stream's latency table (issue 11). */
function liveCaseLines(live: readonly LiveCaseResult[]): string[] {
  if (live.length === 0) return []
  const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(x < 10 ? 2 : 1)} ms` : '—')
  const out = [
    '### Live stream over loopback',
    '',
    'A writer commits in the server\'s process; a client in another process reads `GET /prices/stream`. Latency: the client holding ' +
      "the commit's whole event, minus the moment `putMany` resolved (or was called), on the clock both share.",
    '',
    '| case | records/s asked · written | commits (missing) | latency from commit p50 / p90 / p99 / max | from the putMany call p50 / p99 | putMany p50 / p99 |',
    '|---|--:|--:|--:|--:|--:|',
  ]
  for (const c of live) {
    out.push(
      `| ${c.name} | ${int(c.targetRate)} · ${int(c.achievedRate)} | ${int(c.commits)} (${int(c.missing)}) | ` +
        `${ms(c.fromAck.p50)} / ${ms(c.fromAck.p90)} / ${ms(c.fromAck.p99)} / ${ms(c.fromAck.max)} | ${ms(c.fromCall.p50)} / ${ms(c.fromCall.p99)} | ` +
        `${ms(c.commitMs.p50)} / ${ms(c.commitMs.p99)} |`,
    )
  }
  out.push('', `${live[0]?.seconds ?? 0} s per case, the first second left out.`, '')
  return out
}
