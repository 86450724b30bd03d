/** The cluster bench's results (issue 21) as markdown tables. */
import type { CatchUpResult } from './cluster-catchup.js'
import type { ReadCaseResult } from './cluster-reads.js'
import type { WriteCaseResult } from './cluster-writes.js'

export interface ClusterBenchResults {
  readonly info: {
    readonly date: string
    readonly mode: string
    readonly command: string
    readonly machine: string
    readonly node: string
    readonly natsServer: string
    readonly source: string
    readonly load: string
    /** Whether the machine was quiet when the run started (1-min load below 0.5, no test runner or other bench seen). */
    readonly quiet: boolean
    readonly seconds: number
  }
  readonly writes: readonly WriteCaseResult[]
  readonly catchUp: CatchUpResult | undefined
  readonly reads: readonly ReadCaseResult[]
}

const int = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—')
const ms = (x: number): string => (!Number.isFinite(x) ? '—' : x < 10 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'))
const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : '—')

export function renderClusterMarkdown(results: ClusterBenchResults): string {
  const { info } = results
  const out = [
    '# Cluster benchmark (issue 21)',
    '',
    ...(info.quiet ? [] : ['> **Not quiet, indicative only**: the machine was busy when this run started (see the load line below); the figures are skewed by other work on the 2 cores.', '']),
    `- date: ${info.date}; ${info.mode}`,
    `- command: \`${info.command}\` (in bench/)`,
    `- machine: ${info.machine}; Node ${info.node}; ${info.natsServer}`,
    `- source: ${info.source}`,
    `- machine load when the run started: ${info.load}`,
    `- run time: ${info.seconds.toFixed(0)} s`,
    '',
    'Everything runs on this one machine: the NATS servers, the price-store nodes (in this process for the library cases, ' +
      'one process each for `serve`), and the client. With 2 cores, every extra server or node takes CPU from the others, ' +
      'so the cluster figures here are what replication costs on a single small host, not what separate hosts would give.',
    '',
    ...writeLines(results.writes),
    ...catchUpLines(results.catchUp),
    ...readLines(results.reads),
  ]
  return out.join('\n')
}

function writeLines(writes: readonly WriteCaseResult[]): string[] {
  if (writes.length === 0) return []
  const out = [
    '## Writes',
    '',
    'One writer, one batch at a time (as `price-store import`), the same RedStone-shaped records (generate.ts, version 2: 684-character ' +
      'signatures, 5–30 sources) to every target. A write returns once acknowledged and applied on the node that took it (the default); ' +
      '"applied everywhere" runs from the write\'s start until every node has applied it (watched beside the writer, without holding it back: ' +
      '`waitForPosition` in-process, a read with `minPosition` over HTTP). The rate runs from the first write to the last batch applied everywhere. ' +
      'Ratios are against the same batch size in this run.',
    '',
    '| target | batch | records | records/s | vs putMany | vs POST plain | write call p50 · p99 ms | applied everywhere p50 · p99 ms |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ]
  for (const w of writes) {
    const putMany = writes.find((x) => x.target === 'putMany' && x.batchSize === w.batchSize)
    const plain = writes.find((x) => x.target === 'post-plain' && x.batchSize === w.batchSize)
    out.push(
      `| ${w.name} | ${int(w.batchSize)} | ${int(w.records)} | ${int(w.recordsPerSecond)} | ${putMany === undefined ? '—' : ratio(w.recordsPerSecond, putMany.recordsPerSecond)} | ` +
        `${plain === undefined ? '—' : ratio(w.recordsPerSecond, plain.recordsPerSecond)} | ${ms(w.writeMs.p50)} · ${ms(w.writeMs.p99)} | ` +
        `${ms(w.appliedEverywhereMs.p50)} · ${ms(w.appliedEverywhereMs.p99)} |`,
    )
  }
  const batches = [...new Set(writes.map((w) => w.batches))]
  out.push('', `p99 is over ${batches.join(' or ')} batches per case: with few batches it is close to the slowest one.`, '')
  return out
}

function catchUpLines(c: CatchUpResult | undefined): string[] {
  if (c === undefined) return []
  const rows: [string, number, number][] = [
    [`filling the stream: one in-process node writing (R${c.replicas}, acknowledged + applied on it)`, c.fill.recordsPerSecond, c.fill.seconds],
    ['**new in-process ClusterNode, empty store: start → last commit applied**', c.libraryNode.recordsPerSecond, c.libraryNode.seconds],
    ['putMany of the same batches into a fresh store, in-process', c.putMany.recordsPerSecond, c.putMany.seconds],
    ...c.serveNodes.map((s, i): [string, number, number] => [`\`serve --nats\` process ${i + 1}, empty database: spawn → a read at the last position answered`, s.recordsPerSecond, s.seconds]),
    [`\`price-store import --batch-size ${c.batchSize}\` of the same records (NDJSON file): spawn → exit`, c.importCli.recordsPerSecond, c.importCli.seconds],
  ]
  const out = [
    '## Catch-up of a new node',
    '',
    `${int(c.records)} records in batches of ${int(c.batchSize)} (stream positions 1–${int(c.lastPosition)}) written into an R${c.replicas} stream; ` +
      'then a node with an empty store follows it from the start. The `serve` processes start one after another, each catching up alone ' +
      '(their time includes the process start, about a second with tsx), and stay up for the reads below.',
    '',
    '| measure | records/s | s | vs putMany |',
    '|---|--:|--:|--:|',
  ]
  for (const [name, rate, seconds] of rows) out.push(`| ${name} | ${int(rate)} | ${seconds.toFixed(1)} | ${ratio(rate, c.putMany.recordsPerSecond)} |`)
  out.push('', `Process to process: serve --nats catch-up (median) / import = ${ratio(median(c.serveNodes.map((s) => s.recordsPerSecond)), c.importCli.recordsPerSecond)}.`, '')
  return out
}

function readLines(reads: readonly ReadCaseResult[]): string[] {
  if (reads.length === 0) return []
  const out = [
    '## Reads on 1, 2 and 3 nodes',
    '',
    `\`serve --nats\` nodes holding the same caught-up records; one client process (http-client.ts's keep-alive GET loop), ${reads[0]?.connections} ` +
      'connections in total split evenly over the nodes; the median of the rounds (the node counts take turns). Latencies: per node, weighted by requests. ' +
      '**2 cores serve all the nodes and the client: more nodes cannot add CPU here, so these figures show the cost of splitting the load, not scaling.**',
    '',
    '| query | nodes | requests/s | vs 1 node | median µs | p90 µs | errors | bytes/answer |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ]
  for (const r of reads) {
    const one = reads.find((x) => x.query === r.query && x.nodes === 1)
    out.push(`| ${r.query} | ${r.nodes} | ${int(r.requestsPerSecond)} | ${one === undefined ? '—' : ratio(r.requestsPerSecond, one.requestsPerSecond)} | ${int(r.medianUs)} | ${int(r.p90Us)} | ${r.errors} | ${int(r.bytesPerAnswer)} |`)
  }
  out.push('')
  return out
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}
