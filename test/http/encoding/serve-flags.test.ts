/** `serve --cors` and `serve --no-compression` (issue 23), through the CLI. */
import { describe, expect, it } from 'vitest'
import { demoDbForFile, run, startServe } from '../../cli/helpers.js'
import { rawRequest } from './http-exchange.js'

let db: string
demoDbForFile((_dir, newDb) => {
  db = newDb
})

describe('price-store serve: compression and CORS flags', () => {
  it('by default: answers compressed on request, no CORS', async () => {
    const { memory, exit, endpoint } = await startServe(['--db', db])
    try {
      const answer = await rawRequest(`${endpoint}?symbol=BTC&limit=5`, { 'accept-encoding': 'br', origin: 'https://app.example' })
      expect(answer.headers['content-encoding']).toBe('br')
      expect(answer.headers['access-control-allow-origin']).toBeUndefined()
    } finally {
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    }
  })

  it('--no-compression --cors ORIGINS: answers as they are, readable by the origins listed', async () => {
    const { memory, exit, endpoint } = await startServe(['--db', db, '--no-compression', '--cors', 'https://app.example, http://localhost:5173'])
    try {
      const answer = await rawRequest(`${endpoint}?symbol=BTC&limit=5`, { 'accept-encoding': 'br', origin: 'http://localhost:5173' })
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(answer.headers['access-control-allow-origin']).toBe('http://localhost:5173')
      const preflight = await rawRequest(`${endpoint}?symbol=BTC`, { origin: 'https://app.example', 'access-control-request-method': 'GET' }, 'OPTIONS')
      expect(preflight.status).toBe(204)
      expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example')
    } finally {
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    }
  })

  it("--cors '*'; a bad --cors is exit 2 naming the flag; help lists both flags", async () => {
    const { memory, exit, endpoint } = await startServe(['--db', db, '--cors', '*'])
    try {
      expect((await rawRequest(`${endpoint}?symbol=BTC`, { origin: 'https://any.example' })).headers['access-control-allow-origin']).toBe('*')
    } finally {
      memory.signal('SIGINT')
      expect(await exit).toBe(0)
    }
    for (const value of ['', 'app.example', 'https://app.example/path']) {
      const bad = await run(['serve', '--db', db, '--port', '0', '--cors', value])
      expect(bad.code, value).toBe(2)
      expect(bad.stderr, value).toContain('--cors')
    }
    const help = await run(['serve', '--help'])
    expect(help.stdout).toMatch(/--no-compression/)
    expect(help.stdout).toMatch(/--cors ORIGINS/)
  })
})
