import { UsageError } from './args.js'

/**
 * The URL of `path` on the server `--url` names (`http://host:9000/v1` and
 * `/prices` give `http://host:9000/v1/prices`), for the commands that talk
 * to a running server (`import --url`, `backup --url`).
 * @throws UsageError for a URL that is not http(s), or has a query or fragment
 */
export function serverEndpoint(url: string, path: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`--url must be the server's address, such as http://127.0.0.1:9000 (got ${JSON.stringify(url)})`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must start with http:// or https:// (got ${JSON.stringify(url)})`)
  if (parsed.search !== '' || parsed.hash !== '') throw new UsageError(`--url must have no query or fragment (got ${JSON.stringify(url)})`)
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}${path}`
}
