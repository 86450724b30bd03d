/**
 * The connection to NATS: who the node says it is (credentials), whether the
 * connection is encrypted (TLS), and the server URLs without the secrets a
 * URL may carry. Everything a node prints or throws names servers by these
 * cleaned URLs, and an authentication failure says that NATS refused the
 * credentials, never what they were.
 */
import { readFile } from 'node:fs/promises'
import {
  connect, credsAuthenticator, errors, nkeyAuthenticator, tokenAuthenticator, usernamePasswordAuthenticator,
} from '@nats-io/transport-node'
import type { Authenticator, NatsConnection, TlsOptions } from '@nats-io/transport-node'
import { PriceStoreError } from '../errors.js'

/**
 * How a node proves who it is to the NATS servers: one of
 * - `{ credsFile }`: a `.creds` file (a user JWT and its nkey seed, as `nsc` writes them; decentralised auth),
 * - `{ nkeySeedFile }`: a file holding a user's nkey seed (`SU...`),
 * - `{ user, password }`,
 * - `{ token }`.
 * Files are read when the node connects; their content is never printed.
 */
export type NatsAuth =
  | { readonly credsFile: string }
  | { readonly nkeySeedFile: string }
  | { readonly user: string; readonly password: string }
  | { readonly token: string }

/**
 * TLS to the NATS servers (PEM files). Given, even empty, the node connects only over TLS and checks the
 * servers' certificates (against `caFile`, else Node's trusted CAs); a `tls://` server URL does the same.
 */
export interface NatsTls {
  /** The CA certificate(s) that signed the servers' certificates (default: Node's trusted CAs). */
  readonly caFile?: string
  /** This node's certificate, for servers that verify clients (`verify: true`); needs `keyFile`. */
  readonly certFile?: string
  /** The private key of `certFile`. */
  readonly keyFile?: string
}

/** The connection part of the node's options, checked. */
export interface NatsSecurity {
  /** The server URLs without any `user:password@`. */
  readonly servers: readonly string[]
  readonly auth?: NatsAuth | undefined
  readonly tls?: NatsTls | undefined
}

/** What {@link connectNats} needs. */
export interface NatsConnectOptions extends NatsSecurity {
  /** The connection's name, as NATS monitoring shows it. */
  readonly name: string
}

const NATS_URL = /^(nats|tls):\/\/(?:([^\s,@/]*)@)?([^\s,@/]+)$/
const AUTH_KEYS: readonly (readonly string[])[] = [['credsFile'], ['nkeySeedFile'], ['password', 'user'], ['token']]
const TLS_KEYS = ['caFile', 'certFile', 'keyFile']

/** A server URL with its `user:password@` (or `token@`) replaced by `***@`, for messages. */
export function redactNatsUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/)[^@/]*@/i, '$1***@')
}

/**
 * Checks the servers, the credentials and the TLS options, and moves credentials given in the URLs
 * (`nats://user:password@host`, `nats://token@host`: the NATS client ignores them there) into `auth`.
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` naming the option (never quoting a secret)
 */
export function resolveNatsSecurity(urls: readonly string[], auth: NatsAuth | undefined, tls: NatsTls | undefined): NatsSecurity {
  if (urls.length === 0) invalid('servers', 'give at least one NATS server URL (nats://host:port)')
  const servers: string[] = []
  const fromUrls = new Set<string>()
  let urlAuth: NatsAuth | undefined
  for (const url of urls) {
    const match = NATS_URL.exec(url)
    if (match === null) invalid('servers', `${JSON.stringify(redactNatsUrl(url))} is not a NATS URL (nats://host:port, or tls://host:port)`)
    servers.push(`${match[1]}://${match[3]}`)
    if (match[2] === undefined) continue
    fromUrls.add(match[2])
    urlAuth = credentialsOf(match[2])
  }
  if (fromUrls.size > 1) invalid('servers', 'the server URLs carry different credentials: give one set, in auth')
  if (urlAuth !== undefined && auth !== undefined) invalid('auth', 'credentials are given both in a server URL and in auth: give them once')
  const chosen = auth ?? urlAuth
  if (chosen !== undefined) checkAuth(chosen)
  if (tls !== undefined) checkTls(tls)
  // A tls:// URL asks for TLS on every connection: the client applies one TLS setting to all servers.
  const encrypted = tls ?? (servers.some((url) => url.startsWith('tls://')) ? {} : undefined)
  return { servers, ...(chosen === undefined ? {} : { auth: chosen }), ...(encrypted === undefined ? {} : { tls: encrypted }) }
}

/**
 * Connects to the servers with the options' credentials and TLS, reconnecting without end afterwards (every 250 ms),
 * also after the servers refused the credentials (they may be fixed on the servers meanwhile).
 * @throws PriceStoreError `PRICE_INVALID_OPTIONS` (a credentials or TLS file cannot be read),
 *   `PRICE_LOG_UNAVAILABLE` with `details.parameter` `auth` (NATS refused the credentials); the client's own error
 *   when no server answers or TLS fails
 */
