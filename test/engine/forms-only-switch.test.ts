/**
 * The FORMS table (src/engine/forms/index.ts) is the engine's only switch on
 * a query's kind: outside src/engine/forms/, no engine file switches on a
 * `kind`, compares a `kind` with a string, or has a `case` for a form's
 * kind. Field selection, cursor paging and the parser's cursor rule read a
 * form's row instead. Read with TypeScript's own parser, so comments and
 * strings that mention a kind do not count and every spelling
 * (`query.kind`, `position?.kind`, a local `kind`) does.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { FORMS } from '../../src/engine/forms/index.js'

const ENGINE = join(dirname(new URL(import.meta.url).pathname), '..', '..', 'src', 'engine')
const FORMS_DIR = join(ENGINE, 'forms')
const FORM_KINDS: ReadonlySet<string> = new Set(Object.keys(FORMS))

/**
 * The `kind` comparisons allowed outside forms/, each with its reason: a
 * receiver's name and the strings it may be compared with.
 */
const ALLOWED: readonly { readonly receiver: string; readonly literals: readonly string[]; readonly why: string }[] = [
  {
    receiver: 'position',
    literals: ['record', 'time', 'bucket'],
    why: "a cursor's position (cursor.ts, PagePosition) has its own discriminant: where a page ends, not a query's form",
  },
]

function engineFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return path === FORMS_DIR ? [] : engineFiles(path)
    return entry.name.endsWith('.ts') ? [path] : []
  })
}

/** `x.kind`, `x?.kind` or a bare `kind`: the receiver's text (`''` for a bare one), else undefined. */
function kindAccess(node: ts.Node, file: ts.SourceFile): string | undefined {
  if (ts.isParenthesizedExpression(node)) return kindAccess(node.expression, file)
  if (ts.isIdentifier(node)) return node.text === 'kind' ? '' : undefined
  if (ts.isPropertyAccessExpression(node) && node.name.text === 'kind') return node.expression.getText(file)
  return undefined
}

function stringLiteral(node: ts.Node): string | undefined {
  if (ts.isParenthesizedExpression(node)) return stringLiteral(node.expression)
  return ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : undefined
}

const EQUALITY = new Set([ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken])

/** Every switch on a kind, `case` of a form's kind, or comparison of a kind with a string not allowed above, as `line: text`. */
function kindSwitches(name: string, text: string): string[] {
  const file = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const report = (node: ts.Node): void => {
    found.push(`${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}: ${node.getText(file).split('\n')[0]}`)
  }
  const visit = (node: ts.Node): void => {
    if (ts.isSwitchStatement(node) && kindAccess(node.expression, file) !== undefined) report(node)
    if (ts.isCaseClause(node) && FORM_KINDS.has(stringLiteral(node.expression) ?? '')) report(node)
    if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind)) {
      for (const [side, other] of [[node.left, node.right], [node.right, node.left]] as const) {
        const receiver = kindAccess(side, file)
        const literal = stringLiteral(other)
        if (receiver === undefined || literal === undefined) continue
        if (!ALLOWED.some((allowed) => allowed.receiver === receiver && allowed.literals.includes(literal))) report(node)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

describe('the FORMS table is the engine\'s only switch on kind', () => {
  it('finds the spellings it forbids (and lets a position\'s kind be)', () => {
    const source = `
      switch (query.kind) { case 'latest': break }
      switch (form) { case 'range': case 'filled': break }
      if (cross.kind === 'crossRange' || (query.kind) !== 'latest') {}
      const kind = plan.query.kind
      if (kind === 'several') {}
      if (query.kind === 'record') {}
      if (position?.kind === 'record' || position.kind !== 'bucket') {}
    `
    expect(kindSwitches('sample.ts', source)).toEqual([
      "2: switch (query.kind) { case 'latest': break }",
      "2: case 'latest': break",
      "3: case 'range':",
      "4: cross.kind === 'crossRange'",
      "4: (query.kind) !== 'latest'",
      "6: kind === 'several'",
      "7: query.kind === 'record'",
    ])
  })

  it('has none in src/engine outside forms/', () => {
    const files = engineFiles(ENGINE)
    expect(files.length).toBeGreaterThan(20)
    const found = files.flatMap((path) => kindSwitches(path, readFileSync(path, 'utf8')).map((hit) => `${relative(ENGINE, path)}:${hit}`))
    expect(found).toEqual([])
  })

  it('is what field selection, cursor paging and the parser\'s cursor rule read', () => {
    for (const name of ['field-selection.ts', 'cursor-page.ts', 'parse-query.ts']) {
      expect(readFileSync(join(ENGINE, name), 'utf8'), name).toMatch(/from '\.\/forms\/index\.js'/)
    }
  })

  it('says which forms page, and by what', () => {
    const paging = Object.fromEntries(Object.entries(FORMS).map(([kind, form]) => [kind, form.paging?.resumesAfter ?? 'none']))
    expect(paging).toEqual({
      latest: 'record', several: 'none', range: 'bucket', candles: 'bucket', twap: 'none',
      cross: 'none', crossRange: 'bucket', crossCandles: 'bucket', crossTwap: 'none',
    })
    const selects = Object.entries(FORMS).filter(([, form]) => form.selectFields !== undefined).map(([kind]) => kind)
    expect(selects).toEqual(['latest', 'several', 'range', 'candles', 'twap'])
  })
})
