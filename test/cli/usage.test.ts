import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { run } from './helpers.js'

const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }

describe('price-store --version', () => {
  it.each([['--version'], ['-v']])('%s prints the package version and exits 0', async (flag) => {
    expect(await run([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
  })
})

describe('price-store with no command', () => {
  it('prints the whole help, to standard error with exit 2 (a usage error: a script\'s empty variable must not pass)', async () => {
    const none = await run([])
    const help = await run(['--help'])
    expect(help.code).toBe(0)
    expect(none).toEqual({ code: 2, stdout: '', stderr: help.stdout })
    expect(none.stderr).toContain('Usage: price-store COMMAND [options]')
    expect(none.stderr).toContain('PRICE_STORE_DB')
  })
})

describe('wrong arguments: one line in the CLI\'s own words, exit 2', () => {
  it.each([
    [['serve', '--prot', '9000'], 'price-store serve: unknown option --prot (did you mean --port?); see "price-store serve --help"\n'],
    [['--bogus'], 'price-store: unknown option --bogus; see "price-store --help"\n'],
    [['import', '-x', 'a.ndjson'], 'price-store import: unknown option -x; see "price-store import --help"\n'],
    [['serve', '--port'], 'price-store serve: option --port needs a value; see "price-store serve --help"\n'],
    [['serve', '--port', '--host', 'x'], 'price-store serve: option --port needs a value (got the option --host; write --port=VALUE for a value that starts with "-"); see "price-store serve --help"\n'],
    [['serve', '--help=yes'], 'price-store serve: option --help takes no value; see "price-store serve --help"\n'],
    [['serve', 'extra'], 'price-store serve: unexpected argument "extra" (this command takes options only); see "price-store serve --help"\n'],
    [['frobnicate'], 'price-store: unknown command "frobnicate"; see "price-store --help"\n'],
    [['serv'], 'price-store: unknown command "serv"; did you mean "serve"?; see "price-store --help"\n'],
    [['imprt', 'a.ndjson'], 'price-store: unknown command "imprt"; did you mean "import"?; see "price-store --help"\n'],
    [['qeury'], 'price-store: unknown command "qeury"; did you mean "query"?; see "price-store --help"\n'],
    [['export', '--formt', 'csv'], 'price-store export: unknown option --formt (did you mean --format?); see "price-store export --help"\n'],
    [['--hlep'], 'price-store: unknown option --hlep (did you mean --help?); see "price-store --help"\n'],
    [['serve', '--hsot', 'x'], 'price-store serve: unknown option --hsot (did you mean --host?); see "price-store serve --help"\n'],
  ])('%j', async (argv, message) => {
    expect(await run(argv)).toEqual({ code: 2, stdout: '', stderr: message })
  })

  it('a bad value is one line too, naming the flag', async () => {
    const { code, stderr } = await run(['import', '--batch-size', '0', 'x'])
    expect(code).toBe(2)
    expect(stderr).toBe('price-store import: --batch-size must be a whole number from 1 to 1000000 (got "0"); see "price-store import --help"\n')
  })
})
