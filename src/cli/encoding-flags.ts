import type { CorsOptions } from '../adapters/http/core/cors.js'
import { CorsPolicy } from '../adapters/http/core/cors.js'
import { UsageError } from './args.js'

/** The help lines of `serve --no-compression` and `serve --cors`. */
export const ENCODING_FLAGS_HELP = `  --no-compression            send every answer as it is (by default, answers of 4 KB or more go in brotli
                              or gzip to clients that ask for it with Accept-Encoding; see docs/http.md)
  --cors ORIGINS              let web pages of other origins read (GET and HEAD, never writes or admin
                              endpoints): '*' for any origin, or origins separated by commas, such as
                              https://app.example,http://localhost:5173; off by default`

/** The handler options `--no-compression` and `--cors` ask for (none when neither is given). */
export function encodingOptions(noCompression: boolean | undefined, cors: string | undefined): { compression?: false; cors?: CorsOptions } {
  return { ...(noCompression === true ? { compression: false } : {}), ...(cors === undefined ? {} : { cors: corsOption(cors) }) }
}

/**
 * `--cors`'s value as the handler's option, checked as the handler checks it.
 * @throws UsageError for a value that is not `*` or a list of origins
 */
function corsOption(text: string): CorsOptions {
  const origins = text.trim() === '*' ? '*' : text.split(',').map((origin) => origin.trim()).filter((origin) => origin !== '')
  const option: CorsOptions = { origins }
  try {
    CorsPolicy.of(option)
  } catch (err) {
    throw new UsageError(`--cors takes '*' or origins separated by commas, such as https://app.example,http://localhost:5173 (got ${JSON.stringify(text)}): ${(err as Error).message}`)
  }
  return option
}
