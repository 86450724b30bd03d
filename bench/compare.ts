/**
 * Compares two runs' results files (issue 9: how cost grows), for
 * `run.ts --compare A.json B.json`: for each query case in both, the store's
 * warm median in each and the ratio B/A (target: a case at 28 days within
 * 1.2× of the same case at 7 days), then each run's store loads with their
 * first- and last-day ingest rates (target: last ≥ 0.8× first).
 *
 * Reads full runs and store-only runs alike (a full run's case has the
 * store's figures too), and results written before issue 9.
 */
import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { DAY_RATE_TARGET, daysApart, int, us } from './report.js'
import type { IngestRow, RunResults } from './report.js'
import type { StoreCaseResult } from './store-only.js'

/** Issue 9: a query case on the larger data set may take at most this many times its time on the smaller one. */
export const SCALE_TARGET = 1.2

interface Run {
  /** `A` or `B`, as the tables name them. */
  readonly tag: string
  readonly file: string
  readonly results: RunResults
}

async function readRun(tag: string, file: string): Promise<Run> {
  const results = JSON.parse(await readFile(file, 'utf8')) as RunResults
  if (!Array.isArray(results.cases) || !Array.isArray(results.ingest)) throw new Error(`${file}: not a results file of run.ts`)
  return { tag, file, results }
}

/** A run's cases by name, the store's figures only. */
function storeCases(results: RunResults): Map<string, StoreCaseResult> {
  return new Map([...results.cases, ...(results.storeCases ?? [])].map((c) => [c.name, c]))
}

const ratio = (a: number, b: number): string => (Number.isFinite(b / a) ? (b / a).toFixed(2) : '—')

function runLine(run: Run): string {
  const { info } = run.results
  return `- ${run.tag}: \`${basename(run.file)}\`, ${info.mode}; ${info.date}; store code ${info.source}`
}

/**
 * Why two runs' times may differ for reasons other than the data size: in a
 * full run the store's calls alternate with SQLite's and the floor's, in a
 * store-only run they run back to back with the page cache to themselves.
 */
function caveats(a: Run, b: Run): string[] {
  const notes: string[] = []
  const modeOf = (run: Run): string => (run.results.info.storeOnly === true ? 'store-only' : 'full')
  if (modeOf(a) !== modeOf(b)) {
    notes.push(
      `A is a ${modeOf(a)} run and B a ${modeOf(b)} run: in a full run the store's calls alternate with SQLite's and the floor's, ` +
        'which share the CPU caches and the page cache with it; for the scale target, compare two runs of the same kind (e.g. both with --store-only).',
    )
  }
  if (a.results.info.source !== b.results.info.source) notes.push(`The runs measured different store code (${a.results.info.source} and ${b.results.info.source}).`)
  for (const run of [a, b]) {
    if (run.results.info.mode.startsWith('quick')) notes.push(`${run.tag} is a quick smoke run: short loops, not for conclusions.`)
  }
  return notes
}

/** The query table: each case in both runs, in A's order. */
function queryLines(a: Run, b: Run): string[] {
  const before = storeCases(a.results)
  const after = storeCases(b.results)
  const shared = [...before.keys()].filter((name) => after.has(name))
  const out: string[] = []
  out.push(`### Queries (store, warm median; target B/A ≤ ${SCALE_TARGET})`, '')
  if (shared.length === 0) return [...out, 'No query case is in both runs.', '']
  out.push('| case | records A · B | A | B | B/A | met | spaced: A · B · B/A |', '|---|--:|--:|--:|--:|:-:|--:|')
  let met = 0
  for (const name of shared) {
    const x = before.get(name) as StoreCaseResult
    const y = after.get(name) as StoreCaseResult
    const within = y.warm.store.median / x.warm.store.median <= SCALE_TARGET
    if (within) met++
    out.push(
      `| ${name} | ${int(x.recordsPerOp)} · ${int(y.recordsPerOp)} | ${us(x.warm.store.median)} | ${us(y.warm.store.median)} | ` +
        `${ratio(x.warm.store.median, y.warm.store.median)} | ${within ? 'yes' : '**no**'} | ` +
        `${us(x.spaced.store.median)} · ${us(y.spaced.store.median)} · ${ratio(x.spaced.store.median, y.spaced.store.median)} |`,
    )
  }
  out.push('', `${met} of ${shared.length} cases within ${SCALE_TARGET}× (ratios are time ratios: above 1, B is slower).`)
  const only = (run: Run, own: Map<string, StoreCaseResult>, other: Map<string, StoreCaseResult>): string[] => {
    const names = [...own.keys()].filter((name) => !other.has(name))
    return names.length === 0 ? [] : [`Only in ${run.tag}: ${names.join(', ')}.`]
  }
  const unmatched = [...only(a, before, after), ...only(b, after, before)]
  if (unmatched.length > 0) out.push('', ...unmatched)
  out.push('')
  return out
}

function dayFigure(value: number | undefined): string {
  return value === undefined ? '—' : int(value)
}

/** One store load: its rates, first and last day, and whether the last day kept up. */
function ingestLine(run: Run, row: IngestRow): string {
  const ratioOfDays = row.lastToFirstDay
  const met = !daysApart(row) || ratioOfDays === undefined ? '—' : ratioOfDays >= DAY_RATE_TARGET ? 'yes' : '**no**'
  return (
    `| ${run.tag} | ${int(row.batchSize)} | ${row.days} d${row.reused ? ' (reused build)' : ''} | ${int(row.records)} | ${int(row.recordsPerSecond)} | ` +
    `${dayFigure(row.firstDayRecordsPerSecond)} | ${dayFigure(row.lastDayRecordsPerSecond)} | ${ratioOfDays === undefined ? '—' : ratioOfDays.toFixed(2)} | ${met} |`
  )
}

/** The ingest table: every store load of both runs. */
function ingestLines(a: Run, b: Run): string[] {
  const rows = [a, b].flatMap((run) => run.results.ingest.filter((row) => row.label === 'store').map((row) => ingestLine(run, row)))
  if (rows.length === 0) return []
  return [
    `### Ingest (store; records/s inside the write calls; target last day ≥ ${DAY_RATE_TARGET}× first day)`,
    '',
    '| run | batch | data | records | rec/s | first day | last day | last/first | met |',
    '|---|--:|--:|--:|--:|--:|--:|--:|:-:|',
    ...rows,
    '',
    "First and last day: the records of the data's first and last 24 h; with less than 2 days of data they overlap, so no target is judged. " +
      '— in the day columns: a data set built before they were measured (rebuild it with --rebuild).',
    '',
  ]
}

/** The comparison of two runs as markdown. */
export function renderComparison(a: Run, b: Run): string {
  const out: string[] = []
  out.push(`## Scale: ${basename(a.file)} (A) → ${basename(b.file)} (B)`, '')
  out.push(runLine(a), runLine(b), '')
  const notes = caveats(a, b)
  if (notes.length > 0) out.push(...notes.map((note) => `- Note: ${note}`), '')
  out.push(...queryLines(a, b), ...ingestLines(a, b))
  return out.join('\n')
}

/** Reads two results files (paths from the current directory) and compares them. */
export async function compareFiles(before: string, after: string): Promise<string> {
  return renderComparison(await readRun('A', before), await readRun('B', after))
}
