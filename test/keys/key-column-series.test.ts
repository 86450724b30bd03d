/**
 * readKeyColumnSeries against the ordinary reader (parseChunkPart, with the
 * page-count rule of PagedIndex) as the oracle: on sound key columns it
 * reads exactly the oracle's timestamps and values of the window; on
 * damaged bytes it either refuses (the caller then reads the hour the
 * ordinary way, which names the damage) or reads what the oracle reads.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { encodeChunkPart, pageSpan, parseChunkPart, readPartCount, type ChunkRecord } from '../../src/keys/chunk-codec.js'
import { KEY_COLUMN_VERSION } from '../../src/keys/format-version.js'
import { readKeyColumnSeries, type SeriesSink } from '../../src/keys/key-column-series.js'
import { PERIOD_MS } from '../../src/keys/key-layout.js'

const PERIOD = 470_000
const PERIOD_START = PERIOD * PERIOD_MS

interface Read {
  readonly timestamps: number[]
  readonly values: number[] | undefined
  readonly first: number
  readonly end: number
}

/** What the ordinary readers make of the window: `undefined` where they refuse the column or a value in the window is damaged. */
function oracle(bytes: Buffer, from: number, to: number, withValues: boolean): Read | undefined {
  if (bytes[0] !== KEY_COLUMN_VERSION) return undefined
  let column
  try {
    column = parseChunkPart(bytes, PERIOD_START)
  } catch {
    return undefined
  }
  const pages = readPartCount(bytes)
  const { count } = column
  if (pages === 0 || count === 0 || (pages - 1) * pageSpan(count, pages) >= count) return undefined
  const inWindow = [...column.timestamps.keys()].filter((i) => (column.timestamps[i] as number) >= from && (column.timestamps[i] as number) <= to)
  const first = inWindow[0] ?? 0
  const end = inWindow.length === 0 ? 0 : (inWindow.at(-1) as number) + 1
  const values = withValues ? inWindow.map((i) => column.values?.[i] as number) : undefined
  if (values?.some((value) => Number.isNaN(value))) return undefined
  return { timestamps: inWindow.map((i) => column.timestamps[i] as number), values, first, end }
}

/** A sink that starts with `prefix` records already in it (so the reader must append, not overwrite). */
function sinkOf(prefix: number, withValues: boolean): SeriesSink {
  return {
    length: prefix,
    timestamps: new Float64Array(prefix + 1).fill(-1),
    values: withValues ? new Float64Array(prefix + 1).fill(-1) : undefined,
    reserve(more: number): void {
      if (this.length + more <= this.timestamps.length) return
      const size = this.length + more
      const timestamps = new Float64Array(size)
      timestamps.set(this.timestamps)
      this.timestamps = timestamps
      if (this.values !== undefined) {
        const values = new Float64Array(size)
        values.set(this.values)
        this.values = values
      }
    },
  }
}

/** The reader's answer, or `undefined` when it refuses; checks it left the sink's first records alone. */
function fast(bytes: Buffer, from: number, to: number, withValues: boolean, prefix = 3): Read | undefined {
  const sink = sinkOf(prefix, withValues)
  const kept = { first: -1, end: -1 }
  const accepted = readKeyColumnSeries(bytes, PERIOD_START, from, to, sink, kept)
  expect([...sink.timestamps.subarray(0, prefix)]).toEqual(new Array(prefix).fill(-1))
  if (!accepted) {
    expect(sink.length).toBe(prefix)
    return undefined
  }
  return {
    timestamps: [...sink.timestamps.subarray(prefix, sink.length)],
    values: sink.values === undefined ? undefined : [...sink.values.subarray(prefix, sink.length)],
    first: kept.first,
    end: kept.end,
  }
}

const UUID = fc.uuid().map((id) => id.toLowerCase())
const ID = fc.oneof(UUID, fc.string({ minLength: 1, maxLength: 20 }))
/** A value header: flags (0..3, all known) and a finite value; now and then longer than 9 bytes. */
const HEADER = fc
  .record({ flags: fc.integer({ min: 0, max: 3 }), value: fc.double({ noNaN: true, noDefaultInfinity: true }), extra: fc.integer({ min: 0, max: 3 }), longer: fc.integer({ min: 0, max: 9 }) })
  .map(({ flags, value, extra, longer }) => {
    const header = Buffer.alloc(9 + (longer === 0 ? extra : 0))
    header[0] = flags
    header.writeDoubleLE(value, 1)
    return header
  })
/** Offsets into the hour: small steps (one byte), seconds (two), and any (three). */
const OFFSET = fc.oneof(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 16_000 }), fc.integer({ min: 0, max: PERIOD_MS - 1 }))