export async function connectNats(options: NatsConnectOptions): Promise<NatsConnection> {
  const authenticator = options.auth === undefined ? undefined : await authenticatorFor(options.auth)
  const tls = options.tls === undefined ? undefined : await tlsOptionsFor(options.tls)
  try {
    return await connect({
      servers: [...options.servers], name: options.name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 5_000,
      ignoreAuthErrorAbort: true,
      ...(authenticator === undefined ? {} : { authenticator }),
      ...(tls === undefined ? {} : { tls }),
    })
  } catch (err) {
    if (err instanceof errors.AuthorizationError || err instanceof errors.UserAuthenticationExpiredError) {
      const given = options.auth === undefined ? 'no credentials were given (auth, or serve --nats-creds, --nats-nkey, --nats-user, --nats-token-file)' : `check the ${kindOf(options.auth)}`
      throw new PriceStoreError('PRICE_LOG_UNAVAILABLE', `NATS refused the credentials on ${options.servers.join(', ')} (${err.message}): ${given}`, {
        cause: err, details: { parameter: 'auth' },
      })
    }
    throw err
  }
}

/**
 * Whether `err` is NATS refusing an operation to this connection's user (a permission violation), as the NATS and
 * JetStream clients report it.
 */
export function isPermissionRefusal(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof errors.PermissionViolationError || /permissions violation/i.test(e.message)) return true
  }
  return false
}

function credentialsOf(userinfo: string): NatsAuth {
  const colon = userinfo.indexOf(':')
  if (colon < 0) return { token: decodeURIComponent(userinfo) }
  return { user: decodeURIComponent(userinfo.slice(0, colon)), password: decodeURIComponent(userinfo.slice(colon + 1)) }
}

function checkAuth(auth: NatsAuth): void {
  if (typeof auth !== 'object' || auth === null) invalid('auth', 'give { credsFile }, { nkeySeedFile }, { user, password } or { token }')
  const keys = Object.keys(auth).filter((key) => (auth as Record<string, unknown>)[key] !== undefined).sort()
  if (!AUTH_KEYS.some((kind) => kind.length === keys.length && kind.every((key, i) => keys[i] === key))) {
    invalid('auth', `give exactly one of { credsFile }, { nkeySeedFile }, { user, password } or { token } (got the keys ${keys.join(', ') || 'none'})`)
  }
  for (const key of keys) {
    const value = (auth as Record<string, unknown>)[key]
    if (typeof value !== 'string' || value === '') invalid(`auth.${key}`, 'must be a non-empty string')
  }
}

function checkTls(tls: NatsTls): void {
  if (typeof tls !== 'object' || tls === null) invalid('tls', 'give { caFile?, certFile?, keyFile? }')
  for (const [key, value] of Object.entries(tls)) {
    if (value === undefined) continue
    if (!TLS_KEYS.includes(key)) invalid('tls', `unknown key ${JSON.stringify(key)} (expected caFile, certFile, keyFile)`)
    if (typeof value !== 'string' || value === '') invalid(`tls.${key}`, 'must be a file name')
  }
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined)) invalid('tls', 'give certFile and keyFile together (a client certificate and its key)')
}

function kindOf(auth: NatsAuth): string {
  if ('credsFile' in auth) return `credentials file ${auth.credsFile}`
  if ('nkeySeedFile' in auth) return `nkey seed file ${auth.nkeySeedFile}`
  return 'user' in auth ? `user name and password` : 'token'
}

async function authenticatorFor(auth: NatsAuth): Promise<Authenticator> {
  if ('credsFile' in auth) return credsAuthenticator(await readOptionFile('auth.credsFile', auth.credsFile))
  if ('nkeySeedFile' in auth) return nkeyAuthenticator(new TextEncoder().encode((await readOptionFile('auth.nkeySeedFile', auth.nkeySeedFile)).toString('utf8').trim()))
  if ('user' in auth) return usernamePasswordAuthenticator(auth.user, auth.password)
  return tokenAuthenticator(auth.token)
}

async function tlsOptionsFor(tls: NatsTls): Promise<TlsOptions> {
  // Read here rather than by the client, so a missing file is an options error naming it, before connecting.
  const pem = async (option: string, path: string | undefined): Promise<string | undefined> => path === undefined ? undefined : (await readOptionFile(option, path)).toString('utf8')
  const [ca, cert, key] = [await pem('tls.caFile', tls.caFile), await pem('tls.certFile', tls.certFile), await pem('tls.keyFile', tls.keyFile)]
  return { ...(ca === undefined ? {} : { ca }), ...(cert === undefined ? {} : { cert }), ...(key === undefined ? {} : { key }) }
}

async function readOptionFile(option: string, path: string): Promise<Buffer> {
  try {
    return await readFile(path)
  } catch (err) {
    // The error's code (ENOENT, EACCES) and the path; never the content.
    throw new PriceStoreError('PRICE_INVALID_OPTIONS', `${option}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`, { cause: err, details: { parameter: option } })
  }
}

function invalid(option: string, message: string): never {
  throw new PriceStoreError('PRICE_INVALID_OPTIONS', `${option}: ${message}`, { details: { parameter: option } })
}
