/**
 * A loopback TCP relay to one server that passes the server's bytes to each client only up to a
 * limit, then holds the rest back (the connection stays open, silent): a client stopped at a known
 * point of a download, however fast the machine, which a test can then kill there. What clients
 * send is passed on whole. Only this process's sockets are touched.
 */
import { connect, createServer, type Server, type Socket } from 'node:net'

/** A running relay; `url` is what a NATS client connects to. */
export interface ByteLimitedRelay {
  readonly url: string
  close(): Promise<void>
}

/** Relays `127.0.0.1:<port>` to `127.0.0.1:<targetPort>`, passing at most `limit` bytes from the server to each client. */
export async function startByteLimitedRelay(targetPort: number, limit: number): Promise<ByteLimitedRelay> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const target = connect(targetPort, '127.0.0.1')
    sockets.add(client).add(target)
    let passed = 0
    target.on('data', (chunk: Buffer) => {
      const room = limit - passed
      if (room <= 0) return
      passed += Math.min(room, chunk.length)
      client.write(chunk.length <= room ? chunk : chunk.subarray(0, room))
    })
    client.on('data', (chunk: Buffer) => void target.write(chunk))
    const end = (): void => {
      client.destroy()
      target.destroy()
    }
    client.on('close', end).on('error', end)
    target.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the relay has no port')
  return {
    url: `nats://127.0.0.1:${address.port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
