/**
 * The CLI's time flags and `query`'s time parameters read the one time
 * syntax (src/rules/time-text.ts): the same records for a time in ms, ISO
 * with an offset or relative, and a refusal (exit 2) naming the flag, the
 * value and the forms.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseTimeOption } from '../../src/cli/args.js'
import { TIME_TEXT_FORMS } from '../../src/rules/time-text.js'
import { run, tempDir } from '../cli/helpers.js'

let db: string
let cleanup: () => Promise<void>

beforeAll(async () => {
  const temp = await tempDir()
  cleanup = temp.cleanup
  db = join(temp.dir, 'db')
  // Ends at 2024-06-01T00:00:00Z.
  expect((await run(['demo', '--db', db, '--days', '0.01'])).code).toBe(0)
})

afterAll(async () => {
  await cleanup()
})

const END = Date.UTC(2024, 5, 1)

describe('the CLI\'s time flags', () => {
  it('parseTimeOption takes every form, and names the flag in its refusal', () => {
    expect(parseTimeOption('from', 'now-1d', () => END)).toBe(END - 86_400_000)
    expect(parseTimeOption('from', '2024-06-01T02:00:00+02:00')).toBe(END)
    expect(() => parseTimeOption('before', 'last week')).toThrow(`--before must be a time: ${TIME_TEXT_FORMS} (got "last week")`)
  })

  it('export --from/--to: the same records for ms, ISO with an offset, and a space for the T', async () => {
    const ms = await run(['export', '--db', db, '--symbol', 'BTC', '--from', String(END - 300_000), '--to', String(END - 60_000)])
    const iso = await run(['export', '--db', db, '--symbol', 'BTC', '--from', '2024-05-31T19:55:00-04:00', '--to', '2024-05-31 23:59:00'])
    expect(ms.code).toBe(0)
    expect(ms.stdout.trim().split('\n').length).toBeGreaterThan(3)
    expect({ code: iso.code, stdout: iso.stdout }).toEqual({ code: ms.code, stdout: ms.stdout })
    // Relative times: the demo data is in the past, so a window near now holds none of it.
    const recent = await run(['export', '--db', db, '--from=-15m', '--to', 'now+1h'])
    expect({ code: recent.code, stdout: recent.stdout }).toEqual({ code: 0, stdout: '' })
    const refused = await run(['export', '--db', db, '--from', 'now-1y'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(`--from must be a time: ${TIME_TEXT_FORMS} (got "now-1y")`)
  })

  it('query: fromTimestamp and toTimestamp take the other forms too, answering as for their milliseconds', async () => {
    const ms = await run(['query', '--db', db, 'symbol=ETH', `fromTimestamp=${END - 600_000}`, `toTimestamp=${END - 60_000}`, 'interval=60000'])
    const iso = await run(['query', '--db', db, 'symbol=ETH', 'fromTimestamp=2024-05-31T23:50:00Z', '--toTimestamp', '2024-06-01T00:59:00+01:00', 'interval=60000'])
    expect(ms.code).toBe(0)
    expect(JSON.parse(ms.stdout).length).toBeGreaterThan(3)
    expect(iso).toEqual(ms)
    const refused = await run(['query', '--db', db, 'symbol=ETH', 'fromTimestamp=yesterday', 'toTimestamp=now', 'interval=60000'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('fromTimestamp must be a time')
    // A value in ms still meets the query's own checks, in its own words.
    const negative = await run(['query', '--db', db, 'symbol=ETH', 'fromTimestamp=-5', 'toTimestamp=0', 'interval=60000'])
    expect(negative.code).toBe(2)
  })
})
