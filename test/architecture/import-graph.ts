/**
 * The import graph of src/, read from the sources themselves: every relative
 * `import`/`export ... from` of every .ts file, with whether it brings types
 * only. test/architecture/imports.test.ts checks the layer rules and the
 * absence of cycles on it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, posix, relative, sep } from 'node:path'

/** One import of a file: the file it names (relative to the root, `.ts`) and whether it brings types only. */
export interface ImportEdge {
  readonly target: string
  readonly typeOnly: boolean
  /** The names it brings, when it lists them (`import { a, type b } from`). */
  readonly names: readonly string[]
}

// `import ... from './x.js'`, `export ... from './x.js'`, `import './x.js'`, over several lines.
const IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm

/** Every .ts file under `root` (paths relative to it, with `/`) mapped to its relative imports. */
export function importGraph(root: string): Map<string, readonly ImportEdge[]> {
  const graph = new Map<string, readonly ImportEdge[]>()
  for (const file of sourceFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8')
    const edges: ImportEdge[] = []
    for (const match of text.matchAll(IMPORT)) {
      const clause = match[3] ?? ''
      const names = [...clause.matchAll(/(type\s+)?([A-Za-z_$][\w$]*)(?:\s+as\s+[\w$]+)?\s*[,}]/g)].map((m) => ({ name: m[2] as string, type: m[1] !== undefined }))
      const target = posix.normalize(posix.join(posix.dirname(file), match[4] as string)).replace(/\.js$/, '.ts')
      // `import type {...}`, or `import { type a, type b }` (verbatimModuleSyntax erases both); a bare `import './x.js'` runs the file.
      const typeOnly = match[2] !== undefined || (names.length > 0 && names.every((n) => n.type) && !clause.includes('*'))
      edges.push({ target, typeOnly, names: names.map((n) => n.name) })
    }
    graph.set(file, edges)
  }
  return graph
}

/** The cycles of `graph`: its strongly connected components of more than one file, or a file importing itself (Tarjan). */
export function importCycles(graph: ReadonlyMap<string, readonly ImportEdge[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (node: string): void => {
    index.set(node, next)
    low.set(node, next)
    next++
    stack.push(node)
    onStack.add(node)
    for (const { target } of graph.get(node) ?? []) {
      if (!graph.has(target)) continue
      if (!index.has(target)) {
        visit(target)
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number))
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) as number, index.get(target) as number))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop() as string
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || (graph.get(node) ?? []).some((edge) => edge.target === node)) found.push(component.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

function sourceFiles(root: string): string[] {
  return (readdirSync(root, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .map((file) => relative(root, join(root, file)).split(sep).join('/'))
    .sort()
}

/** The folder a file belongs to for the layer rules: its first path segment (`adapters/http` for the adapter), or the file for the root ones. */
export function layerOf(file: string): string {
  const parts = file.split('/')
  if (parts[0] === 'adapters') return parts.slice(0, 2).join('/')
  if (parts.length > 1) return parts[0] as string
  // A file at the root is a layer of its own: types.ts and errors.ts by their names, a package entry
  // (index.ts, http.ts, engine.ts, ...) by its file name, apart from the directory it re-exports.
  return file === 'types.ts' || file === 'errors.ts' ? file.replace(/\.ts$/, '') : file
}

export const ROOT_DIR = join(dirname(new URL(import.meta.url).pathname), '..', '..', 'src')
