/**
 * Config files and free ports for the NATS test harness (./nats-cluster.ts).
 *
 * Ports come from the kernel: bind a socket on 127.0.0.1 port 0, read the port, close it,
 * write it into the config. Between that close and the server's own bind another process
 * may take the port (a tiny race); the harness then sees "address already in use" in the
 * server's log and starts again once with fresh ports. All of a cluster's ports are held
 * open at the same time while they are chosen, so they are distinct from each other.
 */
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { promisify } from 'node:util'

/** The three loopback ports one server listens on. */
export interface NatsPorts {
  /** Clients (`nats://127.0.0.1:<client>`). */
  readonly client: number
  /** Routes between the servers of the cluster. */
  readonly cluster: number
  /** HTTP monitoring: /healthz, /jsz, /varz, ... */
  readonly http: number
}

/** Reserves `count` distinct free loopback ports and releases them. */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = []
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer()
      servers.push(server)
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(0, '127.0.0.1', () => resolve())
      })
    }
    return servers.map((server) => {
      const address = server.address()
      if (address === null || typeof address === 'string') throw new Error('no TCP address for a probe socket')
      return address.port
    })
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
  }
}

/** Free ports for `size` servers. */
export async function chooseNatsPorts(size: number): Promise<NatsPorts[]> {
  const ports = await freePorts(size * 3)
  return Array.from({ length: size }, (_, i) => ({
    client: ports[i * 3]!,
    cluster: ports[i * 3 + 1]!,
    http: ports[i * 3 + 2]!,
  }))
}

/** What one server's config needs to know. */
export interface NatsServerConfigInput {
  readonly serverName: string
  readonly storeDir: string
  readonly ports: NatsPorts
  /**
   * Cluster name and the route ports of the other servers; absent for a single server. `noAdvertise`: the server
   * does not tell clients the other servers' addresses, so a client reaches only the URLs it was given.
   * `advertise`: the route address (`host:port`) the server gives the others instead of its own.
   */
  readonly cluster?: { readonly name: string; readonly peerRoutePorts: readonly number[]; readonly noAdvertise?: boolean; readonly advertise?: string }
  /** Largest message the server accepts, in bytes (the server's default is 1 MB). */
  readonly maxPayload?: number
  /** An `authorization { ... }` block, written into the config as is. */
  readonly authorization?: string
  /** TLS for clients and for the routes between the servers. */
  readonly tls?: NatsServerTls
}

/** A server's TLS files (PEM), and whether it asks clients for a certificate the CA signed. */
export interface NatsServerTls {
  readonly certFile: string
  readonly keyFile: string
  readonly caFile: string
  readonly verifyClients: boolean
}

/** Certificates a test made: a CA, a certificate for 127.0.0.1 (servers and routes), and one for a client. */
export interface TestCertificates {
  readonly caFile: string
  readonly serverCertFile: string
  readonly serverKeyFile: string
  readonly clientCertFile: string
  readonly clientKeyFile: string
}

/** The text of a `nats-server -c` config file: loopback only, JetStream on, clustered when asked. */
export function natsServerConfig(input: NatsServerConfigInput): string {
  const lines = [
    `server_name: ${JSON.stringify(input.serverName)}`,
    `host: "127.0.0.1"`,
    `port: ${input.ports.client}`,
    `http: "127.0.0.1:${input.ports.http}"`,
    // Small limits: the tests write little, and many servers may share one machine.
    `jetstream {`,
    `  store_dir: ${JSON.stringify(input.storeDir)}`,
    `  max_mem: 64MB`,
    `  max_file: 1GB`,
    `}`,
  ]
  if (input.maxPayload !== undefined) lines.push(`max_payload: ${input.maxPayload}`)
  if (input.authorization !== undefined) lines.push(input.authorization)
  if (input.tls !== undefined) lines.push(...tlsBlock(input.tls, input.tls.verifyClients, ''))
  if (input.cluster !== undefined) {
    const routes = input.cluster.peerRoutePorts.map((port) => `    "nats-route://127.0.0.1:${port}"`)
    lines.push(
      `cluster {`,
      `  name: ${JSON.stringify(input.cluster.name)}`,
      `  listen: "127.0.0.1:${input.ports.cluster}"`,
      ...(input.cluster.noAdvertise === true ? ['  no_advertise: true'] : []),
      ...(input.cluster.advertise === undefined ? [] : [`  advertise: ${JSON.stringify(input.cluster.advertise)}`]),
      `  routes: [`,
      ...routes,
      `  ]`,
      // Routes verify each other's certificate against the CA, whatever `verifyClients` says.
      ...(input.tls === undefined ? [] : tlsBlock(input.tls, true, '  ')),
      `}`,
    )
  }
  return lines.join('\n') + '\n'
}

function tlsBlock(tls: NatsServerTls, verify: boolean, indent: string): string[] {
  return [
    `${indent}tls {`,
    `${indent}  cert_file: ${JSON.stringify(tls.certFile)}`,
    `${indent}  key_file: ${JSON.stringify(tls.keyFile)}`,
    `${indent}  ca_file: ${JSON.stringify(tls.caFile)}`,
    `${indent}  verify: ${verify}`,
    // Two busy cores may take a while over a handshake; the default is half a second.
    `${indent}  timeout: 5`,
    `${indent}}`,
  ]
}

const run = promisify(execFile)

/**
 * Makes a CA and two certificates it signs, with `openssl`, into `dir` (a test's temp folder: keys are never
 * committed): one for the servers (and their routes) on 127.0.0.1 and localhost, one for a client. P-256 keys,
 * valid for a day.
 */
export async function makeTestCertificates(dir: string): Promise<TestCertificates> {
  const file = (name: string): string => join(dir, name)
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  await run('openssl', ['req', '-x509', ...key, '-keyout', file('ca-key.pem'), '-out', file('ca.pem'), '-days', '1', '-subj', '/CN=price-store test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'])
  const issue = async (name: string, subject: string, extensions: string): Promise<void> => {
    await writeFile(file(`${name}.ext`), extensions)
    await run('openssl', ['req', ...key, '-keyout', file(`${name}-key.pem`), '-out', file(`${name}.csr`), '-subj', subject])
    await run('openssl', ['x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca-key.pem'), '-set_serial', String(Date.now()),
      '-days', '1', '-out', file(`${name}.pem`), '-extfile', file(`${name}.ext`)])
  }
  // No extended key usage: the server certificate also serves as a route's client certificate.
  await issue('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  await issue('client', '/CN=price-store node', 'extendedKeyUsage=clientAuth\n')
  return { caFile: file('ca.pem'), serverCertFile: file('server.pem'), serverKeyFile: file('server-key.pem'), clientCertFile: file('client.pem'), clientKeyFile: file('client-key.pem') }
}
