/**
 * The public surface: `price-store` holds what a host of the store needs,
 * at most 70 names, types included; the pure engine is `price-store/engine`,
 * signature verdicts and options `price-store/trust`, the HTTP adapter
 * `price-store/http`; the machinery behind them stays internal. The names
 * are read from the entry files' export lists (TypeScript's parser, so type
 * exports count too) and checked against what the modules really export.
 */
import { readFileSync } from 'node:fs'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import * as root from '../../src/index.js'
import * as http from '../../src/http.js'
import * as engine from '../../src/engine.js'
import * as trust from '../../src/trust.js'

interface Exported {
  readonly name: string
  readonly typeOnly: boolean
}

/** Every name an entry file exports; `export *` is refused, since it would hide names from the count. */
function exportsOf(path: string): Exported[] {
  const file = new URL(`../../src/${path}`, import.meta.url)
  const source = ts.createSourceFile(path, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  return source.statements.flatMap((statement) => {
    if (ts.isExportDeclaration(statement)) {
      const clause = statement.exportClause
      if (clause === undefined || !ts.isNamedExports(clause)) throw new Error(`${path}: export * hides names from the count`)
      return clause.elements.map((element) => ({ name: element.name.text, typeOnly: statement.isTypeOnly || element.isTypeOnly }))
    }
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    if (exported) throw new Error(`${path}: an entry file re-exports, it declares nothing`)
    return []
  })
}

const rootNames = exportsOf('index.ts')
const httpNames = exportsOf('http.ts')
const engineNames = exportsOf('engine.ts')
const trustNames = exportsOf('trust.ts')
const valuesOf = (names: readonly Exported[]): string[] => names.filter((n) => !n.typeOnly).map((n) => n.name).sort()

/** The plumbing between the store and the adapter: in no entry. */
const INTERNAL = [
  'QueryGate', 'GateRequest', 'StreamedBody', 'DeferredAnswer', 'DeferredItem', 'READ_COST', 'executePlanDeferred',
  'planRequest', 'answerPlanned', 'PlannedRequest', 'answerToJsonInSlices', 'LIGHT_QUERY_RECORDS', 'minuteOfHour',
]

describe('the public surface', () => {
  it('price-store exports at most 70 names, types included', () => {
    expect(rootNames.length).toBeGreaterThan(40)
    expect(rootNames.length).toBeLessThanOrEqual(70)
  })

  it('counts what the modules really export (the values; types leave no trace at run time)', () => {
    expect(Object.keys(root).sort()).toEqual(valuesOf(rootNames))
    expect(Object.keys(http).sort()).toEqual(valuesOf(httpNames))
    expect(Object.keys(engine).sort()).toEqual(valuesOf(engineNames))
    expect(Object.keys(trust).sort()).toEqual(valuesOf(trustNames))
  })

  it('gives each name of the root, the engine and trust one home', () => {
    const all = [...rootNames, ...engineNames, ...trustNames].map((n) => n.name)
    expect(all.filter((name, i) => all.indexOf(name) !== i)).toEqual([])
    expect(engineNames.map((n) => n.name)).toEqual(expect.arrayContaining(['parseQuery', 'planQuery', 'executeQuery', 'ScanSource']))
    expect(trustNames.map((n) => n.name)).toEqual(expect.arrayContaining(['verifyRecord', 'SignatureVerifier', 'SignatureOptions']))
  })

  it('gives each name one home: the HTTP adapter lives in price-store/http only', () => {
    const inRoot = new Set(rootNames.map((n) => n.name))
    expect(httpNames.map((n) => n.name).filter((name) => inRoot.has(name))).toEqual([])
    expect(httpNames.map((n) => n.name)).toEqual(expect.arrayContaining(['createPricesHandler', 'createPricesListener', 'startServer', 'answerPrices', 'answerUdf']))
    expect([...inRoot].filter((name) => /Prices(Handler|Listener)|Server|^answer|Udf|Http/.test(name))).toEqual([])
  })

  it('keeps the internals internal', () => {
    const exported = [...rootNames, ...httpNames, ...engineNames, ...trustNames].map((n) => n.name)
    expect(INTERNAL.filter((name) => exported.includes(name))).toEqual([])
  })
})
