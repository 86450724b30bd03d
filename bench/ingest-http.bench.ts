/**
 * Ingest while serving (issue 11): the same generated records, in the same
 * batches, written into one fresh store in-process with `putMany` (what
 * `price-store import` does) and into another fresh store through
 * `POST /prices` over loopback (what `import --url` does). The two targets
 * take turns batch by batch, so both see the same machine; each batch's body
 * is serialised (NDJSON) before its timer starts, as a client's work. Rates
 * count the time inside the write calls: `putMany`, or the request from
 * its first byte to its answer (the server parses, validates and commits).
 * Both stores must end up holding the same records.
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { startServer } from '../src/adapters/http/node.js'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER, dataShape, generateBatches } from './generate.js'

export interface IngestHttpSpec {
  readonly days: number
  readonly batchSize: number
  readonly seed: number
  /** A directory for the two throwaway stores (removed afterwards). */
  readonly scratchDir: string
}

/** One target's load: rate over the time inside the write calls, and the batch median. */
export interface IngestRate {
  readonly seconds: number
  readonly recordsPerSecond: number
  readonly medianBatchMs: number
}

export interface IngestHttpResult {
  readonly name: string
  readonly records: number
  readonly batches: number
  readonly batchSize: number
  /** Mean NDJSON body of a batch, bytes. */
  readonly bytesPerBatch: number
  readonly inProcess: IngestRate
  readonly http: IngestRate
}

const TOKEN = 'bench-ingest-token-0123456789abcdef'

export async function runIngestHttp(spec: IngestHttpSpec): Promise<IngestHttpResult> {
  const shape = dataShape(spec.days)
  const local = await PriceStore.open(join(spec.scratchDir, 'in-process'), { provider: BENCH_PROVIDER })
  const served = await PriceStore.open(join(spec.scratchDir, 'http'), { provider: BENCH_PROVIDER })
  const server = await startServer({ store: served, writeToken: TOKEN })
  const endpoint = `${server.url}/prices`
  const localMs: number[] = []
  const httpMs: number[] = []
  let records = 0
  let bytes = 0
  try {
    for (const batch of generateBatches(shape, spec.batchSize, spec.seed)) {
      const body = batch.map((record) => JSON.stringify(record)).join('\n')
      bytes += Buffer.byteLength(body)
      records += batch.length
      // Alternate which target goes first, so neither always follows the other's writes.
      const order = localMs.length % 2 === 0 ? [writeLocal, writeHttp] : [writeHttp, writeLocal]
      for (const write of order) await write()

      async function writeLocal(): Promise<void> {
        const started = performance.now()
        await local.putMany(batch)
        localMs.push(performance.now() - started)
      }
      async function writeHttp(): Promise<void> {
        const started = performance.now()
        const res = await fetch(endpoint, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' }, body })
        const answer = (await res.json()) as { stored?: number }
        httpMs.push(performance.now() - started)
        if (res.status !== 200 || answer.stored !== batch.length) throw new Error(`POST /prices answered ${res.status}: ${JSON.stringify(answer)}`)
      }
    }
    await checkSame(local, served)
  } finally {
    await server.close()
    await local.close()
    await served.close()
    await rm(spec.scratchDir, { recursive: true, force: true })
  }
  return {
    name: `ingest ${spec.days} d, batches of ${spec.batchSize.toLocaleString('en-US')}: POST /prices over loopback vs putMany in-process`,
    records,
    batches: localMs.length,
    batchSize: spec.batchSize,
    bytesPerBatch: bytes / localMs.length,
    inProcess: rate(records, localMs),
    http: rate(records, httpMs),
  }
}

function rate(records: number, batchMs: readonly number[]): IngestRate {
  const seconds = batchMs.reduce((a, b) => a + b, 0) / 1000
  const sorted = [...batchMs].sort((a, b) => a - b)
  return { seconds, recordsPerSecond: records / seconds, medianBatchMs: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN }
}

/** Both stores hold the same records: same symbols, and each symbol's latest 100 the same. */
async function checkSame(a: PriceStore, b: PriceStore): Promise<void> {
  const symbols = await a.symbols()
  if (JSON.stringify(symbols) !== JSON.stringify(await b.symbols())) throw new Error('the two stores hold different symbols')
  for (const symbol of symbols) {
    const [left, right] = await Promise.all([a.latest(symbol, { limit: 100 }), b.latest(symbol, { limit: 100 })])
    if (JSON.stringify(left) !== JSON.stringify(right)) throw new Error(`the two stores differ on ${symbol}`)
  }
}

/** The report's section for these results (none when the case did not run). */
export function ingestHttpLines(results: readonly IngestHttpResult[]): string[] {
  if (results.length === 0) return []
  const int = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—')
  const out = [
    '### Ingest over HTTP', '',
    'The same records and batches written in-process (`putMany`, as `price-store import`) and through `POST /prices` over loopback ' +
      '(NDJSON bodies, as `import --url`), batch by batch in turn. Rates count the time inside the write calls (for HTTP: request sent to answer read).',
    '',
    '| case | records | batch | body/batch | in-process rec/s | HTTP rec/s | HTTP/in-process | batch median: in-process · HTTP |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ]
  for (const r of results) {
    out.push(
      `| ${r.name} | ${int(r.records)} | ${int(r.batchSize)} | ${(r.bytesPerBatch / 1e6).toFixed(2)} MB | ${int(r.inProcess.recordsPerSecond)} | ${int(r.http.recordsPerSecond)} | ` +
        `${(r.http.recordsPerSecond / r.inProcess.recordsPerSecond).toFixed(2)} | ${r.inProcess.medianBatchMs.toFixed(1)} · ${r.http.medianBatchMs.toFixed(1)} ms |`,
    )
  }
  out.push('')
  return out
}
