/**
 * docs/architecture.md lists the store's rooms file by file ("The store's
 * rooms"): the listing must name every source file under src/store/ and no
 * file that is not there, so the page stays true as files come and go.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { ROOT_DIR, importGraph } from './import-graph.js'

const page = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8')

/** The fenced block that starts with `store/`: each room's entry (a line and its continuation lines) and the files it names. */
function storeListing(): Set<string> {
  const start = page.indexOf('```\nstore/\n')
  const end = page.indexOf('```', start + 4)
  expect(start, 'docs/architecture.md has the store listing').toBeGreaterThanOrEqual(0)
  const entries: string[] = []
  for (const line of page.slice(start + 4, end).split('\n').slice(1)) {
    if (/^ {2}\S/.test(line)) entries.push(line)
    else if (entries.length > 0) entries[entries.length - 1] += ` ${line.trim()}`
  }
  const named = new Set<string>()
  for (const entry of entries) {
    const [, room = '', text = ''] = /^ {2}(\S+)\s+(.*)$/s.exec(entry) ?? []
    const directory = room.endsWith('/') ? room : ''
    if (room.endsWith('.ts')) named.add(`store/${room}`)
    // `watch/ (a.ts, b.ts)` names the files of a room's subdirectory.
    for (const [, sub, files = ''] of text.matchAll(/([a-z-]+)\/ \(([^)]*)\)/g)) {
      for (const [, file] of files.matchAll(/([a-z-]+\.ts)/g)) named.add(`store/${directory}${sub}/${file}`)
    }
    // A name after a slash is another directory's (keys/sublevels.ts), not this room's.
    for (const [, file] of text.replace(/([a-z-]+)\/ \(([^)]*)\)/g, '').matchAll(/(?<![\w/.-])([a-z-]+\.ts)\b/g)) {
      if (directory !== '') named.add(`store/${directory}${file}`)
    }
  }
  return named
}

describe('docs/architecture.md', () => {
  it('lists every file of src/store/, and only those', () => {
    const files = [...importGraph(ROOT_DIR).keys()].filter((file) => file.startsWith('store/'))
    const listed = storeListing()
    expect(files.filter((file) => !listed.has(file)), 'files the listing leaves out').toEqual([])
    expect([...listed].filter((file) => !files.includes(file)).sort(), 'names in the listing that are no file').toEqual([])
  })
})
