/**
 * Who may sign data packages: per data service, the EVM addresses of its
 * nodes, each with an optional validity period so that a rotated signer's
 * older packages stay valid while its newer ones do not. Read from a JSON
 * document (docs/api.md, "Signer manifest"):
 *
 *     { "dataServices": { "<service id>": { "signers": [
 *         "0x…",                                        // always allowed
 *         { "address": "0x…", "from": 1700000000000, "until": 1760000000000 }
 *     ] } } }
 *
 * `from` and `until` are ms since 1970 of the package's signed timestamp,
 * `from` included and `until` excluded; either may be left out.
 */
import { PriceStoreError, describeValue } from '../errors.js'

/** One authorised signer of a data service. */
export interface AuthorisedSigner {
  /** The EVM address, lower-case. */
  readonly address: string
  /** The first package timestamp (ms, included) it may sign; no lower bound when absent. */
  readonly from?: number
  /** The package timestamp (ms, excluded) from which it may no longer sign; no upper bound when absent. */
  readonly until?: number
}

/** The signers of one data service. */
export interface DataServiceSigners {
  readonly signers: readonly AuthorisedSigner[]
}

/** The signer manifest: data services by id. */
export interface SignerManifest {
  readonly dataServices: Readonly<Record<string, DataServiceSigners>>
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/

function manifestError(field: string, message: string): PriceStoreError {
  return new PriceStoreError('PRICE_INVALID_OPTIONS', `signer manifest: \`${field}\` ${message}`, { details: { field } })
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Reads a signer manifest (an object, or its JSON text, e.g. a file's content).
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (`details.field` names the entry, e.g.
 *   `dataServices.redstone-primary-prod.signers[2].until`) for: text that is not JSON, a document or service that is
 *   not an object, a service id that is empty, `signers` that is not an array, an address that is not `0x` + 40 hex,
 *   a `from`/`until` that is not a safe integer ≥ 0, `from` ≥ `until`, or an unknown field in a signer entry.
 */
export function parseSignerManifest(json: unknown): SignerManifest {
  let input = json
  if (typeof json === 'string') {
    try {
      input = JSON.parse(json) as unknown
    } catch (cause) {
      throw new PriceStoreError('PRICE_INVALID_OPTIONS', `signer manifest: not JSON: ${(cause as Error).message}`, { cause, details: { field: 'manifest' } })
    }
  }
  if (!isObject(input)) throw manifestError('manifest', `is not an object: ${describeValue(input)}`)
  const services = input['dataServices']
  if (!isObject(services)) throw manifestError('dataServices', `is not an object: ${describeValue(services)}`)
  // Object.fromEntries defines own properties, so a service named `__proto__` stays a service.
  return {
    dataServices: Object.fromEntries(
      Object.entries(services).map(([id, service]) => {
        const at = `dataServices.${id}`
        if (id === '') throw manifestError(at, 'is an empty service id')
        if (!isObject(service)) throw manifestError(at, `is not an object: ${describeValue(service)}`)
        const signers = service['signers']
        if (!Array.isArray(signers)) throw manifestError(`${at}.signers`, `is not an array: ${describeValue(signers)}`)
        return [id, { signers: signers.map((entry: unknown, index) => signerOf(entry, `${at}.signers[${index}]`)) }]
      }),
    ),
  }
}

function signerOf(entry: unknown, at: string): AuthorisedSigner {
  if (typeof entry === 'string') return { address: addressOf(entry, at) }
  if (!isObject(entry)) throw manifestError(at, `is neither an address nor an object: ${describeValue(entry)}`)
  const unknown = Object.keys(entry).filter((key) => !['address', 'from', 'until'].includes(key))
  if (unknown.length > 0) throw manifestError(`${at}.${unknown[0] as string}`, 'is not a field of a signer (address, from, until)')
  const address = addressOf(entry['address'], `${at}.address`)
  const from = momentOf(entry['from'], `${at}.from`)
  const until = momentOf(entry['until'], `${at}.until`)
  if (from !== undefined && until !== undefined && from >= until) throw manifestError(at, `has from ${from} not before until ${until}`)
  return { address, ...(from === undefined ? {} : { from }), ...(until === undefined ? {} : { until }) }
}

function addressOf(value: unknown, at: string): string {
  if (typeof value !== 'string' || !ADDRESS.test(value)) throw manifestError(at, `is not an EVM address (0x + 40 hex): ${describeValue(value)}`)
  return value.toLowerCase()
}

function momentOf(value: unknown, at: string): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw manifestError(at, `is not a safe integer ≥ 0 (ms since 1970): ${describeValue(value)}`)
  return value
}

/** The signers of a service, when the manifest names it. */
export function signersOf(manifest: SignerManifest, dataServiceId: string): readonly AuthorisedSigner[] | undefined {
  return Object.hasOwn(manifest.dataServices, dataServiceId) ? manifest.dataServices[dataServiceId]?.signers : undefined
}
