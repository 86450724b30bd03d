import { httpErrorAnswer, type HttpAnswer } from '../core/answer.js'
import { PackageFile, fileAnswer } from '../core/package-file.js'

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
  readonly #document: PackageFile

  constructor(options: OpenApiOptions = {}) {
    this.#document = new PackageFile(options.openApiDocument, ['docs', 'openapi.yaml'], ['docs', 'openapi.yaml'])
  }

  /** The answer for `GET /openapi.yaml`. */
  answer(): HttpAnswer {
    const text = this.#document.read()
    if (text === undefined) {
      return httpErrorAnswer(404, 'HTTP_NOT_FOUND', 'the OpenAPI document (docs/openapi.yaml of the package) is not found beside this server; set the option openApiDocument')
    }
    // RFC 9512.
    return fileAnswer('application/yaml', text)
  }
}
