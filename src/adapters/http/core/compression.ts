import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http'
import type { Transform } from 'node:stream'
import * as zlib from 'node:zlib'
import { PriceStoreError } from '../../../errors.js'
import { checkIntegerOption } from '../../../rules/options.js'

/*
 * Content codings of answers: which one a request accepts
 * (RFC 9110 §12.5.3), and compressing a whole body or a streamed one.
 * Below routing: nothing here knows an endpoint; the senders (send.ts,
 * streamed-body.ts) ask for it on the answers that can be large.
 */

/** A content coding this server can send. `zstd` only where Node's zlib has it (Node 22.15+/23.8+; not Node 20). */
export type ContentCoding = 'br' | 'gzip' | 'zstd'

/** A content coding, or none. */
export type Coding = ContentCoding | 'identity'

/** What a request's `Accept-Encoding` allows (see {@link negotiateEncoding}). */
export interface Negotiated {
  /** The coding to send a body in that is worth compressing. */
  readonly coding: Coding
  /**
   * The body may also go without a coding: a body below the threshold is
   * sent as is only when this holds (`identity;q=0` refuses it).
   */
  readonly identity: boolean
}

/** Whether this Node's zlib can make zstd (`zlib.createZstdCompress` exists from Node 22.15 / 23.8; Node 20 has none). */
export const ZSTD_AVAILABLE = typeof (zlib as { createZstdCompress?: unknown }).createZstdCompress === 'function'

/**
 * The codings offered, best first: the order that breaks a tie between
 * codings of equal weight. Brotli first: measured on this service's answers
 * (bench/results/history/benchmarks-journal.md, "Compression"), brotli at quality 1 is both smaller
 * than gzip at level 1 and 2.5 to 3 times cheaper. zstd (where Node has it) before
 * gzip: its speed is gzip's at a smaller size, by zstd's own figures (not
 * measured here: Node 20 has none).
 */
export const OFFERED_CODINGS: readonly ContentCoding[] = Object.freeze(ZSTD_AVAILABLE ? ['br', 'zstd', 'gzip'] : ['br', 'gzip'])

const NO_CODING: Negotiated = Object.freeze({ coding: 'identity', identity: true })
/** A coding's name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/
/** An RFC 9110 §12.4.2 weight. */
const WEIGHT = /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/

/**
 * The coding to answer a request in, from its `Accept-Encoding` (RFC 9110
 * §12.5.3) and the codings `offered` (best first):
 * - no header: no coding (a client that asks for nothing gets the answer
 *   byte for byte as before compression existed);
 * - each member is a coding with an optional weight `;q=` (0 to 1, three
 *   decimals at most); names are case-insensitive, `x-gzip` is `gzip`; a
 *   member that does not parse (a bad name or weight) is ignored; when a
 *   coding is listed twice, its first member counts;
 * - a coding's weight is its own member's, else that of `*`, else 0; that
 *   of `identity` is its own, else `*`'s, else 1 (acceptable unless refused);
 * - the coding of highest weight above 0 wins; a tie goes to the first in
 *   `offered`, and any offered coding beats `identity` at equal weight;
 * - nothing acceptable (`identity;q=0` and no offered coding, `*;q=0`):
 *   no coding, as RFC 9110 §12.5.3 allows (the header is disregarded rather
 *   than answered with 406).
 */
export function negotiateEncoding(header: string | undefined, offered: readonly ContentCoding[] = OFFERED_CODINGS): Negotiated {
  if (header === undefined) return NO_CODING
  const weights = new Map<string, number>()
  for (const member of header.split(',')) {
    const parts = member.split(';')
    let name = (parts[0] as string).trim().toLowerCase()
    if (name === '' || !TOKEN.test(name)) continue
    if (name === 'x-gzip') name = 'gzip'
    let weight = 1
    let valid = true
    for (let i = 1; i < parts.length; i++) {
      const parameter = (parts[i] as string).trim()
      const equals = parameter.indexOf('=')
      const key = (equals < 0 ? parameter : parameter.slice(0, equals)).trim().toLowerCase()
      if (key !== 'q') continue // codings take no other parameter: ignored
      const value = equals < 0 ? '' : parameter.slice(equals + 1).trim()
      if (!WEIGHT.test(value)) valid = false
      else weight = Number(value)
    }
    if (valid && !weights.has(name)) weights.set(name, weight)
  }
  const star = weights.get('*')
  let best: Coding = 'identity'
  let bestWeight = 0
  for (const coding of offered) {
    const weight = weights.get(coding) ?? star ?? 0
    if (weight > bestWeight) {
      best = coding
      bestWeight = weight
    }
  }
  const identityWeight = weights.get('identity') ?? star ?? 1
  if (identityWeight > bestWeight) return NO_CODING
  return bestWeight === 0 ? NO_CODING : { coding: best, identity: identityWeight > 0 }
}

/**
 * How answers are compressed (the handler's `compression` option, on by
 * default; `false` turns it off).
 */
export interface CompressionOptions {
  /** Bodies smaller than this many bytes are sent as they are (default {@link DEFAULT_COMPRESSION_THRESHOLD}). */
  readonly threshold?: number
  /** Brotli's quality, 0 to 11 (default {@link DEFAULT_BROTLI_QUALITY}). */
  readonly brotliQuality?: number
  /** gzip's level, 1 to 9 (default {@link DEFAULT_GZIP_LEVEL}). */
  readonly gzipLevel?: number
}

/**
 * Default smallest body compressed (bytes). Measured (bench/results/history/benchmarks-journal.md):
 * a latest-1 answer (one record, 1.4 to 3 KB) shrinks by only a quarter
 * (its signature and key are random base64) while compressing it cut the
 * requests a second by three to six times; from two records on, the public
 * key repeats and answers shrink by 40 % and more.
 */
