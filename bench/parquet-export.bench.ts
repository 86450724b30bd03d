/**
 * Parquet export: rate and size against NDJSON and CSV (docs/benchmarks.md,
 * "Parquet export").
 *
 * Loads `--records` (default 1,000,000) RedStone-shaped records of the
 * bench's generator (generate.ts: 100 symbols every 10 s, 684-character
 * base64 signatures, 5–30 sources) into a fresh store, then exports them
 * whole through the library path both `price-store export` and
 * `GET /prices/export` use (`store.export()` into core/export-format.ts's
 * `exportEncoder`, each piece written to a file with backpressure) once per
 * format, and reports for each: seconds, records/s, file size, the peak RSS
 * and heap seen while it ran (sampled every 50 ms), and the ratios to NDJSON.
 * A first pass reads the records without encoding them: the store's share.
 * Formats run in the order given by `--formats` (default read,ndjson,csv,parquet).
 *
 * `--writers` instead compares the two candidate Parquet writers on
 * `--records` (use 200000) generated records held in memory, same columns,
 * Snappy, row groups of 65,536: hyparquet-writer (the project's) and
 * parquet-wasm 0.8 through apache-arrow 21, which are not dependencies:
 * `npm i --no-save parquet-wasm@0.8 apache-arrow@21` in bench/ first.
 *
 *   cd bench && node --import tsx parquet-export.bench.ts [--records 1000000] [--formats read,ndjson,csv,parquet]
 *   cd bench && node --import tsx parquet-export.bench.ts --writers --records 200000
 *
 * Ratios come from one run on a shared 2-core machine: indicative only.
 */
import { createWriteStream } from 'node:fs'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { PriceStore, type PriceRecord } from '../src/index.js'
import { exportEncoder, type ExportFormat } from '../src/adapters/http/core/export-format.js'
import { ParquetExport } from '../src/adapters/http/core/parquet-export.js'
import { BENCH_PROVIDER, SYMBOLS, dataShape, generateBatches } from './generate.js'
import { numberArg, textArg } from './standalone.js'

const RECORDS = numberArg('records', 1_000_000)
const FORMATS = textArg('formats', 'read,ndjson,csv,parquet').split(',') as (ExportFormat | 'read')[]

interface Result {
  readonly format: string
  readonly seconds: number
  readonly records: number
  readonly bytes: number
  readonly peakRssMb: number
  readonly peakHeapMb: number
}

/** Samples memory every 50 ms while `fn` runs; its result with the peaks seen (MB). */
async function withPeaks<T>(fn: () => Promise<T>): Promise<{ value: T; peakRssMb: number; peakHeapMb: number }> {
  let rss = 0
  let heap = 0
  const sample = (): void => {
    const usage = process.memoryUsage()
    rss = Math.max(rss, usage.rss)
    heap = Math.max(heap, usage.heapUsed + usage.arrayBuffers)
  }
  const timer = setInterval(sample, 50)
  try {
    const value = await fn()
    sample()
    return { value, peakRssMb: rss / 2 ** 20, peakHeapMb: heap / 2 ** 20 }
  } finally {
    clearInterval(timer)
  }
}

/** Writes a piece to the file, waiting for it to drain when its buffer is full. */
async function write(out: ReturnType<typeof createWriteStream>, piece: string | Uint8Array): Promise<void> {
  if (!out.write(piece)) await once(out, 'drain')
}

async function exportOnce(store: PriceStore, format: ExportFormat | 'read', path: string): Promise<Result> {
  global.gc?.()
  const t0 = performance.now()
  const { value: records, peakRssMb, peakHeapMb } = await withPeaks(async () => {
    let count = 0
    if (format === 'read') {
      for await (const _ of store.export()) count++
      return count
    }
    const out = createWriteStream(path)
    const encoder = exportEncoder(format, undefined)
    for await (const record of store.export()) {
      count++
      const piece = encoder.add(record)
      if (piece !== undefined) await write(out, piece)
    }
    await write(out, encoder.end())
    out.end()
    await once(out, 'close')
    return count
  })
  const seconds = (performance.now() - t0) / 1000
  const bytes = format === 'read' ? 0 : (await stat(path)).size
  return { format, seconds, records, bytes, peakRssMb, peakHeapMb }
}

