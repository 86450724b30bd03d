/**
 * Config files and free ports for the NATS test harness (./nats-cluster.ts).
 *
 * Ports come from the kernel: bind a socket on 127.0.0.1 port 0, read the port, close it,
 * write it into the config. Between that close and the server's own bind another process
 * may take the port (a tiny race); the harness then sees "address already in use" in the
 * server's log and starts again once with fresh ports. All of a cluster's ports are held
 * open at the same time while they are chosen, so they are distinct from each other.
 */
import { createServer, type Server } from 'node:net'

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
  /** Cluster name and the route ports of the other servers; absent for a single server. */
  readonly cluster?: { readonly name: string; readonly peerRoutePorts: readonly number[] }
  /** Largest message the server accepts, in bytes (the server's default is 1 MB). */
  readonly maxPayload?: number
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
  if (input.cluster !== undefined) {
    const routes = input.cluster.peerRoutePorts.map((port) => `    "nats-route://127.0.0.1:${port}"`)
    lines.push(
      `cluster {`,
      `  name: ${JSON.stringify(input.cluster.name)}`,
      `  listen: "127.0.0.1:${input.ports.cluster}"`,
      `  routes: [`,
      ...routes,
      `  ]`,
      `}`,
    )
  }
  return lines.join('\n') + '\n'
}
