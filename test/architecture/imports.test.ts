/**
 * The house plan of docs/architecture.md, checked on the imports themselves
 * so the sentences there stay true: no import cycle anywhere in src/, imports
 * pointing one way between the layers, and the rooms that own a piece of the
 * store (sublevel names, the heads index) owning it alone. A failure names
 * the file and the import.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT_DIR, importCycles, importGraph, layerOf } from './import-graph.js'

const graph = importGraph(ROOT_DIR)

/**
 * What each layer may import (besides itself). The direction of
 * docs/architecture.md: types/errors <- rules <- engine, records <- keys <-
 * store <- adapters, cluster, cli; the published testing helpers share no code with
 * the engine or the store on purpose (they are the oracle).
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  types: [],
  errors: ['types'],
  rules: ['types', 'errors'],
  engine: ['types', 'errors', 'rules'],
  records: ['types', 'errors', 'rules'],
  trust: ['types', 'errors', 'rules', 'records'],
  keys: ['types', 'errors', 'rules', 'records', 'trust'],
  store: ['types', 'errors', 'rules', 'engine', 'records', 'trust', 'keys'],
  'adapters/http': ['types', 'errors', 'rules', 'engine', 'store', 'cluster'],
  cluster: ['types', 'errors', 'rules', 'records', 'trust', 'keys', 'store'],
  demo: ['types', 'trust'],
  testing: ['types', 'errors'],
  // The client talks to nodes over the wire only: record types, no code of the store, the engine or the adapter.
  client: ['types'],
  page: [],
  cli: ['types', 'errors', 'rules', 'engine', 'records', 'trust', 'keys', 'store', 'adapters/http', 'cluster', 'demo', 'index.ts', 'http.ts'],
  // The package's entries re-export; each reaches only the rooms it publishes.
  'index.ts': ['types', 'errors', 'engine', 'store'],
  'engine.ts': ['types', 'engine'],
  'trust.ts': ['trust', 'store'],
  'http.ts': ['types', 'errors', 'rules', 'engine', 'store', 'adapters/http'],
  'cluster.ts': ['cluster'],
  'client.ts': ['client'],
}

function edges(): { file: string; target: string; typeOnly: boolean; names: readonly string[] }[] {
  return [...graph].flatMap(([file, list]) => list.map((edge) => ({ file, ...edge })))
}

describe('the import graph of src/', () => {
  it('is read from every source file', () => {
    expect(graph.size).toBeGreaterThan(150)
    expect(graph.get('store/price-store.ts')?.length).toBeGreaterThan(5)
    // Every import resolves to a file that exists: a stale path would hide an edge.
    const missing = edges().filter((edge) => !graph.has(edge.target)).map((edge) => `${edge.file} -> ${edge.target}`)
    expect(missing).toEqual([])
  })

  it('has no import cycle (type-only imports included)', () => {
    expect(importCycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([])
  })

  it('knows the layer of every file', () => {
    const unknown = [...graph.keys()].filter((file) => MAY_IMPORT[layerOf(file)] === undefined)
    expect(unknown).toEqual([])
  })

  it('points one way between layers', () => {
    const wrong = edges()
      .filter(({ file, target }) => layerOf(file) !== layerOf(target) && !(MAY_IMPORT[layerOf(file)] ?? []).includes(layerOf(target)))
      .map(({ file, target }) => `${file} -> ${target}`)
    expect(wrong).toEqual([])
  })

  it('lets the HTTP adapter take types from store/ and cluster/, and no values', () => {
    const values = edges()
      .filter(({ file, target, typeOnly }) => layerOf(file) === 'adapters/http' && ['store', 'cluster'].includes(layerOf(target)) && !typeOnly)
      .map(({ file, target }) => `${file} -> ${target}`)
    expect(values).toEqual([])
  })

  it('keeps the rooms of the HTTP adapter in order: sending below admission below the endpoints below routing', () => {
    // The rooms each room may take values from (types may cross freely, but core/ takes nothing, not even types).
    const ROOMS: Record<string, readonly string[]> = {
      core: [],
      // Read keys: who a request's reader is, and what it may see; the endpoints keep each reader to it.
      access: ['core'],
      admission: ['core'],
      capabilities: ['core'],
      prices: ['core', 'access', 'admission', 'capabilities'],
      udf: ['core', 'admission', 'capabilities', 'prices'],
      observe: ['core', 'admission', 'capabilities'],
      live: ['core', 'access', 'capabilities'],
      routes: ['core'],
      'route-table': ['core', 'access', 'prices', 'udf', 'live', 'routes'],
      handler: ['core', 'access', 'admission', 'capabilities', 'observe', 'live', 'routes', 'route-table'],
      ws: ['core', 'access', 'capabilities', 'live', 'routes'],
      node: ['core', 'admission', 'capabilities', 'prices', 'handler', 'routes', 'route-table', 'ws'],
    }
    const roomOf = (file: string): string => (file.split('/')[2] as string).replace(/\.ts$/, '')
    const http = edges().filter(({ file, target }) => file.startsWith('adapters/http/') && target.startsWith('adapters/http/') && roomOf(file) !== roomOf(target))
    expect(Object.keys(ROOMS).sort()).toEqual([...new Set([...graph.keys()].filter((file) => file.startsWith('adapters/http/')).map(roomOf))].sort())
    const wrong = http
      .filter(({ file, target, typeOnly }) => (roomOf(file) === 'core' || !typeOnly) && !(ROOMS[roomOf(file)] ?? []).includes(roomOf(target)))
      .map(({ file, target }) => `${file} -> ${target}`)
    expect(wrong).toEqual([])
  })
})

describe('the rooms of the store', () => {
  const source = (file: string): string => readFileSync(join(ROOT_DIR, file), 'utf8')

  it('names its sublevels in keys/ only: nothing else calls sublevel() with a name of its own', () => {
    const naming = [...graph.keys()].filter((file) => !file.startsWith('keys/') && /\.sublevel\s*(<[^>]*>)?\(\s*['"`]/.test(source(file)))
    expect(naming).toEqual([])
    const users = edges().filter(({ target }) => target === 'keys/sublevels.ts').map(({ file }) => file)
    expect(users).toEqual(['store/db/sublevels.ts'])
  })

  it('names its meta keys and checks format versions in keys/ only', () => {
    // String literals only: comments name the keys in backticks.
    const META_NAMES = /['"](format|provider|journal-floor|cursor-secret|commit-id)['"]\s*(as never|,\s*TEXT|\))/
    const metaNaming = [...graph.keys()].filter((file) => !file.startsWith('keys/') && /['"](journal-floor|cursor-secret)['"]/.test(source(file)))
    expect(metaNaming).toEqual([])
    const metaReads = [...graph.keys()].filter((file) => file.startsWith('store/') && /meta\.(get|put|del|getMany)\(/.test(source(file)) && META_NAMES.test(source(file)))
    expect(metaReads).toEqual([])
    // Value versions are read by the codecs of keys/ (readFormatVersion), the database's by checkStoreFormat there.
    const versionChecks = edges().filter(({ file, names }) => !file.startsWith('keys/') && names.includes('readFormatVersion')).map(({ file }) => file)
    expect(versionChecks).toEqual([])
    const formatCompared = [...graph.keys()].filter((file) => !file.startsWith('keys/') && /[=!]==?\s*String\(STORE_FORMAT\)|String\(STORE_FORMAT\)\s*[=!]==?/.test(source(file)))
    expect(formatCompared).toEqual([])
  })

  it('reads and writes the heads index in store/heads/ only', () => {
    const HEADS_NAMES = new Set(['headsKey', 'headsRange', 'readHeadsPeriod', 'readHeadsSymbol', 'describeHeads'])
    const outside = edges()
      .filter(({ file }) => !file.startsWith('store/heads/') && !file.startsWith('keys/'))
      .filter(({ target, names }) => target === 'keys/heads-codec.ts' || (target === 'keys/key-layout.ts' && names.some((name) => HEADS_NAMES.has(name))))
      .map(({ file, target }) => `${file} -> ${target}`)
    expect(outside).toEqual([])
    // The heads sublevel itself is handed to the HeadsIndex where the rooms are built, and used nowhere else.
    const touching = [...graph.keys()].filter((file) => !file.startsWith('store/heads/') && /\b(levels|prefixes)\.heads\b/.test(source(file)))
    expect(touching).toEqual(['store/lifecycle/store-parts.ts'])
  })
})

describe('the chunk room', () => {
  const source = (file: string): string => readFileSync(join(ROOT_DIR, file), 'utf8')
  const outsideChunks = (file: string): boolean => !file.startsWith('store/chunks/') && !file.startsWith('keys/')

  it('reads chunk bytes and chunk keys in store/chunks/ only', () => {
    // The chunk codec's readers, the key-column reader, and what names or parses a chunk part's key.
    const READERS = new Set(['parseChunkPart', 'readCompactId', 'checkKeyColumn', 'readPartCount', 'readPartRecordCount', 'COLUMN_FIELDS'])
    const KEY_NAMES = new Set(['chunkKey', 'readChunkKey', 'readChunkPeriod', 'chunkPeriodStart', 'describeChunk', 'KEYS_PART', 'DELTA_PART'])
    const outside = edges()
      .filter(({ file }) => outsideChunks(file))
      .filter(({ target, names }) =>
        target === 'keys/key-column-series.ts' ||
        (target === 'keys/chunk-codec.ts' && names.some((name) => READERS.has(name))) ||
        (target === 'keys/key-layout.ts' && names.some((name) => KEY_NAMES.has(name))))
      .map(({ file, target }) => `${file} -> ${target}`)
    expect(outside).toEqual([])
    // The lists over stored parts are built inside the room only.
    const building = [...graph.keys()].filter((file) => outsideChunks(file) && /new (SealedChunk|PagedIndex|PagedChunk|PageTableChunk|DeltaOverPages)\b/.test(source(file)))
    expect(building).toEqual([])
    // The chunks sublevel reaches the room where the store is put together and opened, and whole-store copies (backup), nowhere else.
    const touching = [...graph.keys()].filter((file) => outsideChunks(file) && /\blevels\.chunks\b|\bchunks: levels\b/.test(source(file)))
    expect(touching.sort()).toEqual(['store/lifecycle/open-close.ts', 'store/lifecycle/store-parts.ts'])
  })

  it('sits below the read room: rows/, chunks/, heads/, write/ and upkeep/ import nothing from read/', () => {
    const LOW = ['store/rows/', 'store/chunks/', 'store/heads/', 'store/write/', 'store/upkeep/']
    const upward = edges()
      .filter(({ file, target }) => LOW.some((room) => file.startsWith(room)) && target.startsWith('store/read/'))
      .map(({ file, target }) => `${file} -> ${target}`)
    expect(upward).toEqual([])
  })

  it('keeps rows/ at the bottom of the store and heads/ below chunks/', () => {
    const rows = edges().filter(({ file, target }) => file.startsWith('store/rows/') && target.startsWith('store/') && !target.startsWith('store/rows/'))
    expect(rows.map(({ file, target }) => `${file} -> ${target}`)).toEqual([])
    const heads = edges().filter(({ file, target }) => file.startsWith('store/heads/') && target.startsWith('store/chunks/'))
    expect(heads.map(({ file, target }) => `${file} -> ${target}`)).toEqual([])
  })
})

describe('the size of files', () => {
  it('keeps every source file under 450 lines, and the PriceStore façade (one delegating member per capability) at most 400 lines', () => {
    const lines = (file: string): number => readFileSync(join(ROOT_DIR, file), 'utf8').split('\n').length - 1
    const long = [...graph.keys()].filter((file) => lines(file) > 450).map((file) => `${file}: ${lines(file)}`)
    expect(long).toEqual([])
    expect(lines('store/price-store.ts')).toBeLessThanOrEqual(400)
  })
})
