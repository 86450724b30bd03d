/**
 * The CLI's provider (issue 23, point 1): a database is opened as the provider it records when no provider
 * flag is given; an id other than the recorded or the default one needs its key (exit 2, never RedStone's key);
 * a mismatch names both providers briefly (ids, key fingerprints).
 */
import { createHash } from 'node:crypto'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { chooseProvider, DEFAULT_PROVIDER } from '../../src/cli/config.js'
import { PriceStore, REDSTONE_PROVIDER } from '../../src/index.js'
import { eachTempDb, ndjson, record, run, writeLines } from './helpers.js'

const OWN = { name: 'my-node', id: 'my-node-id', publicKey: 'my-node-public-key' }
const fingerprint = (key: string): string => createHash('sha256').update(key).digest('hex').slice(0, 8)

describe('chooseProvider', () => {
  it('takes each field as given, else the recorded provider, else RedStone', () => {
    expect(chooseProvider({}, undefined)).toEqual(REDSTONE_PROVIDER)
    expect(chooseProvider({}, OWN)).toEqual(OWN)
    expect(chooseProvider({ name: 'renamed' }, OWN)).toEqual({ ...OWN, name: 'renamed' })
    expect(chooseProvider({ id: OWN.id }, OWN)).toEqual(OWN)
    expect(chooseProvider({ aliases: ['x'] }, OWN)).toEqual({ ...OWN, aliases: ['x'] })
    // RedStone's own id still has its key without a store.
    expect(chooseProvider({ id: REDSTONE_PROVIDER.id }, undefined)).toEqual(REDSTONE_PROVIDER)
    // A key given pairs with the recorded id (the store then says whether it is its own).
    expect(chooseProvider({ publicKey: 'k' }, OWN)).toEqual({ ...OWN, publicKey: 'k' })
  })

  it('never pairs another id with a default key or name: the key is required, the name defaults to the id', () => {
    expect(() => chooseProvider({ id: 'other' }, undefined)).toThrow(/--provider-id "other" needs its --provider-public-key/)
    expect(() => chooseProvider({ id: 'other' }, OWN)).toThrow(/needs its --provider-public-key/)
    expect(chooseProvider({ id: 'other', publicKey: 'k' }, undefined)).toEqual({ name: 'other', id: 'other', publicKey: 'k' })
  })
})

describe('the CLI and the provider a database records', () => {
  let dir = ''
  let db = ''
  eachTempDb((tempDir, tempDb) => {
    dir = tempDir
    db = tempDb
  })
  const ownFlags = ['--provider-name', OWN.name, '--provider-id', OWN.id, '--provider-public-key', OWN.publicKey]

  it('a database made for another provider is opened as it by every later command without provider flags', async () => {
    const file = await writeLines(dir, 'own.ndjson', ndjson([record('BTC', 1_000, { provider: OWN.id }), record('BTC', 2_000, { provider: OWN.id })]))
    const imported = await run(['import', '--db', db, ...ownFlags, file])
    expect(imported.code, imported.stderr).toBe(0)
    expect(await PriceStore.storedProvider(db)).toEqual(OWN)

    const query = await run(['query', '--db', db, 'symbol=BTC'])
    expect(query.code, query.stderr).toBe(0)
    expect(JSON.parse(query.stdout)).toMatchObject([{ provider: OWN.id, providerPublicKey: OWN.publicKey, timestamp: 2_000 }])
    const stats = await run(['stats', '--db', db])
    expect(stats.code, stats.stderr).toBe(0)
    expect(stats.stdout).toContain(`provider   ${OWN.name}, id ${OWN.id}`)
    // Its own id alone is enough: the key is the recorded one.
    expect((await run(['query', '--db', db, '--provider-id', OWN.id, 'symbol=BTC'])).code).toBe(0)
  })

  it('a new database without flags is created for RedStone, as before', async () => {
    const file = await writeLines(dir, 'redstone.ndjson', ndjson([record('ETH', 1_000)]))
    const imported = await run(['import', '--db', db, file])
    expect(imported.code, imported.stderr).toBe(0)
    expect(await PriceStore.storedProvider(db)).toEqual(DEFAULT_PROVIDER)
  })

  it('--provider-id of another provider without its key: exit 2, and nothing is created', async () => {
    const file = await writeLines(dir, 'other.ndjson', ndjson([record('BTC', 1_000, { provider: 'other' })]))
    const { code, stderr } = await run(['import', '--db', db, '--provider-id', 'other', file])
    expect(code).toBe(2)
    expect(stderr).toContain('--provider-id "other" needs its --provider-public-key')
    expect(stderr).not.toContain(REDSTONE_PROVIDER.publicKey.slice(0, 40))
    expect(await stat(db).catch(() => undefined)).toBeUndefined()
  })

  it('a mismatch names both providers briefly: ids and key fingerprints, on one short line', async () => {
    const file = await writeLines(dir, 'redstone.ndjson', ndjson([record('ETH', 1_000)]))
    expect((await run(['import', '--db', db, file])).code).toBe(0)
    const { code, stderr } = await run(['query', '--db', db, '--provider-id', 'mine', '--provider-public-key', 'x'.repeat(600), 'symbol=ETH'])
    expect(code).toBe(1)
    expect(stderr).toContain(`provider id ${JSON.stringify(REDSTONE_PROVIDER.id)} with public key sha256:${fingerprint(REDSTONE_PROVIDER.publicKey)}`)
    expect(stderr).toContain(`given provider id "mine" with public key sha256:${fingerprint('x'.repeat(600))}; the id and public key differ`)
    expect(stderr).toContain('[PRICE_PROVIDER_MISMATCH]')
    expect(stderr.trimEnd().split('\n')).toHaveLength(1)
    // The 683-character keys are 15 characters each; the whole line is about 400 (it was over 600).
    expect(stderr.replace(db, 'DB').length).toBeLessThan(420)
  })

  it('explains a lock without blaming serve: any process may hold the database', async () => {
    const holder = await PriceStore.open(join(dir, 'held'), { provider: REDSTONE_PROVIDER })
    try {
      const { code, stderr } = await run(['query', '--db', join(dir, 'held'), 'symbol=BTC'])
      expect(code).toBe(1)
      expect(stderr).toContain('is in use by another process (e.g. "price-store serve", an import or another command on it)')
      expect(stderr).toContain('if it is a server, ask it over HTTP: GET /prices takes the same parameters')
      expect(stderr).toContain('[PRICE_LOCKED]')
    } finally {
      await holder.close()
    }
  })
})