const COLUMN = fc
  .record({
    records: fc.array(fc.record({ offset: OFFSET, id: ID, header: HEADER }), { minLength: 1, maxLength: 200 }),
    pagesWanted: fc.integer({ min: 1, max: 20 }),
  })
  .map(({ records, pagesWanted }) => {
    const sorted = [...records].sort((a, b) => a.offset - b.offset)
    const chunkRecords: ChunkRecord[] = sorted.map((record) => ({
      timestamp: PERIOD_START + record.offset,
      idBytes: Buffer.from(record.id, 'utf8'),
      value: record.header,
    }))
    // A page count that places every record (as sealing writes it).
    const count = chunkRecords.length
    const pages = Math.ceil(count / Math.ceil(count / Math.min(pagesWanted, count)))
    return encodeChunkPart(PERIOD_START, pages, chunkRecords, KEY_COLUMN_VERSION)
  })

const WINDOW = fc.oneof(
  fc.constant([0, Number.MAX_SAFE_INTEGER] as const),
  fc.tuple(fc.integer({ min: -1000, max: PERIOD_MS + 1000 }), fc.integer({ min: -1000, max: PERIOD_MS + 1000 }))
    .map(([a, b]) => [PERIOD_START + Math.min(a, b), PERIOD_START + Math.max(a, b)] as const),
)

describe('readKeyColumnSeries', () => {
  it('reads what parseChunkPart reads of a sound key column, in any window, with or without values', () => {
    fc.assert(
      fc.property(COLUMN, WINDOW, fc.boolean(), (bytes, [from, to], withValues) => {
        const expected = oracle(bytes, from, to, withValues)
        expect(expected).toBeDefined()
        expect(fast(bytes, from, to, withValues)).toEqual(expected)
      }),
      { seed: 22, numRuns: 400 },
    )
  })

  it('on damaged bytes either refuses or reads exactly what the ordinary reader reads', () => {
    const DAMAGE = fc.oneof(
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), byte: fc.constant(0) }),
      fc.record({ kind: fc.constant('append' as const), at: fc.constant(0), byte: fc.integer({ min: 0, max: 255 }) }),
    )
    fc.assert(
      fc.property(COLUMN, fc.array(DAMAGE, { minLength: 1, maxLength: 3 }), WINDOW, fc.boolean(), (sound, damages, [from, to], withValues) => {
        let bytes = Buffer.from(sound)
        for (const { kind, at, byte } of damages) {
          if (kind === 'flip') bytes[at % bytes.length] = byte
          else if (kind === 'cut') bytes = bytes.subarray(0, at % bytes.length)
          else bytes = Buffer.concat([bytes, Buffer.from([byte])])
        }
        const read = fast(bytes, from, to, withValues)
        if (read !== undefined) expect(read).toEqual(oracle(bytes, from, to, withValues))
      }),
      { seed: 23, numRuns: 2000 },
    )
  })

  it('refuses a damaged value header in the window (the ordinary reader then names it), reads past one outside it', () => {
    const records: ChunkRecord[] = [0, 1000, 2000].map((offset, i) => {
      const header = Buffer.alloc(9)
      header[0] = i === 1 ? 0x80 : 0
      header.writeDoubleLE(i + 0.5, 1)
      return { timestamp: PERIOD_START + offset, idBytes: Buffer.from(`id-${i}`), value: header }
    })
    const bytes = encodeChunkPart(PERIOD_START, 1, records, KEY_COLUMN_VERSION)
    expect(fast(bytes, PERIOD_START, PERIOD_START + 2000, true)).toBeUndefined()
    expect(fast(bytes, PERIOD_START + 2000, PERIOD_START + 2000, true)).toEqual({ timestamps: [PERIOD_START + 2000], values: [2.5], first: 2, end: 3 })
    // Without values no header is read: the timestamps are all there is to it.
    expect(fast(bytes, PERIOD_START, PERIOD_START + 2000, false)?.timestamps).toHaveLength(3)
  })

  it('refuses a value chunk part (not a key column) and a NaN value', () => {
    const header = Buffer.alloc(9)
    header.writeDoubleLE(Number.NaN, 1)
    const record = { timestamp: PERIOD_START, idBytes: Buffer.from('a'), value: header }
    expect(fast(encodeChunkPart(PERIOD_START, 1, [record]), 0, Number.MAX_SAFE_INTEGER, false)).toBeUndefined()
    expect(fast(encodeChunkPart(PERIOD_START, 1, [record], KEY_COLUMN_VERSION), 0, Number.MAX_SAFE_INTEGER, true)).toBeUndefined()
  })

  it('reads an empty window as no records', () => {
    const header = Buffer.alloc(9)
    const bytes = encodeChunkPart(PERIOD_START, 1, [{ timestamp: PERIOD_START + 5, idBytes: Buffer.from('a'), value: header }], KEY_COLUMN_VERSION)
    expect(fast(bytes, PERIOD_START + 6, PERIOD_START + 9, true)).toEqual({ timestamps: [], values: [], first: 0, end: 0 })
  })
})
