/**
 * The live demo: the writer's walk and schedule, driven by a hand-moved
 * clock (no real time passes in the first part), the catch-up that
 * continues an old demo up to now, and `serve --live-demo` end to end.
 */
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { LiveDemo, catchUpDemo, type LiveDemoClock, type LiveDemoStore } from '../../src/cli/live-demo.js'
import { DEMO_TOKENS, generateDemoRecords } from '../../src/demo/demo-data.js'
import { PriceStore, type PriceRecord } from '../../src/index.js'
import { memoryIo, record, run, startServe, tempDir, writeLines } from './helpers.js'

const TOKENS = DEMO_TOKENS.filter((token) => ['BTC', 'ETH', 'USDC'].includes(token.symbol))
const END = Date.UTC(2024, 5, 1)
const HOUR = 3_600_000

/** A clock moved by hand: `fire()` jumps to the next scheduled task and runs it. */
function manualClock(start: number): { clock: LiveDemoClock; pending: () => number; fire: () => void; now: () => number } {
  let now = start
  const tasks: { task: () => void; at: number }[] = []
  return {
    clock: {
      now: () => now,
      schedule(task, ms) {
        const entry = { task, at: now + ms }
        tasks.push(entry)
        return () => {
          const at = tasks.indexOf(entry)
          if (at >= 0) tasks.splice(at, 1)
        }
      },
    },
    pending: () => tasks.length,
    now: () => now,
    fire() {
      const entry = tasks.shift()
      if (entry === undefined) throw new Error('nothing is scheduled')
      now = Math.max(now, entry.at)
      entry.task()
    },
  }
}

/** A memory store with 10 minutes of the three tokens' demo records, ending at END. */
async function demoStore(): Promise<PriceStore> {
  const store = await PriceStore.open(new MemoryLevel(), { provider: DEFAULT_PROVIDER })
  await store.putMany(generateDemoRecords({ providerId: DEFAULT_PROVIDER.id, tokens: TOKENS, end: END, durationMs: 10 * 60_000 }))
  return store
}

async function newest(store: PriceStore, symbol: string, limit = 1): Promise<PriceRecord[]> {
  return store.latest(symbol, { limit })
}

