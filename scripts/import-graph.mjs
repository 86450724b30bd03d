#!/usr/bin/env node
// Prints every import cycle among src/ files (runtime and type-only imports
// alike) and exits 1 when there is one. `node scripts/import-graph.mjs`.
// test/architecture/imports.test.ts runs the same graph through its checks.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const IMPORT = /^\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm

/** Every .ts file under `root`, relative to it, with the relative files it imports (and whether only types). */
export function importGraph(root) {
  const files = walk(root).filter((f) => f.endsWith('.ts'))
  const graph = new Map()
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8')
    const edges = []
    for (const match of text.matchAll(IMPORT)) {
      const target = relative(root, resolve(root, dirname(file), match[2])).replace(/\.js$/, '.ts')
      edges.push({ target, typeOnly: match[1] !== undefined || /^\s*(?:import|export)\s+type\s*\{/.test(match[0]) })
    }
    graph.set(file, edges)
  }
  return graph
}

/** The strongly connected components of more than one file (or a file importing itself): each is a cycle. */
export function cycles(graph) {
  let index = 0
  const indices = new Map(), low = new Map(), stack = [], onStack = new Set(), found = []
  const visit = (node) => {
    indices.set(node, index); low.set(node, index); index++
    stack.push(node); onStack.add(node)
    for (const { target } of graph.get(node) ?? []) {
      if (!graph.has(target)) continue
      if (!indices.has(target)) { visit(target); low.set(node, Math.min(low.get(node), low.get(target))) }
      else if (onStack.has(target)) low.set(node, Math.min(low.get(node), indices.get(target)))
    }
    if (low.get(node) === indices.get(node)) {
      const component = []
      let member
      do { member = stack.pop(); onStack.delete(member); component.push(member) } while (member !== node)
      const selfLoop = (graph.get(node) ?? []).some((e) => e.target === node)
      if (component.length > 1 || selfLoop) found.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!indices.has(node)) visit(node)
  return found
}

function walk(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    return entry.isDirectory() ? walk(path, base) : [relative(base, path)]
  })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'src')
  const found = cycles(importGraph(root))
  for (const cycle of found) console.log(`cycle: ${cycle.join(' -> ')}`)
  console.log(found.length === 0 ? 'no import cycles in src/' : `${found.length} import cycle(s) in src/`)
  process.exitCode = found.length === 0 ? 0 : 1
}
