import { execFile } from 'node:child_process'
import * as http from 'node:http'
import { connect, type Socket } from 'node:net'
import * as zlib from 'node:zlib'

/** An answer as it came over the wire: no decoding of its body. */
export interface RawAnswer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

/** One request with `node:http` (which, unlike fetch, leaves the body as sent): a new connection each time. */
export function rawRequest(url: string, headers: Readonly<Record<string, string>> = {}, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}

/** The body decoded from its `content-encoding` (gzip or br), or as it is without one. */
export function decoded(answer: RawAnswer): string {
  switch (answer.headers['content-encoding']) {
    case undefined:
      return answer.body.toString('utf8')
    case 'gzip':
      return zlib.gunzipSync(answer.body).toString('utf8')
    case 'br':
      return zlib.brotliDecompressSync(answer.body).toString('utf8')
    default:
      throw new Error(`unexpected content-encoding ${answer.headers['content-encoding']}`)
  }
}

/** Whether `curl` is on this machine (CI installs only chromium and nats-server). */
export function curlPath(): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('which', ['curl'], (err, stdout) => resolve(err === null && stdout.trim() !== '' ? stdout.trim() : undefined))
  })
}

/** `curl -s --compressed` of `url`: the headers it printed and the body it decoded. */
export function curlCompressed(curl: string, url: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    execFile(curl, ['-s', '--compressed', '-D', '-', url], { maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err !== null) return reject(err)
      const end = stdout.indexOf('\r\n\r\n')
      resolve({ head: stdout.slice(0, end).toLowerCase(), body: stdout.slice(end + 4) })
    })
  })
}

/** A request on a raw socket that reads nothing until `read()`: a client whose buffers fill. */
export function stalledRequest(url: string, target: string, headers: Readonly<Record<string, string>>): { socket: Socket; read(): Promise<Buffer> } {
  const { port, hostname } = new URL(url)
  const socket = connect(Number(port), hostname)
  socket.pause()
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${lines}\r\n`)
  return {
    socket,
    read: () =>
      new Promise((resolve) => {
        const chunks: Buffer[] = []
        socket.on('data', (chunk: Buffer) => chunks.push(chunk))
        socket.on('close', () => resolve(Buffer.concat(chunks)))
        socket.on('error', () => {}) // a cut connection: what was read is the answer
        socket.resume()
      }),
  }
}

/** The head and the de-chunked body of a raw chunked HTTP/1.1 answer, and whether its last chunk came. */
export function splitChunked(raw: Buffer): { head: string; body: Buffer; complete: boolean } {
  const headEnd = raw.indexOf('\r\n\r\n')
  const head = raw.toString('latin1', 0, headEnd).toLowerCase()
  const parts: Buffer[] = []
  let at = headEnd + 4
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at)
    if (lineEnd < 0) return { head, body: Buffer.concat(parts), complete: false }
    const size = parseInt(raw.toString('latin1', at, lineEnd), 16)
    if (size === 0) return { head, body: Buffer.concat(parts), complete: true }
    if (raw.length < lineEnd + 2 + size) return { head, body: Buffer.concat(parts), complete: false }
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

/** Waits for `check` to hold, polling; the deadline only bounds a failure. */
export async function until(check: () => boolean | Promise<boolean>, what: string, deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
