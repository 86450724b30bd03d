// The published tarball, as `npm pack` would make it: it ships the LICENSE
// and every file the README links to (the docs), so no link in the README on
// npm is broken. Run by `npm run check:package` after the build.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' }))
const shipped = new Set(pack.files.map((file) => file.path))
const problems = []
const entries = ['index', 'engine', 'trust', 'http', 'cluster', 'client', 'testing'].flatMap((name) => [`dist/${name}.js`, `dist/${name}.cjs`, `dist/${name}.d.ts`, `dist/${name}.d.cts`])
for (const required of ['LICENSE', 'README.md', 'package.json', ...entries, 'dist/cli.js', 'dist/page/chart.js']) {
  if (!shipped.has(required)) problems.push(`${required} is not in the tarball`)
}
// The build makes no source maps: a map in the tarball would be a build that makes them again.
for (const file of shipped) if (file.endsWith('.map')) problems.push(`${file}: a source map ships`)
// Relative links of the README: [text](path) or [text](path#anchor), not URLs.
const readme = readFileSync('README.md', 'utf8')
for (const [, target] of readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
  if (/^[a-z]+:/i.test(target)) continue
  if (!shipped.has(target.replace(/^\.\//, ''))) problems.push(`README links ${target}, which is not in the tarball`)
}
if (problems.length > 0) {
  console.error(`check-package: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(`check-package: ${shipped.size} files, ${(pack.size / 2 ** 20).toFixed(2)} MiB packed; LICENSE and all ${readme.match(/\]\((?![a-z]+:)/gi)?.length ?? 0} README links ship`)
