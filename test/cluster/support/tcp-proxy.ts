/**
 * A TCP proxy on a loopback port that a test turns into a network fault: every connection to
 * `127.0.0.1:<port>` is relayed to `127.0.0.1:<targetPort>` until the test says otherwise.
 * - {@link TcpProxy.cut}: every relayed connection is destroyed and new ones are closed as soon as
 *   they are accepted (the other side sees its connection reset, then refused reconnects);
 * - {@link TcpProxy.blackHole}: connections stay open, and whatever either side sends is dropped (the
 *   other side sees silence, as behind a partition that does not reset connections; new
 *   connections are accepted and get silence too);
 * - {@link TcpProxy.heal}: bytes flow again; connections accepted during a black hole (which never
 *   reached the target) and those one side of which ended meanwhile are closed, so their client
 *   starts afresh;
 * - {@link TcpProxy.close}: everything ends.
 * Only this process's sockets are touched, and only on loopback.
 */
import { createServer, connect, type Server, type Socket } from 'node:net'

type Mode = 'open' | 'cut' | 'blackHole'

/** One accepted connection and, unless it was accepted during a black hole, its connection to the target. */
interface Relay {
  readonly client: Socket
  readonly target: Socket | undefined
}

export class TcpProxy {
  readonly #server: Server
  readonly #targetPort: number
  readonly #relays = new Set<Relay>()
  /** Relays one side of which ended during a black hole: the other side is told once it heals. */
  readonly #pendingEnds = new Set<Relay>()
  #mode: Mode = 'open'

  private constructor(server: Server, targetPort: number) {
    this.#server = server
    this.#targetPort = targetPort
    server.on('connection', (client) => this.#accept(client))
  }

  /** Listens on a free loopback port, relaying to `127.0.0.1:<targetPort>`. */
  static async start(targetPort: number): Promise<TcpProxy> {
    const server = createServer()
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => resolve())
    })
    return new TcpProxy(server, targetPort)
  }

  /** The port the proxy listens on. */
  get port(): number {
    const address = this.#server.address()
    if (address === null || typeof address === 'string') throw new Error('the proxy does not listen')
    return address.port
  }

  /** What the proxy does now. */
  get mode(): Mode {
    return this.#mode
  }

  /** Destroys every connection and closes new ones on arrival, until {@link TcpProxy.heal}. */
  cut(): void {
    this.#mode = 'cut'
    for (const relay of this.#relays) this.#end(relay)
  }

  /** Keeps every connection and drops every byte both ways, until {@link TcpProxy.heal}. */
  blackHole(): void {
    this.#mode = 'blackHole'
  }

  /** Relays again. */
  heal(): void {
    this.#mode = 'open'
    for (const relay of this.#relays) if (relay.target === undefined || this.#pendingEnds.has(relay)) this.#end(relay)
  }

  /** Destroys every connection and stops listening. */
  async close(): Promise<void> {
    this.#mode = 'cut'
    for (const relay of this.#relays) this.#end(relay)
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  #accept(client: Socket): void {
    if (this.#mode === 'cut') {
      client.destroy()
      return
    }
    const target = this.#mode === 'blackHole' ? undefined : connect({ host: '127.0.0.1', port: this.#targetPort })
    const relay: Relay = { client, target }
    this.#relays.add(relay)
    this.#pipe(relay, client, target)
    if (target !== undefined) this.#pipe(relay, target, client)
  }

  /** Relays `from`'s bytes to `to` unless in a black hole; the end of either side ends both, unless in a black hole. */
  #pipe(relay: Relay, from: Socket, to: Socket | undefined): void {
    from.on('data', (chunk: Buffer) => {
      if (this.#mode !== 'open' || to === undefined) return
      // Back-pressure: a slow reader holds the writer back rather than filling this process's memory.
      if (!to.write(chunk)) {
        from.pause()
        to.once('drain', () => from.resume())
      }
    })
    // Behind a black hole an end is not seen either: the other side learns of it once the fault heals.
    const ended = (): void => {
      if (this.#mode === 'blackHole') this.#pendingEnds.add(relay)
      else this.#end(relay)
    }
    from.on('error', ended)
    from.on('close', ended)
  }

  #end(relay: Relay): void {
    this.#relays.delete(relay)
    this.#pendingEnds.delete(relay)
    relay.client.destroy()
    relay.target?.destroy()
  }
}
