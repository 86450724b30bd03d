import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { httpErrorAnswer, type HttpAnswer } from '../core/answer.js'

/** Options of the OpenAPI document served at `/openapi.yaml`. */
export interface OpenApiOptions {
  /**
   * The OpenAPI document to serve, a file (default: this package's
   * `docs/openapi.yaml`, which the package ships). For a host that bundles
   * the package and leaves its `docs/` behind. Read once, on first use.
   */
  readonly openApiDocument?: string
}

/**
 * `GET /openapi.yaml`: the OpenAPI 3.1 document of every endpoint
 * (docs/openapi.yaml), as the package ships it, so a client generator or
 * Swagger UI can be pointed at a running server. Served as YAML only: the
 * package has no YAML parser at run time, and every OpenAPI tool reads
 * YAML. The file is read once, on first use, relative to the package's
 * root, which works from `src/` (tests) and from `dist/` (the built
 * package) alike; while it cannot be found (a bundle that left `docs/`
 * behind), the path answers 404 `HTTP_NOT_FOUND` saying so, and is looked
 * for again on the next request.
 */
export class OpenApiDocument {
  readonly #file: string | undefined
  #text: string | undefined

  constructor(options: OpenApiOptions = {}) {
    this.#file = options.openApiDocument
  }

  /** The answer for `GET /openapi.yaml`. */
  answer(): HttpAnswer {
    const text = this.#load()
    if (text === undefined) {
      return httpErrorAnswer(404, 'HTTP_NOT_FOUND', 'the OpenAPI document (docs/openapi.yaml of the package) is not found beside this server; set the option openApiDocument')
    }
    return {
      status: 200,
      headers: {
        // RFC 9512.
        'content-type': 'application/yaml',
        'content-length': String(Buffer.byteLength(text, 'utf8')),
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
      },
      body: text,
    }
  }

  /** The document's text, or `undefined` while it cannot be read. Read synchronously, once: a local file, as the chart page's script is. */
  #load(): string | undefined {
    if (this.#text !== undefined) return this.#text
    try {
      this.#text = readFileSync(this.#file ?? defaultDocument(), 'utf8')
      return this.#text
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
  }
}

/**
 * `docs/openapi.yaml` of this package: the code runs from `dist/` once built
 * and from `src/adapters/http/live/` in tests; both lie below the package's
 * root, the first folder up with a `package.json`.
 */
function defaultDocument(): string {
  const here = dirname(fileURLToPath(import.meta.url))
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'docs', 'openapi.yaml')
    if (dirname(dir) === dir) return join(here, 'docs', 'openapi.yaml')
  }
}