async function exportBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'parquet-export-bench-'))
  try {
    const shape = dataShape(RECORDS / SYMBOLS.length / 8_640)
    const store = await PriceStore.open(join(dir, 'store'), { provider: BENCH_PROVIDER })
    let loaded = 0
    const t0 = performance.now()
    for (const batch of generateBatches(shape, 5_000)) {
      const room = RECORDS - loaded
      if (room <= 0) break
      await store.putMany(room < batch.length ? batch.slice(0, room) : batch)
      loaded += Math.min(room, batch.length)
    }
    console.log(`loaded ${loaded.toLocaleString('en-US')} records in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    const results: Result[] = []
    for (const format of FORMATS) {
      const result = await exportOnce(store, format, join(dir, `export.${format}`))
      results.push(result)
      console.log(JSON.stringify(result))
    }
    await store.close()
    const ndjson = results.find((result) => result.format === 'ndjson')
    console.log('\n| format | s | records/s | size (MB) | size / NDJSON | time / NDJSON | peak RSS (MB) | peak heap+buffers (MB) |')
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for (const r of results) {
      const size = r.bytes === 0 ? '–' : (r.bytes / 1e6).toFixed(1)
      const sizeRatio = ndjson === undefined || r.bytes === 0 ? '–' : (r.bytes / ndjson.bytes).toFixed(3)
      const timeRatio = ndjson === undefined ? '–' : (r.seconds / ndjson.seconds).toFixed(2)
      console.log(`| ${r.format} | ${r.seconds.toFixed(1)} | ${Math.round(r.records / r.seconds).toLocaleString('en-US')} | ${size} | ${sizeRatio} | ${timeRatio} | ${r.peakRssMb.toFixed(0)} | ${r.peakHeapMb.toFixed(0)} |`)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The records as the store returns them (providerPublicKey joined), held in memory. */
function memoryRecords(count: number): PriceRecord[] {
  const shape = dataShape(count / SYMBOLS.length / 8_640 + 1 / 8_640)
  const records: PriceRecord[] = []
  for (const batch of generateBatches(shape, 5_000)) {
    for (const record of batch) {
      if (records.length === count) return records
      records.push({ ...record, providerPublicKey: BENCH_PROVIDER.publicKey })
    }
  }
  return records
}

/** A module of a package this bench does not depend on, used as its own documentation describes it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LooseModule = any

/** hyparquet-writer through the project's encoder, and parquet-wasm through apache-arrow record batches, on the same rows. */
async function writersBench(): Promise<void> {
  const records = memoryRecords(RECORDS)
  const groupRows = 65_536
  console.log(`${records.length.toLocaleString('en-US')} records in memory; row groups of ${groupRows}`)

  global.gc?.()
  let t0 = performance.now()
  const hyparquet = await withPeaks(async () => {
    const writer = new ParquetExport(undefined, { rowGroupRows: groupRows, rowGroupBytes: Number.MAX_SAFE_INTEGER })
    let bytes = 0
    for (const record of records) bytes += writer.add(record)?.length ?? 0
    return bytes + writer.finish().length
  })
  const hyparquetSeconds = (performance.now() - t0) / 1000

  // Neither package is a dependency (see the header): loaded by name, so a clone without them still typechecks.
  const arrow = (await import('apache-arrow' as string)) as LooseModule
  const wasm = (await import('parquet-wasm' as string)) as LooseModule
  global.gc?.()
  t0 = performance.now()
  const parquetWasm = await withPeaks(async () => {
    const schema = new arrow.Schema([
      new arrow.Field('id', new arrow.Utf8(), false),
      new arrow.Field('symbol', new arrow.Utf8(), false),
      new arrow.Field('provider', new arrow.Utf8(), false),
      new arrow.Field('value', new arrow.Float64(), false),
      new arrow.Field('signature', new arrow.Binary(), true),
      new arrow.Field('liteEvmSignature', new arrow.Binary(), true),
      new arrow.Field('evmSignature', new arrow.Binary(), true),
      new arrow.Field('permawebTx', new arrow.Utf8(), true),
      new arrow.Field('version', new arrow.Utf8(), true),
      new arrow.Field('source', new arrow.Utf8(), false),
      new arrow.Field('timestamp', new arrow.TimestampMillisecond('UTC'), false),
      new arrow.Field('extra', new arrow.Utf8(), true),
    ])
    const batches: unknown[] = []
    for (let at = 0; at < records.length; at += groupRows) {
      const group = records.slice(at, at + groupRows)
      const column = <T>(type: unknown, values: T[]) => arrow.vectorFromArray(values, type)
      batches.push(new arrow.RecordBatch(schema, arrow.makeData({
        type: new arrow.Struct(schema.fields),
        length: group.length,
        children: [
          column(new arrow.Utf8(), group.map((r) => r.id)).data[0]!,
          column(new arrow.Utf8(), group.map((r) => r.symbol)).data[0]!,
          column(new arrow.Utf8(), group.map((r) => r.provider)).data[0]!,
          column(new arrow.Float64(), group.map((r) => r.value)).data[0]!,
          column(new arrow.Binary(), group.map((r) => (r.signature === undefined ? null : Buffer.from(r.signature, 'base64')))).data[0]!,
          column(new arrow.Binary(), group.map(() => null)).data[0]!,
          column(new arrow.Binary(), group.map(() => null)).data[0]!,
          column(new arrow.Utf8(), group.map((r) => r.permawebTx)).data[0]!,
          column(new arrow.Utf8(), group.map((r) => r.version)).data[0]!,
          column(new arrow.Utf8(), group.map((r) => JSON.stringify(r.source))).data[0]!,
          column(new arrow.TimestampMillisecond('UTC'), group.map((r) => r.timestamp)).data[0]!,
          column(new arrow.Utf8(), group.map(() => null)).data[0]!,
        ],
      })))
    }
    const table = wasm.Table.fromIPCStream(arrow.tableToIPC(new arrow.Table(schema, batches), 'stream'))
    const properties = new wasm.WriterPropertiesBuilder().setCompression(wasm.Compression.SNAPPY).setMaxRowGroupSize(groupRows).build()
    return wasm.writeParquet(table, properties).length
  })
  const wasmSeconds = (performance.now() - t0) / 1000

  console.log('\n| writer | s | records/s | size (MB) | peak RSS (MB) |')
  console.log('| --- | ---: | ---: | ---: | ---: |')
  for (const [name, seconds, run] of [['hyparquet-writer 0.17', hyparquetSeconds, hyparquet], ['parquet-wasm 0.8 + apache-arrow 21', wasmSeconds, parquetWasm]] as const) {
    console.log(`| ${name} | ${seconds.toFixed(2)} | ${Math.round(records.length / seconds).toLocaleString('en-US')} | ${(run.value / 1e6).toFixed(1)} | ${run.peakRssMb.toFixed(0)} |`)
  }
}

await (process.argv.includes('--writers') ? writersBench() : exportBench())
