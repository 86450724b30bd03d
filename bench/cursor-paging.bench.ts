/**
 * Cursor paging (issue 24, point 2) against offset paging, through a 7-day
 * range of one symbol (one record every 10 s: 60,480 records), on a
 * classic-level store: the history form (records newest first, `limit`
 * each) and the range form at `interval=1` (every record, oldest first),
 * in pages of `--page` records. Offset pages read and skip everything
 * before them, so the last page costs far more than the first; a cursor
 * page starts at its position, so it costs the same wherever it is.
 * Checked first: the cursor pages joined and the offset pages joined are
 * the same records. Reported, each page timed alone (the median of
 * `--rounds` passes): the first, last, median and slowest page of each way, the
 * last/first ratio (target for cursors: about 1) and the whole paging's ratio.
 * Standalone (brings its own data):
 *   cd bench && node --import tsx cursor-paging.bench.ts [--days 7] [--symbols 3] [--page 1000] [--rounds 7]
 * Figures on a shared machine are indicative only.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PriceStore } from '../src/index.js'
import { BENCH_PROVIDER, DAY_MS, dataShape, generateBatches } from './generate.js'
import { numberArg } from './standalone.js'

const DAYS = numberArg('days', 7)
const SYMBOLS = numberArg('symbols', 3)
const PAGE = numberArg('page', 1000)
const ROUNDS = numberArg('rounds', 7)

type Params = Record<string, string>

async function main(): Promise<void> {
  const shape = dataShape(DAYS, SYMBOLS)
  const dir = await mkdtemp(join(tmpdir(), 'cursor-paging-bench-'))
  const store = await PriceStore.open(join(dir, 'store'), { provider: BENCH_PROVIDER })
  try {
    for (const batch of generateBatches(shape, 10_000)) await store.putMany(batch)
    const symbol = shape.symbols[0]!
    const window = { symbol, fromTimestamp: String(shape.from), toTimestamp: String(shape.from + DAYS * DAY_MS - 1) }
    const forms: Record<string, Params> = { 'history (newest first)': window, 'range interval=1 (oldest first)': { ...window, interval: '1' } }
    const ids = (answer: unknown): string[] => (answer as { id: string }[]).map((record) => record.id)
    const firstTimestamp = (answer: unknown): number => (answer as { timestamp: number }[])[0]!.timestamp
    console.log(`cursor vs offset paging, ${DAYS} days of ${symbol} (${shape.ticks} records), pages of ${PAGE}, each page the median of ${ROUNDS} passes (ms):`)
    for (const [name, params] of Object.entries(forms)) {
      const limit = String(PAGE)
      // Every cursor page once, in order: the cursors of the first and the last page, and the records.
      const cursors: string[] = []
      const byCursor: string[] = []
      // Each page's window asked directly (no cursor): where its first item lies, to the end the form reads towards.
      const direct: Params[] = []
      const newestFirst = params.interval === undefined
      let cursor = ''
      for (;;) {
        cursors.push(cursor)
        const page = await store.page({ ...params, limit, cursor })
        byCursor.push(...ids(page.answer))
        const at = String(firstTimestamp(page.answer))
        direct.push(newestFirst ? { ...params, toTimestamp: at } : { ...params, fromTimestamp: at })
        if (page.next === undefined) break
        cursor = page.next
      }
      const pages = cursors.length
      const byOffset: string[] = []
      for (let index = 0; index < pages; index++) byOffset.push(...ids(await store.query({ ...params, limit, offset: String(index * PAGE) })))
      if (JSON.stringify(byCursor) !== JSON.stringify(byOffset) || byCursor.length !== shape.ticks) throw new Error(`${name}: cursor and offset pages differ`)
      // Each page timed on its own (the median of `ROUNDS` passes, each a whole paging in order), so the ratios compare pages.
      const perPage = async (run: (index: number) => Promise<unknown>): Promise<number[]> => {
        const runs: number[][] = Array.from({ length: pages }, () => [])
        for (let round = 0; round < ROUNDS; round++) {
          for (let index = 0; index < pages; index++) {
            const t0 = process.hrtime.bigint()
            await run(index)
            runs[index]!.push(Number(process.hrtime.bigint() - t0) / 1e6)
          }
        }
        return runs.map((times) => times.sort((x, y) => x - y)[Math.floor(times.length / 2)]!)
      }
      const cursorMs = await perPage((index) => store.page({ ...params, limit, cursor: cursors[index]! }))
      const offsetMs = await perPage((index) => store.query({ ...params, limit, offset: String(index * PAGE) }))
      const directMs = await perPage((index) => store.query({ ...direct[index]!, limit }))
      const summary = (ms: number[]): string => {
        const sorted = [...ms].sort((x, y) => x - y)
        return `first ${ms[0]!.toFixed(2)}, last ${ms[pages - 1]!.toFixed(2)}, median ${sorted[Math.floor(pages / 2)]!.toFixed(2)}, slowest ${sorted[pages - 1]!.toFixed(2)}; last/first ${(ms[pages - 1]! / ms[0]!).toFixed(2)}`
      }
      console.log(`  ${name}, ${pages} pages:`)
      console.log(`    cursor: ${summary(cursorMs)} (target ≈ 1)`)
      console.log(`    offset: ${summary(offsetMs)}`)
      console.log(`    the same windows asked directly: ${summary(directMs)}`)
      const perDirect = cursorMs.map((ms, index) => ms / directMs[index]!).sort((x, y) => x - y)
      console.log(`    cursor page / the same window asked directly: median ${perDirect[Math.floor(pages / 2)]!.toFixed(2)}, last page ${(cursorMs[pages - 1]! / directMs[pages - 1]!).toFixed(2)}`)
      console.log(`    last page offset/cursor ${(offsetMs[pages - 1]! / cursorMs[pages - 1]!).toFixed(1)}; whole paging offset/cursor ${(offsetMs.reduce((x, y) => x + y) / cursorMs.reduce((x, y) => x + y)).toFixed(1)}`)
    }
  } finally {
    await store.close()
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
