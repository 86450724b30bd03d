import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { HttpAnswer } from './answer.js'

/**
 * A file this package ships (the chart page's script, the OpenAPI
 * document), or one the host names instead, served from memory: read
 * synchronously, once, on first use (a small local file, so an answer
 * from it leaves in the request's own turn, as answers from memory do),
 * and looked for again on the next request while it does not exist.
 */
export class PackageFile {
  readonly #path: () => string
  #text: string | undefined

  /**
   * @param given the host's file, when it names one
   * @param inPackage the file's path below the package's root (`['docs', 'openapi.yaml']`)
   * @param beside its path below the running code's folder, where there is no package root above it
   */
  constructor(given: string | undefined, inPackage: readonly string[], beside: readonly string[]) {
    this.#path = given === undefined ? () => packagePath(inPackage, beside) : () => given
  }

  /** The file's text, or `undefined` while it does not exist. */
  read(): string | undefined {
    if (this.#text !== undefined) return this.#text
    try {
      this.#text = readFileSync(this.#path(), 'utf8')
      return this.#text
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
  }
}

/**
 * `inPackage` below this package's root: the code runs from `dist/` once
 * built and from `src/adapters/http/` in tests; both lie below the root,
 * the first folder up with a `package.json`. Without one, `beside` below
 * the running code's folder.
 */
function packagePath(inPackage: readonly string[], beside: readonly string[]): string {
  const here = dirname(fileURLToPath(import.meta.url))
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, ...inPackage)
    if (dirname(dir) === dir) return join(here, ...beside)
  }
}

/** 200 with a served file's text: its type and length, revalidated by clients, never sniffed. */
export function fileAnswer(type: string, body: string, headers: Readonly<Record<string, string>> = {}): HttpAnswer {
  return {
    status: 200,
    headers: {
      'content-type': type,
      'content-length': String(Buffer.byteLength(body, 'utf8')),
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      ...headers,
    },
    body,
  }
}