describe('LiveDemo (a hand-moved clock)', () => {
  it('writes nothing until its timer fires; then one commit per tick, every token at now, going on from the stored values', async () => {
    const store = await demoStore()
    try {
      const before = Object.fromEntries(await Promise.all(TOKENS.map(async (token) => [token.symbol, (await newest(store, token.symbol))[0]!] as const)))
      const position = store.position
      const time = manualClock(END + 5_000)
      const demo = await LiveDemo.start(store, { seed: 'fixed', tokens: TOKENS, clock: time.clock })
      expect(store.position).toBe(position)
      expect(time.pending()).toBe(1)

      const watch = store.watch({ symbols: ['BTC'] })
      time.fire()
      await demo.idle()
      expect(store.position).toBe(position + 1)
      expect(demo.commits).toBe(1)
      const seen = await watch.next()
      expect(seen.value).toMatchObject({ type: 'records', position: position + 1 })
      await watch.return?.()
      for (const token of TOKENS) {
        const [now] = await newest(store, token.symbol)
        expect(now!.timestamp).toBe(END + 6_000) // the clock's now: 5 s + the 1 s interval
        // One second's step from the stored value, not a jump back to the token's starting price.
        expect(Math.abs(now!.value / before[token.symbol]!.value - 1)).toBeLessThan(0.005)
      }
      // The next commit is scheduled once this one is written.
      expect(time.pending()).toBe(1)
      time.fire()
      await demo.idle()
      expect((await newest(store, 'ETH', 2)).map((r) => r.timestamp)).toEqual([END + 7_000, END + 6_000])
      await demo.stop()
    } finally {
      await store.close()
    }
  })

  it('is deterministic: the same seed over the same store writes the same records; another seed, others', async () => {
    async function walk(seed: string): Promise<PriceRecord[]> {
      const store = await demoStore()
      try {
        const time = manualClock(END)
        const demo = await LiveDemo.start(store, { seed, tokens: TOKENS, clock: time.clock })
        for (let tick = 0; tick < 3; tick++) {
          time.fire()
          await demo.idle()
        }
        await demo.stop()
        return (await Promise.all(TOKENS.map((token) => newest(store, token.symbol, 3)))).flat()
      } finally {
        await store.close()
      }
    }
    const a = await walk('seed-1')
    expect(a).toHaveLength(9)
    expect(await walk('seed-1')).toEqual(a)
    const other = await walk('seed-2')
    expect(other.map((r) => r.id)).not.toEqual(a.map((r) => r.id))
    expect(other.map((r) => r.value)).not.toEqual(a.map((r) => r.value))
  })

  it('keeps its timestamps rising when the clock steps back', async () => {
    const store = await demoStore()
    try {
      let now = END + 60_000
      const tasks: (() => void)[] = []
      const demo = await LiveDemo.start(store, { seed: 's', tokens: TOKENS, clock: { now: () => now, schedule: (task) => (tasks.push(task), () => {}) } })
      tasks.shift()!()
      await demo.idle()
      now -= 30_000
      tasks.shift()!()
      await demo.idle()
      await demo.stop()
      expect((await newest(store, 'BTC', 2)).map((r) => r.timestamp)).toEqual([END + 60_001, END + 60_000])
    } finally {
      await store.close()
    }
  })

  it('stop() cancels the next commit and waits for the one being written: nothing is written once it resolves', async () => {
    const store = await demoStore()
    try {
      let release: () => void = () => {}
      let writes = 0
      const slow: LiveDemoStore = {
        provider: store.provider,
        several: (symbols, options) => store.several(symbols, options),
        putMany: async (records) => {
          writes++
          await new Promise<void>((resolve) => (release = resolve))
          return store.putMany(records)
        },
      }
      const time = manualClock(END)
      const demo = await LiveDemo.start(slow, { seed: 's', tokens: TOKENS, clock: time.clock })
      time.fire() // a write starts and waits
      expect(writes).toBe(1)
      let stopped = false
      const stopping = demo.stop().then(() => (stopped = true))
      await Promise.resolve()
      expect(stopped).toBe(false)
      const position = store.position
      release()
      await stopping
      expect(store.position).toBe(position + 1) // the write in flight finished
      expect(time.pending()).toBe(0) // and no other is scheduled
      expect(demo.running).toBe(false)
      await demo.stop() // twice is fine
      expect(writes).toBe(1)
    } finally {
      await store.close()
    }
  })

  it('a write the store refuses stops it and is reported once, never as an unhandled rejection', async () => {
    const store = await demoStore()
    try {
      const errors: unknown[] = []
      const refusing: LiveDemoStore = { provider: store.provider, several: (s, o) => store.several(s, o), putMany: () => Promise.reject(new Error('disk full')) }
      const time = manualClock(END)
      const demo = await LiveDemo.start(refusing, { seed: 's', tokens: TOKENS, clock: time.clock, onError: (err) => errors.push(err) })
      time.fire()
      await demo.idle()
      expect(errors).toEqual([new Error('disk full')])
      expect(demo.running).toBe(false)
      expect(time.pending()).toBe(0)
      await demo.stop()
    } finally {
      await store.close()
    }
  })
})

describe('catchUpDemo', () => {
  it('fills the time from the newest record up to now, a moment every 10 s, then has nothing more to do', async () => {
    const store = await demoStore()
    try {
      const io = memoryIo()
      const now = END + HOUR
      expect(await catchUpDemo(store, io.io, { now, seed: 'c', maxMs: 2 * 24 * HOUR, tokens: TOKENS })).toBe(360 * TOKENS.length)
      const btc = await newest(store, 'BTC', 361)
      expect(btc[0]!.timestamp).toBeLessThan(now)
      expect(btc[0]!.timestamp).toBeGreaterThanOrEqual(now - 10_000)
      for (let i = 1; i < btc.length; i++) expect(Math.floor(btc[i - 1]!.timestamp / 10_000) - Math.floor(btc[i]!.timestamp / 10_000)).toBe(1)
      expect(io.stderr()).toContain('the demo data ends at 2024-05-31T23:59:5')
      expect(await catchUpDemo(store, io.io, { now, seed: 'c2', maxMs: 2 * 24 * HOUR, tokens: TOKENS })).toBe(0)
    } finally {
      await store.close()
    }
  })

  it('over a gap longer than maxMs, only its last maxMs', async () => {
    const store = await demoStore()
    try {
      const now = END + 10 * 24 * HOUR
      expect(await catchUpDemo(store, memoryIo().io, { now, seed: 'c', maxMs: HOUR, tokens: TOKENS })).toBe(360 * TOKENS.length)
      const btc = await newest(store, 'BTC', 400)
      const added = btc.filter((r) => r.timestamp >= END)
      expect(added).toHaveLength(360)
      expect(Math.min(...added.map((r) => r.timestamp))).toBeGreaterThanOrEqual(now - HOUR)
    } finally {
      await store.close()
    }
  })
})

