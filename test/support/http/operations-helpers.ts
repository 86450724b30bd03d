import { get, type IncomingMessage } from 'node:http'
import { expect } from 'vitest'

/** Waits (in 5 ms steps, up to `boundMs`: 10 s unless given) until `check` holds, then asserts it. */
export async function until(check: () => boolean, what: string, boundMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + boundMs; Date.now() < deadline && !check();) await new Promise((resolve) => setTimeout(resolve, 5))
  expect(check(), what).toBe(true)
}

/** One sample of a metrics scrape. */
interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** A scrape of `/metrics`, parsed strictly: every line is a comment or a sample of a family with a `# TYPE`. */
export interface Scrape {
  readonly types: ReadonlyMap<string, string>
  readonly samples: readonly Sample[]
  /** The value of the sample `name` with exactly these labels; 0 when absent (a counter not yet counted). */
  value(name: string, labels?: Readonly<Record<string, string>>): number
  /** Whether some sample named `name` exists. */
  has(name: string): boolean
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"(?:,|$)/

/** Parses Prometheus's text format 0.0.4 (the lines prom-client writes); throws on any line it cannot read. */
export function parsePrometheus(text: string): Scrape {
  const types = new Map<string, string>()
  const samples: Sample[] = []
  expect(text.endsWith('\n')).toBe(true)
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue
    if (line.startsWith('# HELP ')) continue
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ')
      expect(['counter', 'gauge', 'histogram', 'summary', 'untyped'], line).toContain(type)
      types.set(name!, type!)
      continue
    }
    const match = SAMPLE.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    let rest = match[2] ?? ''
    while (rest !== '') {
      const label = LABEL.exec(rest)
      if (label === null) throw new Error(`bad labels in: ${line}`)
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
      rest = rest.slice(label[0].length)
    }
    // Prometheus reads values with Go's ParseFloat, where NaN is any case (prom-client writes `Nan`).
    const nan = /^nan$/i.test(match[3]!)
    const value = match[3] === '+Inf' ? Infinity : match[3] === '-Inf' ? -Infinity : Number(match[3])
    if (Number.isNaN(value) && !nan) throw new Error(`bad value in: ${line}`)
    const name = match[1]!
    const family = [name, name.replace(/_(bucket|sum|count)$/, '')].find((candidate) => types.has(candidate))
    if (family === undefined) throw new Error(`a sample without a # TYPE: ${line}`)
    samples.push({ name, labels, value })
  }
  const same = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([key, value]) => b[key] === value)
  return {
    types,
    samples,
    value: (name, labels = {}) => samples.find((sample) => sample.name === name && same(sample.labels, labels))?.value ?? 0,
    has: (name) => samples.some((sample) => sample.name === name),
  }
}

/** Scrapes `${url}/metrics`. */
export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(`${url}/metrics`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
  return parsePrometheus(await response.text())
}

/** A GET whose body the test reads at its own pace (node:http: fetch would read ahead). */
export function openGet(url: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = get(url, { headers }, resolve)
    request.on('error', reject)
  })
}