export const DEFAULT_COMPRESSION_THRESHOLD = 4096
/**
 * Default brotli quality. Measured on record answers: quality 1 is within
 * 1.5 % of quality 4's size (as small on the all-symbols answer, smaller on
 * slim ones) at 2.5 to 3 times less CPU; only UDF's number arrays come out
 * 14 % larger than at quality 4.
 */
export const DEFAULT_BROTLI_QUALITY = 1
/** Default gzip level: within 2.5 % of level 4 and 4 % of level 6 on record answers, at 1.4 to 2.5 times less CPU. */
export const DEFAULT_GZIP_LEVEL = 1
/**
 * Bodies up to this size are compressed in the request's own turn (about a
 * third of a millisecond of CPU); larger ones in zlib's thread pool, so the
 * event loop answers other requests meanwhile.
 */
export const COMPRESS_IN_TURN_BELOW = 32 * 1024

/** Distinct `Accept-Encoding` values remembered: clients send a handful; a flood of odd ones empties the memory, it does not grow it. */
const MAX_REMEMBERED = 256

/** The checked compression settings of one handler, with its memory of `Accept-Encoding` values. */
export class AnswerCompression {
  readonly threshold: number
  readonly #brotli: zlib.BrotliOptions
  readonly #gzip: zlib.ZlibOptions
  readonly #negotiated = new Map<string, Negotiated>()

  /**
   * The settings `option` asks for, or `undefined` when it turns compression off (`false`).
   * @throws PriceStoreError `PRICE_INVALID_OPTIONS` for a value out of range
   */
  static of(option: boolean | CompressionOptions | undefined): AnswerCompression | undefined {
    if (option === false) return undefined
    if (option === undefined || option === true) return new AnswerCompression({})
    if (typeof option !== 'object' || option === null) {
      throw new PriceStoreError('PRICE_INVALID_OPTIONS', `option compression must be true, false or an object (got ${typeof option})`)
    }
    return new AnswerCompression(option)
  }

  private constructor(options: CompressionOptions) {
    this.threshold = checkIntegerOption('compression.threshold', options.threshold, DEFAULT_COMPRESSION_THRESHOLD, 0, Number.MAX_SAFE_INTEGER)
    const quality = checkIntegerOption('compression.brotliQuality', options.brotliQuality, DEFAULT_BROTLI_QUALITY, 0, 11)
    const level = checkIntegerOption('compression.gzipLevel', options.gzipLevel, DEFAULT_GZIP_LEVEL, 1, 9)
    this.#brotli = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } }
    this.#gzip = { level }
  }

  /** What `req`'s `Accept-Encoding` allows; remembered per header value, so the hot path parses each value once. */
  negotiate(req: IncomingMessage | undefined): Negotiated {
    const header = req?.headers['accept-encoding']
    if (header === undefined) return NO_CODING
    let negotiated = this.#negotiated.get(header)
    if (negotiated === undefined) {
      negotiated = negotiateEncoding(header)
      if (this.#negotiated.size >= MAX_REMEMBERED) this.#negotiated.clear()
      this.#negotiated.set(header, negotiated)
    }
    return negotiated
  }

  /** `body` in `coding`, at once (for bodies up to {@link COMPRESS_IN_TURN_BELOW}). */
  compressNow(body: Buffer, coding: ContentCoding): Buffer {
    switch (coding) {
      case 'br':
        return zlib.brotliCompressSync(body, this.#brotliFor(body.length))
      case 'gzip':
        return zlib.gzipSync(body, this.#gzip)
      case 'zstd':
        return (zlib as unknown as ZstdZlib).zstdCompressSync(body)
    }
  }

  /** `body` in `coding`, compressed in zlib's thread pool. */
  compress(body: Buffer, coding: ContentCoding, done: (err: Error | null, compressed: Buffer) => void): void {
    switch (coding) {
      case 'br':
        return zlib.brotliCompress(body, this.#brotliFor(body.length), done)
      case 'gzip':
        return zlib.gzip(body, this.#gzip, done)
      case 'zstd':
        return (zlib as unknown as ZstdZlib).zstdCompress(body, done)
    }
  }

  /** A compressing stream for `coding` (a streamed answer's body is written into it, and it is piped into the response). */
  stream(coding: ContentCoding): Transform {
    switch (coding) {
      case 'br':
        return zlib.createBrotliCompress(this.#brotli)
      case 'gzip':
        return zlib.createGzip(this.#gzip)
      case 'zstd':
        return (zlib as unknown as ZstdZlib).createZstdCompress()
    }
  }

  /** Brotli's options for a body of `bytes`: the size hint lets it size its window. */
  #brotliFor(bytes: number): zlib.BrotliOptions {
    return { params: { ...this.#brotli.params, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes } }
  }
}

/** zstd in Node's zlib where it exists (typed here: Node 20's types have none). */
interface ZstdZlib {
  zstdCompressSync(body: Buffer): Buffer
  zstdCompress(body: Buffer, done: (err: Error | null, compressed: Buffer) => void): void
  createZstdCompress(): Transform
}

/**
 * `headers` with `Accept-Encoding` added to the response's `vary`: any
 * `vary` set on the response already (CORS's `Origin`) is kept, since the
 * headers given to `writeHead` replace those of the same name.
 */
export function varyOnEncoding(res: ServerResponse, headers: Readonly<Record<string, string>>): Record<string, string> {
  const before: OutgoingHttpHeader | undefined = res.getHeader('vary')
  const vary = before === undefined ? 'Accept-Encoding' : `${String(before)}, Accept-Encoding`
  return { ...headers, vary }
}
