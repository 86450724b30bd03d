/**
 * The three hosts of docs/http.md ("Embedding the adapter in your own
 * server"), as the docs show them: each region between `docs:NAME` and
 * `/docs:NAME` stands in the docs word for word (embedding.test.ts checks),
 * and the tests serve through these functions.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import Fastify from 'fastify'
import { createPricesHandler, type PricesHandler, type PricesHandlerOptions, type PricesQueryable } from '../../src/http.js'

/** A host listening on 127.0.0.1, with the handler it mounted. */
export interface Host {
  readonly url: string
  readonly prices: PricesHandler
  close(): Promise<void>
}

/** Express 5, the handler carrying its own prefix: `app.use(prices)`. */
export async function expressHost(store: PricesQueryable, limits: PricesHandlerOptions = {}): Promise<Host> {
  // docs:express
  const app = express()
  const prices = createPricesHandler(store, { basePath: '/v1', ...limits })
  app.use(prices) // /v1/prices and /v1/udf/*; every other path goes on to the next route
  app.get('/health', (_req, res) => {
    res.send('ok')
  })
  // /docs:express
  return listening(createServer(app), prices)
}

/** Express 5 mounting at a path: Express cuts `/v1` out of `req.url`, so the handler needs no prefix. */
export async function expressMountedHost(store: PricesQueryable, limits: PricesHandlerOptions = {}): Promise<Host> {
  // docs:express-mounted
  const app = express()
  const prices = createPricesHandler(store, limits)
  app.use('/v1', prices) // /v1/prices: Express hands the handler `/prices` in req.url
  // /docs:express-mounted
  return listening(createServer(app), prices)
}

/** Fastify 5: one wildcard route under the prefix hands Node's own request and response to the handler. */
export async function fastifyHost(store: PricesQueryable, limits: PricesHandlerOptions = {}): Promise<Host> {
  // docs:fastify
  const app = Fastify()
  const prices = createPricesHandler(store, { basePath: '/v1', ...limits })
  app.all('/v1/*', (request, reply) => {
    reply.hijack() // the handler writes the answer itself
    prices(request.raw, reply.raw)
  })
  app.get('/health', async () => 'ok')
  // /docs:fastify
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    prices,
    close: async () => {
      app.server.closeAllConnections()
      await app.close()
    },
  }
}

/** Plain `node:http`, with the handler first and the host's own answers after it. */
export async function nodeHost(store: PricesQueryable, limits: PricesHandlerOptions = {}): Promise<Host> {
  // docs:node
  const prices = createPricesHandler(store, { basePath: '/v1', ...limits })
  const server = createServer((req, res) => {
    prices(req, res, () => {
      if (req.url === '/health') res.end('ok')
      else res.writeHead(404).end()
    })
  })
  // /docs:node
  return listening(server, prices)
}

async function listening(server: Server, prices: PricesHandler): Promise<Host> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    prices,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()))
        server.closeAllConnections()
      }),
  }
}
