/**
 * A process that restores one snapshot, for the test that kills a restore midway:
 * `node child.cjs SNAPSHOT_JSON DIR NATS_URL`. Prints `RESTORED` once done.
 */
import { restoreSnapshot } from '../../../src/cluster/snapshot-restore.js'

const [snapshot, dir, server] = process.argv.slice(2)
if (snapshot === undefined || dir === undefined || server === undefined) throw new Error('usage: child SNAPSHOT_JSON DIR NATS_URL')
restoreSnapshot(JSON.parse(snapshot), dir, { connection: { servers: [server] } }).then(
  () => console.log('RESTORED'),
  (err: unknown) => {
    console.error(err)
    process.exit(1)
  },
)
