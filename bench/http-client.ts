/**
 * A lean HTTP/1.1 load generator for loopback benchmarks (runs in its own
 * process, so the server under test has a core to itself): `concurrency`
 * keep-alive connections, each sending its next GET as soon as the previous
 * answer is complete, for a fixed time. Raw sockets and a minimal response
 * parser keep the client far cheaper than the servers it measures.
 */
import { connect } from 'node:net'
import type { Socket } from 'node:net'

export interface LoadJob {
  readonly port: number
  readonly paths: readonly string[]
  readonly concurrency: number
  readonly durationMs: number
}

export interface LoadResult {
  readonly requests: number
  readonly errors: number
  readonly seconds: number
  readonly requestsPerSecond: number
  readonly medianUs: number
  readonly p90Us: number
  readonly bytesPerAnswer: number
}

const HEADER_END = Buffer.from('\r\n\r\n')
const CRLF = Buffer.from('\r\n')

/** The length of the complete response at the start of `buffer`, or -1 while it is incomplete. */
function responseLength(buffer: Buffer): number {
  const headerEnd = buffer.indexOf(HEADER_END)
  if (headerEnd < 0) return -1
  const head = buffer.toString('latin1', 0, headerEnd).toLowerCase()
  const bodyStart = headerEnd + 4
  const length = /\r\ncontent-length:\s*(\d+)/.exec(head)
  if (length !== null) {
    const end = bodyStart + Number(length[1])
    return buffer.length >= end ? end : -1
  }
  if (/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) {
    let at = bodyStart
    for (;;) {
      const lineEnd = buffer.indexOf(CRLF, at)
      if (lineEnd < 0) return -1
      const size = Number.parseInt(buffer.toString('latin1', at, lineEnd), 16)
      at = lineEnd + 2 + size + 2
      if (buffer.length < at) return -1
      if (size === 0) return at
    }
  }
  return bodyStart
}

export function runLoad(job: LoadJob): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = []
    let requests = 0
    let errors = 0
    let bytes = 0
    let next = 0
    let open = job.concurrency
    const started = process.hrtime.bigint()
    const deadline = Date.now() + job.durationMs
    const finish = (): void => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      latencies.sort((a, b) => a - b)
      const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN
      resolve({
        requests,
        errors,
        seconds,
        requestsPerSecond: requests / seconds,
        medianUs: at(0.5),
        p90Us: at(0.9),
        bytesPerAnswer: bytes / Math.max(1, requests),
      })
    }
    for (let c = 0; c < job.concurrency; c++) {
      const socket: Socket = connect(job.port, '127.0.0.1')
      socket.setNoDelay(true)
      let pending: Buffer | undefined
      let sentAt = 0n
      const send = (): void => {
        if (Date.now() >= deadline) {
          socket.end()
          return
        }
        const path = job.paths[next++ % job.paths.length] as string
        sentAt = process.hrtime.bigint()
        socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`)
      }
      socket.on('connect', send)
      socket.on('data', (chunk: Buffer) => {
        pending = pending === undefined ? chunk : Buffer.concat([pending, chunk])
        const length = responseLength(pending)
        if (length < 0) return
        latencies.push(Number(process.hrtime.bigint() - sentAt) / 1000)
        requests++
        bytes += length
        if (!pending.subarray(0, 12).toString('latin1').startsWith('HTTP/1.1 200')) errors++
        pending = length < pending.length ? pending.subarray(length) : undefined
        send()
      })
      socket.on('error', (err) => {
        errors++
        if (--open === 0) finish()
        else if (requests === 0) reject(err)
      })
      socket.on('close', (hadError) => {
        if (!hadError && --open === 0) finish()
      })
    }
  })
}
