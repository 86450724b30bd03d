#!/usr/bin/env node
// Adds lockfile entries for platform-specific optional packages that npm left
// out (npm/cli#4828: npm only locks the optional binaries it can resolve, and
// the registry this project installs from lacks some other platforms'
// versions). npm 11's `npm ci` refuses a lockfile without them. Each stub
// names the exact version its parent pins and the os/cpu/libc it is for, so
// npm skips it on every other platform and never needs to fetch it here.
// Run after any `npm install` that changes the lockfile: node .ci/complete-lockfile.mjs
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

const lockPath = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(lockPath, 'utf8'))
const packages = lock.packages
let added = 0

for (const [path, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const hoisted = `node_modules/${name}`
    const nested = `${path}/node_modules/${name}`
    if (packages[hoisted] !== undefined || packages[nested] !== undefined) continue
    if (!/^\d+\.\d+\.\d+$/.test(spec)) throw new Error(`${path} wants ${name}@${spec}: not an exact version, resolve it by hand`)
    packages[hoisted] = { version: spec, ...platformOf(name), dev: entry.dev, optional: true }
    if (packages[hoisted].dev === undefined) delete packages[hoisted].dev
    added++
  }
}

lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)))
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`complete-lockfile: ${added} platform stub(s) added`)

/** os/cpu/libc of a platform package, from any version the registry has. */
function platformOf(name) {
  const raw = execFileSync('npm', ['view', name, 'os', 'cpu', 'libc', '--json'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  const fields = JSON.parse(raw || '{}')
  const out = {}
  for (const key of ['cpu', 'os', 'libc']) if (fields[key] !== undefined) out[key] = [fields[key]].flat()
  if (out.os === undefined || out.cpu === undefined) throw new Error(`no os/cpu known for ${name}`)
  return out
}
