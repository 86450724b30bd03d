import { readFile, rm } from 'node:fs/promises'
import { get, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { DEMO_MARKER } from '../../src/cli/demo-marker.js'
import { PriceStore } from '../../src/index.js'
import { DEMO_END } from '../../src/demo/demo-data.js'
import { useBuiltCli, type Running } from './built-cli.js'
import { rawContents, record, setStoredFormat, tempDir } from './helpers.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
let dir: string
let cleanup: () => Promise<void>
const start = useBuiltCli(() => dir)

beforeAll(async () => {
  ;({ dir, cleanup } = await tempDir())
})

afterAll(async () => {
  await cleanup?.()
})

async function runToEnd(args: readonly string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const running = start(args)
  const code = await running.exited
  return { code, stdout: running.stdout(), stderr: running.stderr() }
}

/** Waits for the serve banner; fails fast if the process dies first. */
async function banner(running: Running): Promise<string> {
  for (;;) {
    if (running.stdout().includes('Press Ctrl+C to stop.')) return running.stdout()
    const state = await Promise.race([running.exited, new Promise((resolve) => setTimeout(() => resolve('waiting'), 50))])
    if (state !== 'waiting') throw new Error(`serve exited (${String(state)}): ${running.stderr()}`)
  }
}

describe('the price-store process', () => {
  it(
    'serve --demo-if-empty on a new database: writes the demo data, prints working examples, stops on SIGTERM with 0',
    async () => {
      const serve = start(['serve', '--port', '0', '--demo-if-empty'])
      try {
        const text = await banner(serve)
        expect(serve.stderr()).toContain('is empty: writing the demo data set')
        expect(text).toContain(`price-store is serving 20 symbols from ${join(dir, 'data', 'prices')}`)
        const examples = [...text.matchAll(/curl '([^']+)'/g)].map((match) => match[1]!)
        expect(examples).toHaveLength(3)
        const [latest, several, range] = (await Promise.all(examples.map(async (url) => (await fetch(url)).json()))) as [any, any, any]
        expect(latest).toHaveLength(1)
        expect(latest[0].symbol).toBe('BTC')
        expect(latest[0].timestamp).toBeGreaterThan(DEMO_END - 10_000)
        expect(latest[0].timestamp).toBeLessThan(DEMO_END)
        expect(Object.keys(several)).toEqual(['BTC', 'ETH', 'AR'])
        expect(range.length).toBeGreaterThanOrEqual(24) // a day by the hour
        expect(range.every((record: { minutes: number }) => record.minutes === 59)).toBe(true) // each hour's closing record

        // A second process on the same database gets plain words, not corruption.
        const locked = await runToEnd(['query', 'symbol=BTC'])
        expect(locked.code).toBe(1)
        expect(locked.stderr).toContain('is in use by another process')
      } finally {
        serve.child.kill('SIGTERM')
      }
      expect(await serve.exited).toBe(0)
      expect(serve.stderr()).toContain('SIGTERM: stopping')
      expect(serve.stderr()).toMatch(/stopped\n$/)
    },
    240_000,
  )

  it('serve on a database that has data starts at once and stops on SIGINT with 0', async () => {
    const serve = start(['serve', '--port', '0', '--demo-if-empty'])
    try {
      await banner(serve)
      expect(serve.stderr()).not.toContain('demo data')
    } finally {
      serve.child.kill('SIGINT')
    }
    expect(await serve.exited).toBe(0)
  })

  it('a second SIGINT while requests in flight finish exits at once with 130', async () => {
    const serve = start(['serve', '--port', '0', '--demo-if-empty'])
    let held: IncomingMessage | undefined
    try {
      const text = await banner(serve)
      const url = /^ {2}(http:\/\/\S+\/prices)$/m.exec(text)![1]!
      // An export of every record that is never read stays in flight: the graceful stop waits for it.
      held = await new Promise<IncomingMessage>((resolve, reject) => get(`${url}/export`, resolve).on('error', reject))
      serve.child.kill('SIGINT')
      for (let i = 0; i < 1_000 && !serve.stderr().includes('SIGINT: stopping'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
      expect(serve.stderr()).toContain('SIGINT: stopping')
      serve.child.kill('SIGINT')
      expect(await serve.exited).toBe(130)
      expect(serve.stderr()).toContain('received SIGINT again, exiting without waiting')
    } finally {
      held?.destroy()
      serve.child.kill('SIGKILL')
    }
  })

  it('npm start on a default database of an older format (from an older release, unmarked) moves it aside and serves a new demo', async () => {
    const location = join(dir, 'data', 'prices')
    await rm(join(location, DEMO_MARKER))
    await setStoredFormat(location, '2')
    const before = await rawContents(location)
    const serve = start(['serve', '--port', '0', '--demo-if-empty'])
    try {
      const text = await banner(serve)
      expect(serve.stderr()).toContain(`the database at ${location} (where "npm start" keeps the demo data) is in format "2"`)
      expect(serve.stderr()).toContain(`moved it to ${location}.format-2 (delete that copy once you no longer need it)`)
      expect(serve.stderr()).toContain('is empty: writing the demo data set')
      expect(text).toContain(`price-store is serving 20 symbols from ${location}`)
    } finally {
      serve.child.kill('SIGTERM')
    }
    expect(await serve.exited).toBe(0)
    // The old database is kept, byte for byte; the new one is marked as a demo.
    expect(await rawContents(`${location}.format-2`)).toEqual(before)
    expect(JSON.parse(await readFile(join(location, DEMO_MARKER), 'utf8'))).toMatchObject({ demo: true })
  }, 240_000)

  it('query prints JSON; an invalid query exits 2; --help exits 0', async () => {
    const ok = await runToEnd(['query', 'symbols=BTC,ETH'])
    expect(ok.code).toBe(0)
    expect(Object.keys(JSON.parse(ok.stdout))).toEqual(['BTC', 'ETH'])
    const bad = await runToEnd(['query', 'symbol=BTC', 'limit=0'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('[PRICE_INVALID_QUERY]')
    expect((await runToEnd(['--help'])).code).toBe(0)
    expect((await runToEnd([])).code).toBe(2)
  })

  it('--version prints the version read from package.json by the built bin; an unknown option is one line, exit 2', async () => {
    const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string }
    expect(await runToEnd(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
    expect(await runToEnd(['serve', '--prot', '9000'])).toEqual({
      code: 2,
      stdout: '',
      stderr: 'price-store serve: unknown option --prot (did you mean --port?); see "price-store serve --help"\n',
    })
  })

  it('a demo killed while it writes is marked unfinished; the next serve --demo-if-empty finishes it and says so', async () => {
    const location = join(dir, 'killed-demo')
    const demo = start(['demo', '--db', location, '--days', '0.5'])
    // The mark is written before the first batch; SIGKILL gives the process no chance to tidy up.
    for (;;) {
      const text = await readFile(join(location, DEMO_MARKER), 'utf8').catch(() => '')
      if (text.includes('"finished": false')) break
      if ((await Promise.race([demo.exited, new Promise((resolve) => setTimeout(() => resolve('waiting'), 20))])) !== 'waiting') {
        throw new Error(`demo exited before it could be killed: ${demo.stderr()}`)
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 300))
    demo.child.kill('SIGKILL')
    expect(await demo.exited).toBe('SIGKILL')
    expect(JSON.parse(await readFile(join(location, DEMO_MARKER), 'utf8'))).toMatchObject({ demo: true, finished: false })
    const partial = await PriceStore.open(location, { provider: DEFAULT_PROVIDER })
    let btc = 0
    try {
      for await (const _ of partial.rangeStream('BTC', { from: 0, to: DEMO_END, interval: 1 })) btc++
    } finally {
      await partial.close()
    }
    expect(btc).toBeLessThan(4320) // half a day every 10 s: the demo was cut short

    const serve = start(['serve', '--db', location, '--port', '0', '--demo-if-empty'])
    try {
      const text = await banner(serve)
      expect(serve.stderr()).toContain(`the demo data set at ${location} is not finished (its writing by "price-store demo" was interrupted): finishing it`)
      expect(serve.stderr()).toContain('wrote 86,400 demo records')
      expect(text).toContain(`price-store is serving 20 symbols from ${location}`)
    } finally {
      serve.child.kill('SIGTERM')
    }
    expect(await serve.exited).toBe(0)
    expect(JSON.parse(await readFile(join(location, DEMO_MARKER), 'utf8'))).toMatchObject({ demo: true, finished: true })
  }, 120_000)

  it('import stopped by a real SIGINT: whole batches stored, the rest reported, exit 130', async () => {
    const location = join(dir, 'interrupted-import')
    const importer = start(['import', '--db', location, '--batch-size', '100', '-'], { stdin: 'pipe' })
    // 5,000 records, over a megabyte: once the pipe took them all, the child has read all but the last 64 KiB
    // and the 1,024 lines readline buffers, so it has written thousands. Then stdin stays open, like a slow producer's.
    const lines = Array.from({ length: 5000 }, (_, i) => JSON.stringify(record('BTC', i + 1, { signature: 'c2ln'.repeat(50) })))
    await new Promise<void>((resolve, reject) => importer.child.stdin!.write(`${lines.join('\n')}\n`, (err) => (err ? reject(err) : resolve())))
    importer.child.kill('SIGINT')
    expect(await importer.exited).toBe(130)
    expect(importer.stdout()).toBe('')
    const match = /^price-store import: interrupted by SIGINT: ([\d,]+) records stored in (.+), up to <stdin> line (\d+)\./.exec(importer.stderr())
    expect(match, importer.stderr()).not.toBeNull()
    const stored = Number(match![1]!.replaceAll(',', ''))
    expect(match![2]).toBe(location)
    expect(Number(match![3])).toBe(stored)
    expect(stored).toBeGreaterThan(0)
    expect(stored % 100).toBe(0)
    expect(importer.stderr()).toContain('To finish, run the same import again: records already stored are replaced, not duplicated.')
    const store = await PriceStore.open(location, { provider: DEFAULT_PROVIDER })
    try {
      let count = 0
      for await (const _ of store.rangeStream('BTC', { from: 0, to: 10_000, interval: 1 })) count++
      expect(count).toBe(stored)
    } finally {
      await store.close()
    }
  })
})
