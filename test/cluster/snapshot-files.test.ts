/**
 * The parts of snapshots that need no NATS: the framing of a store
 * directory (the same files back, bytes that are not a packed directory
 * refused), object names that sort as snapshots do and metadata that reads
 * back, and which snapshots the retention removes at a given time.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ObjectInfo } from '@nats-io/obj'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseSnapshot, snapshotMetadata, snapshotObjectName, type Snapshot } from '../../src/cluster/snapshot-names.js'
import { PACK_MAGIC, packDirectory, unpackDirectory } from '../../src/cluster/snapshot-pack.js'
import { snapshotsToPrune } from '../../src/cluster/snapshot-retention.js'
import { rejection } from './support/store-fixtures.js'

let scratch: string
let count = 0
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'price-store-snapshot-files-'))
})
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true })
})

async function newDir(): Promise<string> {
  const dir = join(scratch, `d${count++}`)
  await mkdir(dir)
  return dir
}

async function collect(pieces: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const out: Buffer[] = []
  for await (const piece of pieces) out.push(Buffer.from(piece))
  return Buffer.concat(out)
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes
}

/** `bytes` in pieces of `size`, as a download hands them over. */
async function* inPieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size)
}

describe('packing a store directory', () => {
  it('gives the same files back, from pieces of any size, and the same bytes for the same files', async () => {
    const source = await newDir()
    const big = Buffer.alloc(3 * 1024 * 1024 + 17, 7)
    big.write('end', big.length - 3)
    await writeFile(join(source, '000005.ldb'), big)
    await writeFile(join(source, 'CURRENT'), 'MANIFEST-000004\n')
    await writeFile(join(source, 'LOCK'), '')
    const packed = await collect(packDirectory(source))
    expect(packed.subarray(0, 8).equals(PACK_MAGIC)).toBe(true)
    expect((await collect(packDirectory(source))).equals(packed)).toBe(true)
    for (const size of [1000, 64 * 1024 + 3, packed.length]) {
      const target = await newDir()
      expect(await unpackDirectory(inPieces(packed, size), target)).toEqual({ files: 3, bytes: big.length + 16 })
      expect((await readdir(target)).sort()).toEqual(['000005.ldb', 'CURRENT', 'LOCK'])
      expect((await readFile(join(target, '000005.ldb'))).equals(big)).toBe(true)
      expect(await readFile(join(target, 'CURRENT'), 'utf8')).toBe('MANIFEST-000004\n')
    }
  })

  it('reads headers split across pieces of one byte', async () => {
    const source = await newDir()
    await writeFile(join(source, 'CURRENT'), 'MANIFEST-000004\n')
    await writeFile(join(source, 'LOCK'), '')
    const target = await newDir()
    expect(await unpackDirectory(inPieces(await collect(packDirectory(source)), 1), target)).toEqual({ files: 2, bytes: 16 })
    expect(await readFile(join(target, 'CURRENT'), 'utf8')).toBe('MANIFEST-000004\n')
  })

  it('refuses bytes that are not a packed directory with PRICE_CORRUPT_VALUE', async () => {
    const source = await newDir()
    await writeFile(join(source, 'CURRENT'), 'MANIFEST-000004\n')
    const packed = await collect(packDirectory(source))
    const header = (name: string): Buffer => {
      const bytes = Buffer.from(name, 'utf8')
      return Buffer.concat([Buffer.from([0, bytes.length]), bytes, Buffer.alloc(8)])
    }
    const cases: [string, Buffer][] = [
      ['another format', Buffer.concat([Buffer.from('PSSNAP99'), packed.subarray(8)])],
      ['cut short', packed.subarray(0, packed.length - 5)],
      ['without its end mark', packed.subarray(0, packed.length - 2)],
      ['bytes after the end', Buffer.concat([packed, Buffer.from([0])])],
      ['a name with a slash', Buffer.concat([PACK_MAGIC, header('../x'), Buffer.alloc(2)])],
      ['a name twice', Buffer.concat([PACK_MAGIC, header('A'), header('A'), Buffer.alloc(2)])],
    ]
    for (const [what, bytes] of cases) {
      expect(await rejection(unpackDirectory(once(bytes), await newDir())), what).toMatchObject({ code: 'PRICE_CORRUPT_VALUE' })
    }
  })

  it('refuses to pack a directory holding a subdirectory', async () => {
    const source = await newDir()
    await mkdir(join(source, 'sub'))
    expect(await rejection(collect(packDirectory(source)))).toMatchObject({ code: 'PRICE_STORAGE_ERROR' })
  })
})

const described = (position: number, createdAt: number, nodeId = 'node-a'): Snapshot => Object.freeze({
  stream: 'S', bucket: 'price-store-S-snapshots', name: snapshotObjectName(position, createdAt, nodeId), position, positionId: `id-${position}`,
  sha256: 'ab'.repeat(32), bytes: 10, records: position * 10, createdAt, nodeId, provider: 'redstone',
})

describe('snapshot names and metadata', () => {
  it('names sort as snapshots do, and the metadata reads back as the snapshot', () => {
    const names = [described(9, 2000), described(10, 1000), described(10, 1500)].map((s) => s.name)
    expect([...names].sort()).toEqual(names)
    const snapshot = described(10, Date.UTC(2026, 11, 7), 'host:/var/db')
    const info = { name: snapshot.name, bucket: snapshot.bucket, size: 10, deleted: false, metadata: snapshotMetadata(snapshot) } as unknown as ObjectInfo
    expect(parseSnapshot('S', info)).toEqual(snapshot)
    // A store written without a log has no commit id: the metadata leaves it out.
    const withoutId = { ...snapshot, positionId: undefined }
    expect(parseSnapshot('S', { ...info, metadata: snapshotMetadata(withoutId) } as ObjectInfo)).toEqual(withoutId)
    expect(parseSnapshot('S', { ...info, deleted: true } as ObjectInfo)).toBeUndefined()
    expect(parseSnapshot('S', { ...info, name: snapshotObjectName(11, snapshot.createdAt, snapshot.nodeId) } as ObjectInfo)).toBeUndefined()
    expect(parseSnapshot('S', { ...info, metadata: { ...info.metadata, sha256: 'x' } } as ObjectInfo)).toBeUndefined()
  })
})

describe('snapshot retention', () => {
  const all = [described(3, 300), described(1, 100), described(4, 50), described(2, 200)]
  it('keeps the newest `keep` by position, whatever order they come in', () => {
    expect(snapshotsToPrune(all, { keep: 2 }, 1000).map((s) => s.position)).toEqual([2, 1])
    expect(snapshotsToPrune(all, {}, 1000).map((s) => s.position)).toEqual([1])
  })
  it('removes those older than maxAgeMs, but never the newest', () => {
    expect(snapshotsToPrune(all, { keep: 10, maxAgeMs: 750 }, 1000).map((s) => s.position)).toEqual([2, 1])
    expect(snapshotsToPrune(all, { keep: 10, maxAgeMs: 1 }, 1000).map((s) => s.position)).toEqual([3, 2, 1])
  })
  it('refuses a keep below 1 or a negative age', () => {
    expect(() => snapshotsToPrune(all, { keep: 0 }, 0)).toThrow(/keep/)
    expect(() => snapshotsToPrune(all, { maxAgeMs: -1 }, 0)).toThrow(/maxAgeMs/)
  })
})
