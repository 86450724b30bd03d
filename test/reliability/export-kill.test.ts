/**
 * `price-store export --output FILE` and `price-store backup DIR` killed
 * with SIGKILL at seeded random moments while they write (issue 11): the
 * real CLI runs in a child process (bundled from src/cli/main.ts). After
 * each kill:
 *
 * - FILE either does not exist or is the complete export (a killed export
 *   leaves at most FILE.partial, never a FILE that looks complete);
 * - DIR either does not exist or opens as a store whose export is the
 *   source's whole export;
 * - running the same command again finishes it: FILE.partial is replaced,
 *   the DIR.partial a killed backup left is removed, and the result is whole.
 *
 * Set RELIABILITY_SEED to replay another schedule.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore } from '../../src/index.js'
import type { NewPriceRecord } from '../../src/index.js'
import { record, run } from '../cli/helpers.js'
import { bundleChild, startChild } from './child-process.js'
import type { ChildBundle } from './child-process.js'
import { prng } from './crash-plan.js'
import { runs } from '../support/full-runs.js'

const SEED = Number(process.env.RELIABILITY_SEED ?? 20_261_211)
/** Kills per command: two in `npm test`, four in the slow set (`npm run test:slow`, run by CI too). */
const TRIALS = runs(2, 4)
const SYMBOLS = ['BTC', 'ETH', 'AR', 'stETH', 'USDC.e', 'SOL']
/** Records per symbol: enough that an export or a backup writes for a while, and kills can land inside it. */
const PER_SYMBOL = 4_000
const T0 = 1_717_000_000_000

let bundle: ChildBundle
let dir: string
let db: string
/** The whole export of the source, as written by a run that was not killed. */
let reference: string

const exists = (path: string): Promise<boolean> => stat(path).then(() => true, () => false)

beforeAll(async () => {
  bundle = await bundleChild('../../src/cli/main.ts')
  dir = await mkdtemp(join(tmpdir(), 'price-store-export-kill-'))
  db = join(dir, 'db')
  const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
  for (let i = 0; i < PER_SYMBOL; i += 500) {
    const batch: NewPriceRecord[] = []
    for (let j = i; j < i + 500; j++) for (const symbol of SYMBOLS) batch.push(record(symbol, T0 + j * 10_000, { source: { binance: j, note: 'x'.repeat(200) } }) as NewPriceRecord)
    await store.putMany(batch)
  }
  await store.close()
  const file = join(dir, 'reference.ndjson')
  const { code } = await run(['export', '--db', db, '--output', file])
  expect(code).toBe(0)
  reference = await readFile(file, 'utf8')
  expect(reference.split('\n').length - 1).toBe(SYMBOLS.length * PER_SYMBOL)
}, 120_000)

afterAll(async () => {
  await bundle?.cleanup()
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

/** Polls until `path` exists (the command has begun writing), or the child ended; true if it exists. */
async function appears(path: string, ended: Promise<unknown>): Promise<boolean> {
  let over = false
  void ended.then(() => (over = true))
  for (;;) {
    if (await exists(path)) return true
    if (over) return false
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** Starts the CLI with `args`, kills it `delay` ms after `partial` appears; resolves with whether the kill came before the end. */
async function killWhileWriting(args: readonly string[], partial: string, delay: number): Promise<boolean> {
  const child = startChild(bundle, args)
  const began = await appears(partial, child.ended)
  if (began) await new Promise((resolve) => setTimeout(resolve, delay))
  child.kill()
  const ended = await child.ended
  expect(ended === 'SIGKILL' || ended === 0, `${args.join(' ')}: ${child.stderr()}`).toBe(true)
  return ended === 'SIGKILL'
}

/**
 * Runs the CLI with `args` to its end: how long it wrote, from when `partial`
 * appeared. The kills are drawn within three quarters of that (a run may go
 * faster than the timed one), so they land while the command writes however
 * fast the machine is: fixed delays can outlast a whole backup.
 */
async function writingTime(args: readonly string[], partial: string): Promise<number> {
  const child = startChild(bundle, args)
  const began = await appears(partial, child.ended)
  const start = performance.now()
  expect(await child.ended, `${args.join(' ')}: ${child.stderr()}`).toBe(0)
  expect(began, `${args.join(' ')}: ${partial} never appeared`).toBe(true)
  return performance.now() - start
}

async function exportOf(location: string): Promise<string> {
  const { code, stdout, stderr } = await run(['export', '--db', location])
  expect(code, stderr).toBe(0)
  return stdout
}

describe('kill -9 during export and backup', () => {
  it('a killed export never leaves a FILE that looks complete; running it again writes it whole', async () => {
    const random = prng(SEED)
    const timed = join(dir, 'export-timed.ndjson')
    const writing = await writingTime(['export', '--db', db, '--output', timed], `${timed}.partial`)
    let killedMidway = 0
    for (let trial = 0; trial < TRIALS; trial++) {
      const file = join(dir, `export-${trial}.ndjson`)
      const delay = Math.floor(random() * 0.75 * writing)
      killedMidway += (await killWhileWriting(['export', '--db', db, '--output', file], `${file}.partial`, delay)) ? 1 : 0
      if (await exists(file)) expect(await readFile(file, 'utf8'), `trial ${trial}, seed ${SEED}`).toBe(reference)
      const { code } = await run(['export', '--db', db, '--output', file])
      expect(code).toBe(0)
      expect(await readFile(file, 'utf8')).toBe(reference)
      expect(await exists(`${file}.partial`)).toBe(false)
    }
    expect(killedMidway, `seed ${SEED}: no kill landed while the export was writing`).toBeGreaterThan(0)
  }, 120_000)

  it('a killed backup leaves no DIR, or a DIR that is whole; running it again finishes it', async () => {
    const random = prng(SEED + 1)
    const timed = join(dir, 'backup-timed')
    const writing = await writingTime(['backup', '--db', db, timed], `${timed}.partial`)
    let killedMidway = 0
    for (let trial = 0; trial < TRIALS; trial++) {
      const target = join(dir, `backup-${trial}`)
      const delay = Math.floor(random() * 0.75 * writing)
      killedMidway += (await killWhileWriting(['backup', '--db', db, target], `${target}.partial`, delay)) ? 1 : 0
      if (await exists(target)) {
        expect(await exportOf(target), `trial ${trial}, seed ${SEED}`).toBe(reference)
        continue
      }
      const { code, stderr } = await run(['backup', '--db', db, target])
      expect(code, stderr).toBe(0)
      expect(await exists(`${target}.partial`)).toBe(false)
      expect(await exportOf(target)).toBe(reference)
    }
    expect(killedMidway, `seed ${SEED}: no kill landed while the backup was writing`).toBeGreaterThan(0)
  }, 180_000)
})
