/**
 * The routes between the NATS servers of a test cluster, each through a TCP proxy (./tcp-proxy.ts), so a
 * test can partition one server from the others: server i dials server j through a proxy of its own for
 * that pair, and every server advertises a dead end (a proxy that is always cut) as its route address, so
 * no server learns another's real route port from the others' gossip and goes round the proxies.
 * Pass {@link RouteProxies.options} as `routes` to `startNatsCluster`; `close()` in afterAll.
 */
import type { NatsClusterOptions } from './nats-cluster.js'
import { TcpProxy } from './tcp-proxy.js'

interface Route {
  readonly from: number
  readonly to: number
  readonly proxy: TcpProxy
}

export class RouteProxies {
  readonly #routes = new Map<string, Route>()
  readonly #deadEnd: TcpProxy

  private constructor(deadEnd: TcpProxy) {
    this.#deadEnd = deadEnd
  }

  static async start(): Promise<RouteProxies> {
    // Its target is never dialled: it is cut from the start.
    const deadEnd = await TcpProxy.start(0)
    deadEnd.cut()
    return new RouteProxies(deadEnd)
  }

  /** The `routes` option of `startNatsCluster`. */
  get options(): NonNullable<NatsClusterOptions['routes']> {
    return { via: (from, to, port) => this.#via(from, to, port), advertise: `127.0.0.1:${this.#deadEnd.port}` }
  }

  /** Cuts (or black-holes) every route of server `i`, both ways, until {@link RouteProxies.heal}. */
  isolate(i: number, how: 'cut' | 'blackHole'): void {
    for (const route of this.#routes.values()) {
      if (route.from !== i && route.to !== i) continue
      if (how === 'cut') route.proxy.cut()
      else route.proxy.blackHole()
    }
  }

  heal(): void {
    for (const route of this.#routes.values()) route.proxy.heal()
  }

  async close(): Promise<void> {
    await Promise.all([...this.#routes.values()].map((route) => route.proxy.close()))
    await this.#deadEnd.close()
  }

  /** The port server `from` dials to reach server `to`'s route `port` (a config written again replaces its proxy). */
  async #via(from: number, to: number, port: number): Promise<number> {
    const key = `${from}->${to}`
    await this.#routes.get(key)?.proxy.close()
    const proxy = await TcpProxy.start(port)
    this.#routes.set(key, { from, to, proxy })
    return proxy.port
  }
}
