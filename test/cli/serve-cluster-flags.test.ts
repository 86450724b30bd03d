/**
 * `serve --nats` flags of the write concern and the health check: the
 * write concern and node id go to the library's options, checked before
 * anything opens; the staleness bound goes to the health check, for a
 * follower too; each is refused with a usage error (exit 2) naming it.
 */
import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseClusterFlags } from '../../src/cli/cluster-flags.js'
import { run, tempDir } from './helpers.js'

const NATS = 'nats://127.0.0.1:4222'

describe('serve --nats --write-concern, --node-id, --adopt-empty-stream, --snapshot-every-minutes and --max-staleness-ms', () => {
  it('turn into the node\'s options and the health check\'s bounds', () => {
    const flags = parseClusterFlags({ nats: NATS, 'write-concern': '2', 'node-id': 'host-a:/srv/prices', 'max-staleness-ms': '3000', 'max-lag': '100' })
    expect(flags?.options).toMatchObject({ writeConcern: 2, nodeId: 'host-a:/srv/prices' })
    expect(flags).toMatchObject({ maxLag: 100, maxStalenessMs: 3000 })
    expect(parseClusterFlags({ nats: NATS, 'write-concern': '0' })?.options?.writeConcern).toBe(0)
    // Left out, the library's defaults stand (this node; the host and the database).
    expect(parseClusterFlags({ nats: NATS })?.options).not.toHaveProperty('writeConcern')
    expect(parseClusterFlags({ follow: 'http://primary:9000', 'max-staleness-ms': '5000' })).toMatchObject({ follow: 'http://primary:9000', maxStalenessMs: 5000 })
    expect(parseClusterFlags({ nats: NATS, 'adopt-empty-stream': true })?.options).toMatchObject({ adoptEmptyStream: true })
    expect(parseClusterFlags({ nats: NATS, 'snapshot-every-minutes': '30', 'snapshot-keep': '5' })).toMatchObject({ snapshots: { everyMs: 1_800_000, keep: 5 } })
    expect(parseClusterFlags({ nats: NATS, 'snapshot-every-minutes': '30' })).toMatchObject({ snapshots: { everyMs: 1_800_000, keep: 3 } })
    expect(parseClusterFlags({ nats: NATS })).not.toHaveProperty('snapshots')
  })

  it('refuses a bad value, or one without --nats, before the database is touched', async () => {
    const { dir, cleanup } = await tempDir()
    try {
      const cases: [string[], RegExp][] = [
        [['--nats', NATS, '--write-concern', '17'], /--write-concern/],
        [['--nats', NATS, '--write-concern', 'all'], /--write-concern/],
        [['--nats', NATS, '--node-id', 'with space'], /--node-id: a node id is 1 to 128 printable ASCII characters/],
        [['--nats', NATS, '--max-staleness-ms', '-1'], /--max-staleness-ms/],
        [['--write-concern', '2'], /--write-concern needs --nats/],
        [['--follow', 'http://primary:9000', '--write-concern', '2'], /--write-concern needs --nats/],
        [['--nats', NATS, '--snapshot-keep', '2'], /--snapshot-keep needs --snapshot-every-minutes/],
        [['--nats', NATS, '--snapshot-every-minutes', '0'], /--snapshot-every-minutes/],
        [['--follow', 'http://primary:9000', '--adopt-empty-stream'], /--adopt-empty-stream needs --nats/],
      ]
      for (const [flags, message] of cases) {
        const db = `${dir}/db-${flags.join('-').replace(/[^a-z0-9]/gi, '')}`
        const result = await run(['serve', '--db', db, '--port', '0', ...flags])
        expect(result.code, flags.join(' ')).toBe(2)
        expect(result.stderr).toMatch(message)
        expect(existsSync(db), `${flags.join(' ')} created no database`).toBe(false)
      }
    } finally {
      await cleanup()
    }
  })
})