describe('serve --live-demo', () => {
  let dir: string
  let db: string
  let cleanup: () => Promise<void>
  beforeEach(async () => {
    ;({ dir, cleanup } = await tempDir())
    db = join(dir, 'db')
  })
  afterEach(async () => {
    await cleanup()
  })

  /** Records of each symbol in the store at `db` (serve must have stopped). */
  async function counts(): Promise<number[]> {
    const store = await PriceStore.open(db, { provider: DEFAULT_PROVIDER })
    try {
      return await Promise.all((await store.symbols()).map(async (symbol) => (await store.latest(symbol, { limit: 3000 })).length))
    } finally {
      await store.close()
    }
  }

  it('continues the demo up to now, says how to watch it, and /prices/stream gets its commits', async () => {
    // A demo of 0.001 days (86 s), from 2024: the catch-up fills its last 86 s up to now.
    expect((await run(['demo', '--db', db, '--days', '0.001'])).code).toBe(0)
    const started = Date.now()
    const { memory, exit, banner, endpoint } = await startServe(['--db', db, '--demo-if-empty', '--live-demo'])
    try {
      expect(memory.stderr()).toContain('the demo data ends at 2024-05-31T23:59:')
      expect(banner).toContain('live demo: a new price of every demo token each second (off with --no-live-demo)')
      expect(banner).toContain(`curl -N '${endpoint}/stream?symbols=BTC'`)
      const recent = (await (await fetch(`${endpoint}?symbol=BTC`)).json()) as PriceRecord[]
      expect(recent[0]!.timestamp).toBeGreaterThan(started - 11_000)

      // A live commit reaches a stream client: the first `prices` event (the deadline only bounds a failure).
      const controller = new AbortController()
      const deadline = setTimeout(() => controller.abort(), 15_000)
      try {
        const response = await fetch(`${endpoint}/stream?symbols=BTC`, { signal: controller.signal })
        expect(response.status).toBe(200)
        const decoder = new TextDecoder()
        let text = ''
        for await (const chunk of response.body!) {
          text += decoder.decode(chunk as Uint8Array, { stream: true })
          if (/event: prices\n/.test(text) && text.endsWith('\n\n')) break
        }
        const data = /event: prices\ndata: (.*)\n/.exec(text)![1]!
        const event = JSON.parse(data) as { records: PriceRecord[] }
        expect(event.records.map((r) => r.symbol)).toEqual(['BTC'])
        expect(event.records[0]!.timestamp).toBeGreaterThanOrEqual(started)
        controller.abort()
      } finally {
        clearTimeout(deadline)
      }
    } finally {
      memory.signal()
    }
    expect(await exit).toBe(0)
    expect(memory.stderr()).not.toContain('the live demo stopped')
    expect(memory.stderr()).toContain('stopped\n')
  })

  it('--no-live-demo (even after --live-demo, as `npm start -- --no-live-demo` gives) writes nothing', async () => {
    expect((await run(['demo', '--db', db, '--days', '0.001'])).code).toBe(0)
    const { memory, exit, banner } = await startServe(['--db', db, '--demo-if-empty', '--live-demo', '--no-live-demo'])
    memory.signal()
    expect(await exit).toBe(0)
    expect(banner).not.toContain('live demo')
    expect(memory.stderr()).not.toContain('demo')
    // Neither a catch-up nor a live commit: the demo set as written, 8 records of each token.
    expect(await counts()).toEqual(Array(20).fill(8))
  })

  it('leaves a database that is not the demo alone, saying so', async () => {
    const file = await writeLines(dir, 'mine.ndjson', [JSON.stringify(record('MINE', 1_700_000_000_000))])
    expect((await run(['import', '--db', db, file])).code).toBe(0)
    const { memory, exit, banner } = await startServe(['--db', db, '--live-demo'])
    memory.signal()
    expect(await exit).toBe(0)
    expect(memory.stderr()).toContain(`no live demo: the database at ${db} is not the demo data set`)
    expect(banner).not.toContain('live demo:')
    expect(await counts()).toEqual([1])
  })

  it('refuses --live-demo on a cluster node', async () => {
    const { code, stderr } = await run(['serve', '--db', db, '--live-demo', '--follow', 'http://127.0.0.1:1'])
    expect(code).toBe(2)
    expect(stderr).toContain('--live-demo cannot be used with --follow')
  })
})
