/**
 * Damaged data (SPEC §4–§5, issue 5), format 3: values and entries damaged
 * on disk behind the store's back (unknown flags, garbage msgpack, a value cut
 * short, a truncated chunk part, a chunk part the heads index lists but that
 * is gone, a damaged heads entry, a damaged log entry, a meta format or
 * provider the release must refuse) give the documented coded error, naming
 * the record or entry, on exactly the queries whose answer needs the damaged
 * entry — never a crash, an uncoded error or a hang — while everything else
 * answers as the reference model says, with the hot tail on and off, through
 * the typed methods and through the HTTP-facing `store.query`.
 *
 * The data is written by a store: most of it with `openBytes: 0`, so every
 * hour is sealed into chunks at once; then, as a process killed after its
 * writes resolved would leave it, one more hour that stays in the log. The
 * damage is written with ClassicLevel directly, after the store is gone,
 * into the sublevels of src/keys/key-layout.ts ('c', 'h' and 'l' with 'view'
 * encodings, 'm' with 'utf8'). Keys are built here byte by byte from that
 * layout; the codecs only locate a record's bytes inside a chunk, heads or log
 * entry, and re-pack a part when a damaged value changes length. Every store
 * under test opens its own copy of the damaged directory, so what one store
 * does on close (sealing the log) never changes what the next one reads.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClassicLevel } from 'classic-level'
import fc from 'fast-check'
import { MemoryLevel } from 'memory-level'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PriceStore, isPriceStoreError } from '../../src/index.js'
import { encodeChunkPart, readChunkPart, readCompactId } from '../../src/keys/chunk-codec.js'
import type { ChunkRecord } from '../../src/keys/chunk-codec.js'
import { encodeHeads, readHeads } from '../../src/keys/heads-codec.js'
import { encodeLogEntry, readLogEntry } from '../../src/keys/log-codec.js'
import type { LogRecord } from '../../src/keys/log-codec.js'
import type { NewPriceRecord, PriceRecord, PriceStoreErrorCode, PriceStoreOptions, Provider, QueryParams } from '../../src/index.js'

const PROVIDER: Provider = Object.freeze({ name: 'redstone', id: 'damage-provider', publicKey: 'damage-key' })
const HOUR = 3_600_000
const HEAD_MS = 600_000
const MINUTE = 60_000
/** An hour boundary (UTC): period P0. Chunk symbols fill P0..P2; log symbols fill P3. */
const T0 = 1_699_999_200_000
const P1 = T0 + HOUR
const P2 = T0 + 2 * HOUR
const P3 = T0 + 3 * HOUR
const PER_SYMBOL = 30
const MAX = Number.MAX_SAFE_INTEGER
/** Any single call that takes longer than this is a hang. */
const HANG_MS = 10_000

const periodOf = (timestamp: number): number => Math.floor(timestamp / HOUR)

// ---------------------------------------------------------------------------
// Byte layouts, from src/keys/key-layout.ts and value-codec.ts.

const u16 = (n: number): Buffer => Buffer.from([n >> 8, n & 0xff])
function u32(n: number): Buffer {
  const out = Buffer.alloc(4)
  out.writeUInt32BE(n)
  return out
}
/** `period (u32 BE) · symbol · 0x00 · part (u16 BE)` */
/** The part number of a chunk's key column (format 5: every base record's key and 9-byte value header). */
const KEYS_PART = 0x7fff
const chunkKey = (period: number, symbol: string, part: number): Buffer => Buffer.concat([u32(period), Buffer.from(symbol, 'utf8'), Buffer.from([0]), u16(part)])
/** `symbol · 0x00 · period (u32 BE)` */
const headsKey = (symbol: string, period: number): Buffer => Buffer.concat([Buffer.from(symbol, 'utf8'), Buffer.from([0]), u32(period)])

/** Flags of a value: bit 0 a bytes signature, bit 1 a JSON body; the header is the flags and the float64 value. */
const JSON_BODY = 0b10
const VALUE_HEADER = 9

/** Where the msgpack `[source, extras]` of a value with the usual body starts: after three varint-sized texts. */
function msgpackStart(value: Buffer): number {
  let at = VALUE_HEADER
  for (let text = 0; text < 3; text++) {
    let length = 0
    let scale = 1
    for (;;) {
      const byte = value[at++] as number
      length += (byte & 0x7f) * scale
      scale *= 128
      if (byte < 0x80) break
    }
    at += length
  }
  return at
}

// ---------------------------------------------------------------------------
// The data set.

interface Written {
  readonly symbol: string
  readonly timestamp: number
  readonly id: string
  readonly input: NewPriceRecord
}

function written(symbol: string, i: number, timestamp: number, id = `${symbol}-${i}`): Written {
  return {
    symbol, timestamp, id,
    input: {
      id, symbol, provider: PROVIDER.id, value: 100 + i + 0.5, signature: `sig-${id}`, permawebTx: `tx-${id}`,
      version: '0.4', source: { x: i, nested: { list: [1, 'two', null] } }, timestamp, note: `extra-${i}`,
    },
  }
}

/** A lowercase UUID from a number, so the chunk stores the id in its 16-byte form. */
const uuidOf = (n: number): string => {
  const hex = n.toString(16).padStart(32, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** Thirty records over P0..P2, one every 6 minutes: ten per hour, some 10-minute buckets with two. */
const chunkSeries = (symbol: string, uuid = false): Written[] =>
  Array.from({ length: PER_SYMBOL }, (_, i) => written(symbol, i, T0 + i * 6 * MINUTE, uuid ? uuidOf(i + 1) : undefined))
/** Thirty records in P3, one a minute: they stay in the log. */
const logSeries = (symbol: string): Written[] => Array.from({ length: PER_SYMBOL }, (_, i) => written(symbol, i, P3 + i * MINUTE))
/** Ten records in P0, 4 200 in P1 (one every 0.8 s: many pages), ten in P2. */
const multiSeries = (symbol: string): Written[] => [
  ...Array.from({ length: 10 }, (_, i) => written(symbol, i, T0 + i * 6 * MINUTE)),
  ...Array.from({ length: 4200 }, (_, i) => written(symbol, 10 + i, P1 + i * 800)),
  ...Array.from({ length: 10 }, (_, i) => written(symbol, 4210 + i, P2 + i * 6 * MINUTE)),
]

/** How a value is damaged: from the stored bytes to the damaged bytes (any length). */
type ValueDamage = (stored: Buffer) => Buffer

interface ValuePlan {
  readonly symbol: string
  /** Which record, by position in the symbol's history: 15 is mid-P1 (not a 10-minute head), 16 mid-P1 (a head), 29 the newest. */
  readonly index: number
  readonly where: 'chunk' | 'log'
  readonly what: string
  readonly damage: ValueDamage
}

const patch = (stored: Buffer, at: number, byte: number): Buffer => {
  const out = Buffer.from(stored)
  out[at] = byte
  return out
}
/** A msgpack string exactly `length` bytes long: valid msgpack that is not `[source, extras]`. */
function msgpackString(length: number): Buffer {
  if (length - 1 < 32) return Buffer.concat([Buffer.from([0xa0 | (length - 1)]), Buffer.alloc(length - 1, 0x61)])
  return Buffer.concat([Buffer.from([0xd9, length - 2]), Buffer.alloc(length - 2, 0x61)])
}

const VALUE_DAMAGE: readonly ValuePlan[] = [
  { symbol: 'FLAGS', index: 16, where: 'chunk', what: 'unknown flags 0xff, on a 10-minute head', damage: (v) => patch(v, 0, 0xff) },
  { symbol: 'NEWEST', index: 29, where: 'chunk', what: 'unknown flags 0x04, on the newest record', damage: (v) => patch(v, 0, 0x04) },
  { symbol: 'GARB', index: 15, where: 'chunk', what: 'garbage msgpack after valid texts', damage: (v) => Buffer.concat([v.subarray(0, msgpackStart(v)), Buffer.alloc(v.length - msgpackStart(v), 0xc1)]) },
  { symbol: 'SHAPE', index: 16, where: 'chunk', what: 'valid msgpack that is not [source, extras]', damage: (v) => Buffer.concat([v.subarray(0, msgpackStart(v)), msgpackString(v.length - msgpackStart(v))]) },
  { symbol: 'JSON', index: 10, where: 'chunk', what: 'the JSON-body flag on a msgpack body', damage: (v) => patch(v, 0, JSON_BODY) },
  { symbol: 'SHORT', index: 16, where: 'chunk', what: 'a value shorter than its header', damage: (v) => v.subarray(0, 4) },
  { symbol: 'EMPTY', index: 29, where: 'chunk', what: 'an empty value, on the newest record', damage: () => Buffer.alloc(0) },
  { symbol: 'CUT', index: 15, where: 'chunk', what: 'a value cut in the middle of its body', damage: (v) => v.subarray(0, VALUE_HEADER + Math.floor((v.length - VALUE_HEADER) / 2)) },
  { symbol: 'LOGV', index: 10, where: 'log', what: 'unknown flags 0xff, in the log', damage: (v) => patch(v, 0, 0xff) },
  { symbol: 'LOGG', index: 29, where: 'log', what: 'garbage msgpack, on the newest record, in the log', damage: (v) => Buffer.concat([v.subarray(0, msgpackStart(v)), Buffer.alloc(v.length - msgpackStart(v), 0xc1)]) },
]

/** Damage to the structure of a sealed hour (always P1) of one symbol. */
interface EntryPlan {
  readonly symbol: string
  readonly kind: 'chunk' | 'heads'
  /** The chunk part the error must name. */
  readonly part?: number
  readonly what: string
}

const ENTRY_DAMAGE: readonly EntryPlan[] = [
  { symbol: 'TRUNC', kind: 'chunk', part: 0, what: 'a chunk part cut in half' },
  { symbol: 'VERS', kind: 'chunk', part: 0, what: 'a chunk part with version byte 2' },
  { symbol: 'GONE', kind: 'chunk', part: 0, what: 'a chunk part the heads index lists, deleted' },
  { symbol: 'MULTI', kind: 'chunk', part: KEYS_PART, what: 'the key column of a chunk of many pages, cut in half' },
  { symbol: 'HEADS', kind: 'heads', what: 'a heads entry claiming 200 heads' },
  { symbol: 'HCUT', kind: 'heads', what: 'a heads entry cut in half' },
]

const GOOD_CHUNK = ['GOOD', 'ETH', 'UUID']
const GOOD_LOG = ['LOGOK']

function series(): Map<string, Written[]> {
  const all = new Map<string, Written[]>()
  for (const symbol of [...GOOD_CHUNK, ...VALUE_DAMAGE.filter((p) => p.where === 'chunk').map((p) => p.symbol), ...ENTRY_DAMAGE.map((p) => p.symbol)]) {
    all.set(symbol, symbol === 'MULTI' ? multiSeries(symbol) : chunkSeries(symbol, symbol === 'UUID'))
  }
  for (const symbol of [...GOOD_LOG, ...VALUE_DAMAGE.filter((p) => p.where === 'log').map((p) => p.symbol)]) all.set(symbol, logSeries(symbol))
  return all
}
const SERIES = series()
const LOG_SYMBOLS = new Set([...GOOD_LOG, ...VALUE_DAMAGE.filter((p) => p.where === 'log').map((p) => p.symbol)])

const recordAt = (symbol: string, index: number): Written => (SERIES.get(symbol) as Written[])[index] as Written
const describeKey = (r: { symbol: string; timestamp: number; id: string }): string => `${r.symbol}@${r.timestamp}#${r.id}`

/**
 * Writes the data set: the chunk symbols with `openBytes: 0` (sealed at once), then the log symbols with a
 * store whose database is closed under it, as if its process died once the write resolved.
 */
async function writeDataSet(dir: string, symbols: (symbol: string) => boolean = () => true): Promise<void> {
  const sealed = await PriceStore.open(dir, { provider: PROVIDER, openBytes: 0 })
  for (const [symbol, list] of SERIES) if (!LOG_SYMBOLS.has(symbol) && symbols(symbol)) await sealed.putMany(list.map((w) => w.input))
  await sealed.close()
  const db = new ClassicLevel(dir)
  const open = await PriceStore.open(db, { provider: PROVIDER })
  for (const [symbol, list] of SERIES) if (LOG_SYMBOLS.has(symbol) && symbols(symbol)) await open.putMany(list.map((w) => w.input))
  await db.close()
}

function sublevels(db: ClassicLevel) {
  const bytes = (name: string) => db.sublevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' })
  return { chunks: bytes('c'), heads: bytes('h'), log: bytes('l'), meta: db.sublevel<string, string>('m', { keyEncoding: 'utf8', valueEncoding: 'utf8' }) }
}
type Levels = ReturnType<typeof sublevels>

/** Every record of a chunk part: its timestamp, id bytes (UTF-8) and value. */
function chunkRecords(part: Buffer, period: number): (ChunkRecord & { id: string; valueStart: number })[] {
  const out: (ChunkRecord & { id: string; valueStart: number })[] = []
  readChunkPart(part, period * HOUR, (timestamp, idStart, idEnd, compact, valueStart, valueEnd) => {
    const id = compact ? readCompactId(part, idStart) : part.toString('utf8', idStart, idEnd)
    out.push({ timestamp, id, idBytes: Buffer.from(id, 'utf8'), value: part.subarray(valueStart, valueEnd), valueStart })
  })
  return out
}

/**
 * The bytes of an entry (a chunk part or a log entry) holding `records`,
 * with the value of `records[index]` damaged: in place when the damage keeps
 * its length, else re-encoded by `repack` from the records.
 */
function withDamagedValue<R extends { value: Uint8Array; valueStart: number }>(
  bytes: Buffer,
  records: R[],
  index: number,
  damage: ValueDamage,
  repack: (records: R[]) => Buffer,
): Buffer {
  const record = records[index] as R
  const damaged = damage(Buffer.from(record.value))
  if (damaged.length === record.value.length) {
    damaged.copy(bytes, record.valueStart)
    return bytes
  }
  records[index] = { ...record, value: damaged }
  return repack(records)
}

/** Damages a record's value in its chunk part and, when it is a 10-minute head, in its heads entry: it is damaged wherever stored. */
async function damageChunkValue(levels: Levels, target: Written, damage: ValueDamage): Promise<void> {
  const period = periodOf(target.timestamp)
  let found = 0
  let header: Buffer | undefined
  for (let part = 0; ; part++) {
    const stored = await levels.chunks.get(chunkKey(period, target.symbol, part))
    if (stored === undefined) break
    const bytes = Buffer.from(stored)
    const records = chunkRecords(bytes, period)
    const index = records.findIndex((r) => r.timestamp === target.timestamp && r.id === target.id)
    if (index < 0) continue
    found++
    header = damage(Buffer.from((records[index] as ChunkRecord).value)).subarray(0, VALUE_HEADER)
    const repack = (all: typeof records): Buffer => encodeChunkPart(period * HOUR, bytes.readUInt16BE(1), all)
    await levels.chunks.put(chunkKey(period, target.symbol, part), withDamagedValue(bytes, records, index, damage, repack))
  }
  if (found !== 1) throw new Error(`the documented layout found ${describeKey(target)} in ${found} chunk parts`)
  // The key column keeps a copy of the value's header: damaged too.
  const storedKeys = await levels.chunks.get(chunkKey(period, target.symbol, KEYS_PART))
  if (storedKeys === undefined) throw new Error(`the documented layout found no key column for ${describeKey(target)}`)
  const keys = Buffer.from(storedKeys)
  const keyRecords = chunkRecords(keys, period)
  const keyIndex = keyRecords.findIndex((r) => r.timestamp === target.timestamp && r.id === target.id)
  if (keyIndex < 0) throw new Error(`the key column does not hold ${describeKey(target)}`)
  keyRecords[keyIndex] = { ...(keyRecords[keyIndex] as (typeof keyRecords)[number]), value: header as Buffer }
  await levels.chunks.put(chunkKey(period, target.symbol, KEYS_PART), encodeChunkPart(period * HOUR, keys.readUInt16BE(1), keyRecords, 5))
  const storedHeads = await levels.heads.get(headsKey(target.symbol, period))
  if (storedHeads === undefined) throw new Error(`the documented layout found no heads entry for ${describeKey(target)}`)
  const headsBytes = Buffer.from(storedHeads)
  const heads: ChunkRecord[] = []
  let isHead = false
  const count = readHeads(headsBytes, period * HOUR, (timestamp, idStart, idEnd, valueStart, valueEnd) => {
    const id = headsBytes.toString('utf8', idStart, idEnd)
    const value = headsBytes.subarray(valueStart, valueEnd)
    const head = timestamp === target.timestamp && id === target.id
    isHead ||= head
    heads.push({ timestamp, idBytes: Buffer.from(id, 'utf8'), value: head ? damage(Buffer.from(value)) : value })
  })
  if (isHead) await levels.heads.put(headsKey(target.symbol, period), encodeHeads(period * HOUR, count, heads, count.pageStarts))
}

/** Damages a record's value inside the log entry that holds it. */
async function damageLogValue(levels: Levels, target: Written, damage: ValueDamage): Promise<void> {
  let found = 0
  for (const [key, stored] of await levels.log.iterator().all()) {
    const bytes = Buffer.from(stored)
    const records: (LogRecord & { valueStart: number })[] = []
    readLogEntry(bytes, (symbol, timestamp, idStart, idEnd, valueStart, valueEnd) => {
      records.push({ symbol, timestamp, id: bytes.toString('utf8', idStart, idEnd), value: bytes.subarray(valueStart, valueEnd), valueStart })
    })
    const index = records.findIndex((r) => r.symbol === target.symbol && r.timestamp === target.timestamp && r.id === target.id)
    if (index < 0) continue
    found++
    await levels.log.put(key, withDamagedValue(bytes, records, index, damage, encodeLogEntry))
  }
  if (found !== 1) throw new Error(`the documented layout found ${describeKey(target)} in ${found} log entries`)
}

async function damageEntry(levels: Levels, plan: EntryPlan): Promise<void> {
  const period = periodOf(P1)
  const part0 = chunkKey(period, plan.symbol, 0)
  const stored = await levels.chunks.get(part0)
  if (stored === undefined) throw new Error(`the documented layout found no chunk of ${plan.symbol} in P1`)
  const heads = await levels.heads.get(headsKey(plan.symbol, period))
  if (heads === undefined) throw new Error(`the documented layout found no heads entry of ${plan.symbol} in P1`)
  switch (plan.symbol) {
    case 'TRUNC':
      await levels.chunks.put(part0, stored.subarray(0, stored.length >> 1))
      break
    case 'VERS':
      await levels.chunks.put(part0, patch(Buffer.from(stored), 0, 2))
      break
    case 'GONE':
      await levels.chunks.del(part0)
      break
    case 'MULTI': {
      const keysKey = chunkKey(period, plan.symbol, KEYS_PART)
      const keys = await levels.chunks.get(keysKey)
      if (Buffer.from(stored).readUInt16BE(1) < 2 || keys === undefined) throw new Error('MULTI has no key column over several pages')
      await levels.chunks.put(keysKey, keys.subarray(0, keys.length >> 1))
      break
    }
    case 'HEADS':
      await levels.heads.put(headsKey(plan.symbol, period), Buffer.from([3, 10, 200, 0, 0]))
      break
    case 'HCUT':
      await levels.heads.put(headsKey(plan.symbol, period), heads.subarray(0, heads.length >> 1))
      break
  }
}

const GOOD_SYMBOLS = [...GOOD_CHUNK, ...GOOD_LOG]
/** The two damaged data sets: damaged record values, and damaged chunk and heads entries, each beside the good symbols. */
const VALUE_SET = new Set([...GOOD_SYMBOLS, ...VALUE_DAMAGE.map((p) => p.symbol)])
const ENTRY_SET = new Set([...GOOD_SYMBOLS, ...ENTRY_DAMAGE.map((p) => p.symbol)])

/** Writes one data set with a store, then damages it with ClassicLevel directly. */
async function buildDamagedStore(dir: string, symbols: ReadonlySet<string>): Promise<void> {
  await writeDataSet(dir, (symbol) => symbols.has(symbol))
  const db = new ClassicLevel(dir)
  await db.open()
  const levels = sublevels(db)
  expect((await levels.log.keys().all()).length, 'the log symbols are in the log').toBeGreaterThan(0)
  for (const plan of VALUE_DAMAGE.filter((p) => symbols.has(p.symbol))) {
    const target = recordAt(plan.symbol, plan.index)
    if (plan.where === 'chunk') await damageChunkValue(levels, target, plan.damage)
    else await damageLogValue(levels, target, plan.damage)
  }
  for (const plan of ENTRY_DAMAGE.filter((p) => symbols.has(p.symbol))) await damageEntry(levels, plan)
  await db.close()
}

// ---------------------------------------------------------------------------
// The naive model of what each query must answer, and which damage it needs.

interface Query {
  symbol?: string
  symbols?: string[]
  limit?: number
  offset?: number
  from?: number
  to?: number
  interval?: number
}

interface Model {
  readonly bySymbol: ReadonlyMap<string, readonly Written[]>
  /** Damaged records, by `symbol@timestamp#id`, and where they are stored. */
  readonly damaged: ReadonlyMap<string, 'chunk' | 'log'>
  readonly entries: readonly EntryPlan[]
}

const utf8Order = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b))

function buildModel(symbols: ReadonlySet<string>): Model {
  const bySymbol = new Map<string, Written[]>()
  for (const [symbol, list] of SERIES) {
    if (symbols.has(symbol)) bySymbol.set(symbol, [...list].sort((a, b) => a.timestamp - b.timestamp || utf8Order(a.id, b.id)))
  }
  return {
    bySymbol,
    damaged: new Map(VALUE_DAMAGE.filter((p) => symbols.has(p.symbol)).map((p) => [describeKey(recordAt(p.symbol, p.index)), p.where])),
    entries: ENTRY_DAMAGE.filter((p) => symbols.has(p.symbol)),
  }
}

/** The record as a query returns it. */
function returned(w: Written, minutes = false): Record<string, unknown> {
  const out: Record<string, unknown> = { ...w.input, provider: PROVIDER.id, providerPublicKey: PROVIDER.publicKey }
  if (minutes) out.minutes = Math.floor(w.timestamp / MINUTE) % 60
  return out
}

/**
 * Whether a query must read the damaged P1 entry of `plan.symbol`. A scan reads a whole hour once it
 * reaches it; newest-first forms reach P1 unless the records after it already fill the answer. Ranges
 * read every hour of their window, but for intervals that are a multiple of ten minutes a sealed hour
 * is read from its heads: its chunk only when the ten-minute bucket holding `to` goes on past `to`.
 * A range whose `offset + limit` buckets end before P1 does not need it, but a store may read a short
 * window at once rather than hour by hour: then either answer is right ('may').
 */
function needsEntry(q: Query, plan: EntryPlan, list: readonly Written[], tail: number): 'yes' | 'no' | 'may' {
  const period = periodOf(P1)
  const from = q.from ?? 0
  const to = q.to ?? MAX
  if (periodOf(from) > period || periodOf(to) < period) return 'no'
  const inWindow = (w: Written): boolean => w.timestamp >= from && w.timestamp <= to
  const hour = list.filter((w) => periodOf(w.timestamp) === period)
  // A query reading few records of a sealed hour (no interval, or a ten-minute grid's edge) goes by the heads entry's
  // page table (format 6), never by the key column; a full read (a finer grid) by the key column.
  const small = q.interval === undefined || q.interval % HEAD_MS === 0
  if (plan.kind === 'chunk' && plan.part === KEYS_PART && small) return 'no'
  // A hot tail of `tail` records is loaded by a small read; a window starting after its oldest record is answered from it.
  if (plan.kind === 'chunk' && plan.part === KEYS_PART && tail > 0 && (list.length <= tail || from > (list[list.length - tail] as Written).timestamp)) return 'may'
  if (plan.kind === 'chunk' && plan.part !== KEYS_PART && !hour.some(inWindow)) {
    // A page is read only for a record in it, but a search by the page table reads the page a window's edge falls in:
    // an edge between the hour's first and last record, with no record in the window, may read a page or not.
    const inside = (edge: number): boolean => hour.length > 0 && edge > (hour[0] as Written).timestamp && edge <= (hour.at(-1) as Written).timestamp
    return small && (inside(from) || inside(to)) ? 'may' : 'no'
  }
  if (q.interval !== undefined) {
    let reads: boolean
    if (plan.kind === 'heads' || q.interval % HEAD_MS !== 0) {
      reads = true
    } else {
      const bucket = Math.floor(to / HEAD_MS)
      const head = list.filter((w) => Math.floor(w.timestamp / HEAD_MS) === bucket).at(-1)
      reads = periodOf(to) === period && head !== undefined && head.timestamp > to
    }
    if (!reads) return 'no'
    // Sampling may stop at the first row of the bucket after the last one it returns.
    if (q.limit !== undefined) {
      const end = (q.offset ?? 0) + q.limit
      const before = new Set(list.filter((w) => inWindow(w) && periodOf(w.timestamp) < period).map((w) => Math.floor(w.timestamp / (q.interval as number))))
      if (before.size > end) return 'may'
    }
    return 'yes'
  }
  const wanted = q.symbol !== undefined ? (q.offset ?? 0) + (q.limit ?? 1) : 1
  return list.filter((w) => inWindow(w) && periodOf(w.timestamp) > period).length < wanted ? 'yes' : 'no'
}

/** Whether an error's `details.key` names this entry. */
function namesEntry(key: string, plan: EntryPlan): boolean {
  const hour = `${plan.symbol}@${P1}+`
  const part = plan.part === KEYS_PART ? ' key column' : ` part ${plan.part}`
  return plan.kind === 'chunk' ? key.startsWith(`chunk ${hour}`) && key.endsWith(part) : key.startsWith(`heads ${hour}`)
}

type Expectation =
  | { readonly kind: 'answer'; readonly value: unknown; readonly orError?: { readonly names: readonly string[]; readonly matches: (key: string) => boolean } }
  | { readonly kind: 'error'; readonly names: readonly string[]; readonly matches: (key: string) => boolean }

function toParams(q: Query): URLSearchParams {
  const params = new URLSearchParams()
  if (q.symbol !== undefined) params.set('symbol', q.symbol)
  if (q.symbols !== undefined) params.set('symbols', q.symbols.join(','))
  if (q.limit !== undefined) params.set('limit', String(q.limit))
  if (q.offset !== undefined) params.set('offset', String(q.offset))
  if (q.from !== undefined) params.set('fromTimestamp', String(q.from))
  if (q.to !== undefined) params.set('toTimestamp', String(q.to))
  if (q.interval !== undefined) params.set('interval', String(q.interval))
  return params
}

/**
 * What the query must give: the model's answer, or a coded error naming a damaged record the answer holds or a
 * damaged entry it needs, on a store keeping hot tails of `tail` records.
 */
function expectation(model: Model, q: Query, tail = 0): Expectation {
  const inWindow = (w: Written): boolean => (q.from === undefined || w.timestamp >= q.from) && (q.to === undefined || w.timestamp <= q.to)
  let chosen: Written[]
  let value: unknown
  let symbols: string[]
  if (q.symbol !== undefined && q.interval !== undefined) {
    const byBucket = new Map<number, Written>()
    for (const w of model.bySymbol.get(q.symbol) ?? []) if (inWindow(w)) byBucket.set(Math.floor(w.timestamp / q.interval), w)
    const offset = q.offset ?? 0
    chosen = [...byBucket.entries()].sort((a, b) => a[0] - b[0]).map(([, w]) => w).slice(offset, q.limit === undefined ? undefined : offset + q.limit)
    value = chosen.map((w) => returned(w, true))
    symbols = [q.symbol]
  } else if (q.symbol !== undefined) {
    const offset = q.offset ?? 0
    chosen = [...(model.bySymbol.get(q.symbol) ?? [])].reverse().filter(inWindow).slice(offset, offset + (q.limit ?? 1))
    value = chosen.map((w) => returned(w))
    symbols = [q.symbol]
  } else {
    symbols = [...new Set(q.symbols ?? [...model.bySymbol.keys()].sort(utf8Order))]
    chosen = []
    const answer: Record<string, unknown> = {}
    for (const symbol of symbols) {
      const latest = [...(model.bySymbol.get(symbol) ?? [])].reverse().find(inWindow)
      if (latest === undefined) continue
      chosen.push(latest)
      Object.defineProperty(answer, symbol, { value: returned(latest), enumerable: true, writable: true, configurable: true })
    }
    value = answer
  }
  const records = chosen.map(describeKey).filter((key) => model.damaged.has(key))
  const need = (plan: EntryPlan) => (symbols.includes(plan.symbol) ? needsEntry(q, plan, model.bySymbol.get(plan.symbol) ?? [], tail) : 'no')
  const entries = model.entries.filter((plan) => need(plan) === 'yes')
  if (records.length === 0 && entries.length === 0) {
    const may = model.entries.filter((plan) => need(plan) === 'may')
    if (may.length === 0) return { kind: 'answer', value }
    return { kind: 'answer', value, orError: { names: may.map((plan) => `${plan.kind} of ${plan.symbol}`), matches: (key) => may.some((plan) => namesEntry(key, plan)) } }
  }
  return {
    kind: 'error',
    names: [...records, ...entries.map((plan) => `${plan.kind} of ${plan.symbol}`)],
    // A record is named with the entry it was read from: its log entry, or its chunk part (or the heads entry holding a copy).
    matches: (key) =>
      records.some((record) => model.damaged.get(record) === 'log' ? key.startsWith(`${record} in log entry `) : key.startsWith(`${record} in chunk ${record.slice(0, record.indexOf('@'))}@`) || key.startsWith(`${record} in heads `)) ||
      entries.some((plan) => namesEntry(key, plan)),
  }
}

// ---------------------------------------------------------------------------
// Running queries without ever hanging.

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

async function settle(run: () => Promise<unknown>): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`HANG: no answer within ${HANG_MS} ms`)), HANG_MS)
  })
  try {
    return { ok: true, value: await Promise.race([run(), hang]) }
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('HANG')) throw error
    return { ok: false, error }
  } finally {
    clearTimeout(timer)
  }
}

/** Checks an outcome against the expectation: equal answers, or PRICE_CORRUPT_VALUE naming a damaged record or entry. */
function check(outcome: Outcome, expected: Expectation, context: string): void {
  if (expected.kind === 'answer' && expected.orError !== undefined && !outcome.ok) {
    check(outcome, { kind: 'error', ...expected.orError }, `${context} (an error is also right)`)
    return
  }
  if (expected.kind === 'answer') {
    if (!outcome.ok) throw new Error(`${context}: expected an answer, got ${String(outcome.error)}`, { cause: outcome.error })
    expect(outcome.value, context).toEqual(expected.value)
    return
  }
  expect(outcome.ok, `${context}: expected a coded error for ${expected.names.join(' or ')}, got an answer`).toBe(false)
  const error = (outcome as { error: unknown }).error
  expect(isPriceStoreError(error), `${context}: not a PriceStoreError: ${String(error)}`).toBe(true)
  const { code, details, message } = error as { code: string; details: { key?: string }; message: string }
  expect(code, `${context}: ${message}`).toBe('PRICE_CORRUPT_VALUE')
  expect(expected.matches(details.key ?? ''), `${context}: details.key ${JSON.stringify(details.key)} names none of ${expected.names.join(', ')}`).toBe(true)
  expect(message, context).toContain(details.key)
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of iterable) out.push(item)
  return out
}

/** Runs a query every way the store offers it: `store.query` and the matching typed method (and `rangeStream`). */
async function checkEveryWay(store: PriceStore, model: Model, q: Query, context: string, tail = 0): Promise<void> {
  const expected = expectation(model, q, tail)
  const name = `${context}: ${toParams(q)}`
  check(await settle(() => store.query(toParams(q) as QueryParams)), expected, `${name} (query)`)
  if (q.symbol !== undefined && q.interval !== undefined) {
    const range = { from: q.from ?? 0, to: q.to ?? MAX, interval: q.interval }
    check(await settle(() => store.range(q.symbol as string, { ...range, ...(q.offset === undefined ? {} : { offset: q.offset }), ...(q.limit === undefined ? {} : { limit: q.limit }) })), expected, `${name} (range)`)
    if (q.offset === undefined && q.limit === undefined) check(await settle(() => collect(store.rangeStream(q.symbol as string, range))), expected, `${name} (rangeStream)`)
  } else if (q.symbol !== undefined) {
    const { symbol, interval: _, symbols: __, ...options } = q
    check(await settle(() => store.latest(symbol, options)), expected, `${name} (latest)`)
  } else {
    check(await settle(() => store.several(q.symbols, { ...(q.from === undefined ? {} : { from: q.from }), ...(q.to === undefined ? {} : { to: q.to }) })), expected, `${name} (several)`)
  }
}

// ---------------------------------------------------------------------------

/** The store configurations every damage is read with: the hot tail off (and every cache), on, and small. */
const CONFIGS: readonly { readonly name: string; readonly cache: NonNullable<PriceStoreOptions['cache']> }[] = [
  { name: 'no caches', cache: { recordsPerSymbol: 0, headBytes: 0, chunkBytes: 0 } },
  { name: 'hot tail 128 (default caches)', cache: { recordsPerSymbol: 128 } },
  { name: 'hot tail 4', cache: { recordsPerSymbol: 4 } },
]

const dirs: { values?: string; entries?: string } = {}
const valueModel = buildModel(VALUE_SET)
const entryModel = buildModel(ENTRY_SET)
const scratch: string[] = []

/** A store on a fresh copy of one damaged data set, so nothing one store does on close reaches the next. */
async function openCopy(set: 'values' | 'entries', options: Partial<PriceStoreOptions> = {}): Promise<PriceStore> {
  const copy = await mkdtemp(join(tmpdir(), 'price-store-damaged-copy-'))
  scratch.push(copy)
  await cp(dirs[set] as string, copy, { recursive: true })
  return PriceStore.open(copy, { provider: PROVIDER, ...options })
}

beforeAll(async () => {
  dirs.values = await mkdtemp(join(tmpdir(), 'price-store-damaged-values-'))
  await buildDamagedStore(dirs.values, VALUE_SET)
  dirs.entries = await mkdtemp(join(tmpdir(), 'price-store-damaged-entries-'))
  await buildDamagedStore(dirs.entries, ENTRY_SET)
})

afterAll(async () => {
  for (const dir of [dirs.values, dirs.entries, ...scratch]) if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

const at = (symbol: string, i: number): number => recordAt(symbol, i).timestamp

/** Random queries of every form over `symbols`, aimed at the records' times and the hours' edges. */
function queryArb(symbols: readonly string[]): fc.Arbitrary<Query> {
  const time = fc.oneof(
    fc.integer({ min: -3, max: PER_SYMBOL + 2 }).chain((i) => fc.constantFrom(T0 + i * 6 * MINUTE - 1, T0 + i * 6 * MINUTE, T0 + i * 6 * MINUTE + 1)),
    fc.integer({ min: -3, max: PER_SYMBOL + 2 }).chain((i) => fc.constantFrom(P3 + i * MINUTE - 1, P3 + i * MINUTE, P3 + i * MINUTE + 1)),
    fc.constantFrom(0, P1 - 1, P1, P1 + 33 * MINUTE, P2 - 1, P2, MAX),
  )
  const opt = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined })
  const window = fc.tuple(opt(time), opt(time)).map(([a, b]) => (a !== undefined && b !== undefined && a > b ? [b, a] : [a, b]))
  return fc.oneof(
    fc.record({ symbol: fc.constantFrom(...symbols), limit: opt(fc.integer({ min: 1, max: 35 })), offset: opt(fc.integer({ min: 0, max: 30 })), window }),
    fc.record({ symbols: opt(fc.uniqueArray(fc.constantFrom(...symbols), { minLength: 1, maxLength: 5 })), window }),
    fc.record({
      symbol: fc.constantFrom(...symbols), window: fc.tuple(time, time).map(([a, b]) => [Math.min(a, b), Math.max(a, b)]),
      interval: fc.constantFrom(1, 10_000, 60_000, 7 * MINUTE, HEAD_MS, 2 * HEAD_MS, HOUR, 2 * HOUR),
      offset: opt(fc.integer({ min: 0, max: 30 })), limit: opt(fc.integer({ min: 1, max: 30 })),
    }),
  ).map(({ window: [from, to], ...rest }) => {
    const q: Query = {}
    for (const [key, value] of Object.entries({ ...rest, from, to })) if (value !== undefined) (q as Record<string, unknown>)[key] = value
    return q
  })
}

async function randomQueries(store: PriceStore, model: Model, context: string, tail: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(queryArb([...model.bySymbol.keys(), 'NONE']), async (q) => {
      check(await settle(() => store.query(toParams(q))), expectation(model, q, tail), `${context}: ${toParams(q)}`)
    }),
    { numRuns: 300 },
  )
}

describe.each(CONFIGS)('damaged values, $name', ({ name, cache }) => {
  let store: PriceStore
  const model = valueModel

  beforeAll(async () => {
    store = await openCopy('values', { cache })
  })

  afterAll(async () => {
    await store?.close()
  })

  for (const plan of VALUE_DAMAGE) {
    it(`${plan.symbol}: ${plan.what} → PRICE_CORRUPT_VALUE naming the record, only on queries whose answer holds it`, async () => {
      const { symbol, index } = plan
      const damagedAt = at(symbol, index)
      const queries: Query[] = [
        // The newest record, and latest-N just short of and just reaching the damaged one.
        { symbol },
        { symbol, limit: PER_SYMBOL - 1 - index },
        { symbol, limit: PER_SYMBOL - index },
        { symbol, limit: PER_SYMBOL },
        { symbol, limit: 3, offset: PER_SYMBOL - index - 1 },
        { symbol, limit: 3, offset: PER_SYMBOL - index },
        // As of a time: at the damaged record, and just before it.
        { symbol, to: damagedAt },
        { symbol, to: damagedAt - 1 },
        { symbol, from: damagedAt, limit: 2 },
        // Several: named, with a window, and every symbol.
        { symbols: [symbol, 'GOOD'] },
        { symbols: ['ETH', symbol], to: damagedAt },
        { symbols: ['ETH', symbol], to: damagedAt - 1 },
        {},
        { to: damagedAt },
        // Ranges: every record (1 ms), from the heads (10 min, 1 h), scanned (7 min), windows ending on and around the damaged record.
        { symbol, from: 0, to: MAX, interval: 1 },
        { symbol, from: 0, to: MAX, interval: HEAD_MS },
        { symbol, from: 0, to: MAX, interval: HOUR },
        { symbol, from: 0, to: MAX, interval: 7 * MINUTE },
        { symbol, from: T0, to: damagedAt, interval: HEAD_MS },
        { symbol, from: T0, to: damagedAt + 1, interval: 2 * HEAD_MS },
        { symbol, from: T0, to: damagedAt - 1, interval: HEAD_MS },
        { symbol, from: damagedAt - 5, to: damagedAt + 5, interval: 1 },
        { symbol, from: 0, to: MAX, interval: 1, offset: index + 1 },
        { symbol, from: 0, to: MAX, interval: 1, limit: index },
      ]
      // (A limit of 0 is a bad query, not a probe of the damage: skip it for the newest record.)
      for (const q of queries.filter((query) => query.limit === undefined || query.limit >= 1)) await checkEveryWay(store, model, q, `${name}, ${symbol}`)
      // The damage never spreads: the good symbols answer in full afterwards.
      for (const good of GOOD_SYMBOLS) {
        await checkEveryWay(store, model, { symbol: good, limit: PER_SYMBOL }, `${name}, after ${symbol}`)
        await checkEveryWay(store, model, { symbol: good, from: 0, to: MAX, interval: 1 }, `${name}, after ${symbol}`)
      }
      expect(store.status).toBe('open')
    })
  }

  it('random queries over damaged and good symbols: the model answer, or the coded error naming a damaged record the answer holds', async () => {
    await randomQueries(store, model, name, cache.recordsPerSymbol ?? 0)
  })
})

describe.each(CONFIGS)('damaged chunk and heads entries, $name', ({ name, cache }) => {
  let store: PriceStore
  const model = entryModel

  beforeAll(async () => {
    store = await openCopy('entries', { cache })
  })

  afterAll(async () => {
    await store?.close()
  })

  for (const plan of ENTRY_DAMAGE) {
    const named = plan.kind === 'heads' ? 'the heads entry' : plan.part === KEYS_PART ? 'the key column' : `the chunk part ${plan.part}`
    it(`${plan.symbol}: ${plan.what} → PRICE_CORRUPT_VALUE naming ${named}, only on queries that read that hour`, async () => {
      const symbol = plan.symbol
      const list = model.bySymbol.get(symbol) as readonly Written[]
      const p2Count = list.filter((w) => periodOf(w.timestamp) === periodOf(P2)).length
      const queries: Query[] = [
        // The newest records are in P2: latest-N just short of and just reaching P1.
        { symbol },
        { symbol, limit: p2Count },
        { symbol, limit: p2Count + 1 },
        { symbol, limit: 3, offset: p2Count - 3 },
        { symbol, limit: 3, offset: p2Count },
        // As of a time in P0, P1, P2 and at their edges.
        { symbol, to: P1 - 1 },
        { symbol, to: P1 },
        { symbol, to: P1 + 30 * MINUTE },
        { symbol, to: P2 - 1 },
        { symbol, to: P2 },
        { symbol, from: P2, limit: 30 },
        { symbol, from: P1 + 59 * MINUTE, to: P2 + 7 * MINUTE, limit: 5 },
        { symbol, from: 0, to: P1 - 1, limit: 30 },
        // Several.
        { symbols: [symbol, 'GOOD'] },
        { symbols: [symbol], to: P1 + 30 * MINUTE },
        { symbols: ['ETH', symbol], to: P1 - 1 },
        {},
        { to: P1 + 30 * MINUTE },
        { to: P2 + 30 * MINUTE },
        // Ranges: scanned (1 ms, 7 min) and from the heads (10 min, 1 h), over P1 or around it, and ending inside a bucket of P1.
        { symbol, from: 0, to: MAX, interval: 1 },
        { symbol, from: P2, to: MAX, interval: 1 },
        { symbol, from: 0, to: P1 - 1, interval: 1 },
        { symbol, from: 0, to: MAX, interval: 7 * MINUTE },
        { symbol, from: 0, to: MAX, interval: HEAD_MS },
        { symbol, from: 0, to: MAX, interval: HOUR },
        { symbol, from: P1, to: P2 - 1, interval: HEAD_MS },
        { symbol, from: T0, to: P1 + 30 * MINUTE, interval: HEAD_MS },
        { symbol, from: T0, to: P1 + 33 * MINUTE, interval: HEAD_MS },
        { symbol, from: T0, to: P1 + 36 * MINUTE, interval: HEAD_MS },
        { symbol, from: T0, to: P1 + 36 * MINUTE, interval: HOUR },
        { symbol, from: P2 + 1, to: MAX, interval: HEAD_MS },
        { symbol, from: 0, to: MAX, interval: HEAD_MS, limit: 3 },
      ]
      for (const q of queries) await checkEveryWay(store, model, q, `${name}, ${symbol}`, cache.recordsPerSymbol ?? 0)
      for (const good of GOOD_SYMBOLS) await checkEveryWay(store, model, { symbol: good, limit: PER_SYMBOL }, `${name}, after ${symbol}`)
      await checkEveryWay(store, model, { symbols: GOOD_SYMBOLS }, `${name}, after ${symbol}`)
      expect(store.status).toBe('open')
    })
  }

  it('random queries over damaged and good symbols: the model answer, or the coded error naming a damaged entry the answer needs', async () => {
    await randomQueries(store, model, name, cache.recordsPerSymbol ?? 0)
  })
})

describe('a hot tail is a cache: it never makes a query fail that answers without it', () => {
  // Loading a symbol's hot tail reads its newest `recordsPerSymbol` records, often hours further back
  // than the query needs. Damage back there is not the query's business (store-options.ts: "answers
  // are the same whatever the sizes"; docs/errors.md: "other records stay readable").
  let withTail: PriceStore
  let without: PriceStore

  beforeAll(async () => {
    withTail = await openCopy('entries', { cache: { recordsPerSymbol: 128 } })
    without = await openCopy('entries', { cache: { recordsPerSymbol: 0 } })
  })

  afterAll(async () => {
    await withTail?.close()
    await without?.close()
  })

  it.each(['TRUNC', 'GONE', 'HEADS'])('%s: the newest record, a range of the newest hour, and every symbol\'s latest answer as without the tail', async (symbol) => {
    const queries: Query[] = [{ symbol }, { symbol, from: P2, to: MAX, interval: 1 }, { symbols: [symbol, 'GOOD'] }, {}]
    for (const q of queries) {
      const expected = expectation(entryModel, q)
      expect(expected.kind, `the model answers ${toParams(q)}`).toBe('answer')
      check(await settle(() => without.query(toParams(q))), expected, `no tail: ${toParams(q)}`)
      check(await settle(() => withTail.query(toParams(q))), expected, `tail 128: ${toParams(q)}`)
    }
  })
})

describe('repair by rewriting', () => {
  it('writing a damaged record again makes every query answer, before and after the store seals and reopens, with the cache on and off', async () => {
    const store = await openCopy('values', { cache: { recordsPerSymbol: 128 } })
    const location = scratch.at(-1) as string
    const repaired: Model = { bySymbol: valueModel.bySymbol, damaged: new Map(), entries: [] }
    try {
      // Load the tails with the damaged rows in them first.
      for (const plan of VALUE_DAMAGE) await settle(() => store.latest(plan.symbol, { limit: PER_SYMBOL }))
      await store.putMany(VALUE_DAMAGE.map((plan) => recordAt(plan.symbol, plan.index).input))
      for (const plan of VALUE_DAMAGE) {
        await checkEveryWay(store, repaired, { symbol: plan.symbol, limit: PER_SYMBOL }, 'repaired, cached')
        await checkEveryWay(store, repaired, { symbol: plan.symbol, from: 0, to: MAX, interval: 1 }, 'repaired, cached')
        await checkEveryWay(store, repaired, { symbol: plan.symbol, from: 0, to: MAX, interval: HEAD_MS }, 'repaired, cached')
      }
      await checkEveryWay(store, repaired, {}, 'repaired, cached')
    } finally {
      await store.close()
    }
    for (const cache of [{ recordsPerSymbol: 0, headBytes: 0, chunkBytes: 0 }, { recordsPerSymbol: 128 }]) {
      const cold = await PriceStore.open(location, { provider: PROVIDER, cache })
      try {
        for (const plan of VALUE_DAMAGE) {
          await checkEveryWay(cold, repaired, { symbol: plan.symbol, limit: PER_SYMBOL }, `repaired, reopened ${JSON.stringify(cache)}`)
          await checkEveryWay(cold, repaired, { symbol: plan.symbol, from: 0, to: MAX, interval: HEAD_MS }, `repaired, reopened ${JSON.stringify(cache)}`)
        }
        await checkEveryWay(cold, repaired, {}, `repaired, reopened ${JSON.stringify(cache)}`)
      } finally {
        await cold.close()
      }
    }
  })
})

// ---------------------------------------------------------------------------
// Damage that must stop the store from opening.

/** Every entry of the database, to prove a refused open wrote nothing. */
async function everything(location: string): Promise<string[]> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(location, { keyEncoding: 'view', valueEncoding: 'view' })
  await db.open()
  try {
    return (await db.iterator().all()).map(([k, v]) => `${Buffer.from(k).toString('hex')}=${Buffer.from(v).toString('hex')}`)
  } finally {
    await db.close()
  }
}

/** A small store (GOOD in chunks, LOGOK in the log), damaged by `damage`, then handed to `run`. */
async function withSmallStore(damage: (levels: Levels) => Promise<void>, run: (location: string) => Promise<void>): Promise<void> {
  const location = await mkdtemp(join(tmpdir(), 'price-store-open-damage-'))
  try {
    await writeDataSet(location, (symbol) => symbol === 'GOOD' || symbol === 'LOGOK')
    const db = new ClassicLevel(location)
    await db.open()
    await damage(sublevels(db))
    await db.close()
    await run(location)
  } finally {
    await rm(location, { recursive: true, force: true })
  }
}

/** Opens `location`, which must be refused with `code` for every cache setting, changing nothing and leaving nothing locked. */
async function refused(location: string, code: PriceStoreErrorCode, provider = PROVIDER): Promise<{ message: string; details: { key?: string } }> {
  const before = await everything(location)
  let error: { message: string; details: { key?: string } } | undefined
  for (const cache of [{ recordsPerSymbol: 0 }, { recordsPerSymbol: 128 }]) {
    const outcome = await settle(() => PriceStore.open(location, { provider, cache }))
    if (outcome.ok) await (outcome.value as PriceStore).close()
    expect(outcome.ok, `open with ${JSON.stringify(cache)} was expected to fail with ${code}`).toBe(false)
    const failure = (outcome as { error: { code?: string; message: string; details: { key?: string } } }).error
    expect(isPriceStoreError(failure, code), `${failure.code}: ${failure.message}`).toBe(true)
    error = failure
  }
  // Unchanged, and not locked: the raw database opens.
  expect(await everything(location)).toEqual(before)
  return error as { message: string; details: { key?: string } }
}

/** Opens `location` and checks that the small data set answers in full. */
async function answersInFull(location: string): Promise<void> {
  const store = await PriceStore.open(location, { provider: PROVIDER })
  try {
    for (const symbol of ['GOOD', 'LOGOK']) {
      expect(await store.latest(symbol, { limit: PER_SYMBOL })).toEqual([...(valueModel.bySymbol.get(symbol) ?? [])].reverse().map((w) => returned(w)))
    }
  } finally {
    await store.close()
  }
}

describe('the format version in meta', () => {
  /** The way over that a refusal names: export with the release that wrote the store, import with this one. */
  function namesTheWayOver(message: string): void {
    expect(message).toContain('format 9 only')
    expect(message).toContain('price-store export')
    expect(message).toContain('price-store import')
  }

  for (const value of ['1', '2', '3', '4', '5', '6', '7', '8']) {
    it(`format "${value}" (an earlier layout) → PRICE_UNSUPPORTED_FORMAT on open, naming the way over; nothing written, nothing locked`, async () => {
      await withSmallStore(async (levels) => {
        expect(await levels.meta.get('format')).toBe('9')
        await levels.meta.put('format', value)
      }, async (location) => {
        const error = await refused(location, 'PRICE_UNSUPPORTED_FORMAT')
        expect(error.message).toContain(JSON.stringify(value))
        namesTheWayOver(error.message)
      })
    })
  }

  it('a store the previous release wrote (format 8, test/store/fixtures/format-8-store) → PRICE_UNSUPPORTED_FORMAT naming the way over; nothing written, nothing locked', async () => {
    const location = await mkdtemp(join(tmpdir(), 'price-store-format-8-'))
    try {
      await cp(new URL('../store/fixtures/format-8-store', import.meta.url).pathname, location, { recursive: true })
      const provider = { name: 'redstone', id: 'fixture-provider', publicKey: 'fixture-key' }
      const error = await refused(location, 'PRICE_UNSUPPORTED_FORMAT', provider)
      expect(error.message).toContain('"8"')
      namesTheWayOver(error.message)
      // Its records are still there, as that release wrote them: the provider it records reads back.
      expect(await PriceStore.storedProvider(location)).toEqual(provider)
    } finally {
      await rm(location, { recursive: true, force: true })
    }
  })

  for (const [value, what] of [['0', 'format "0"'], ['', 'an empty format'], ['9.0', 'format "9.0"'], ['99', 'format "99"'], [undefined, 'no format, with data']] as const) {
    it(`${what} → PRICE_UNSUPPORTED_FORMAT on open, nothing written, nothing locked; restoring "9" reads everything`, async () => {
      await withSmallStore(async (levels) => {
        if (value === undefined) await levels.meta.del('format')
        else await levels.meta.put('format', value)
      }, async (location) => {
        const error = await refused(location, 'PRICE_UNSUPPORTED_FORMAT')
        if (value !== undefined && value !== '') expect(error.message).toContain(JSON.stringify(value))
        const db = new ClassicLevel(location)
        await db.open()
        await sublevels(db).meta.put('format', '9')
        await db.close()
        await answersInFull(location)
      })
    })
  }
})

describe('the provider in meta', () => {
  const other = { name: 'redstone', id: 'another-provider', publicKey: 'another-key' }

  it.each([
    ['another id', { ...PROVIDER, id: other.id }, 'id'],
    ['another public key', { ...PROVIDER, publicKey: other.publicKey }, 'public key'],
    ['another id and public key', { ...PROVIDER, id: other.id, publicKey: other.publicKey }, 'id'],
  ])('opening with %s → PRICE_PROVIDER_MISMATCH naming what is stored and what was given; nothing written', async (_name, given, differs) => {
    await withSmallStore(async () => {}, async (location) => {
      const error = await refused(location, 'PRICE_PROVIDER_MISMATCH', given)
      for (const text of [PROVIDER.id, PROVIDER.publicKey, given.id, given.publicKey]) expect(error.message).toContain(JSON.stringify(text))
      expect(error.message).toContain(differs)
      // Another name with the same id and key is the same provider.
      const renamed = await PriceStore.open(location, { provider: { ...PROVIDER, name: 'renamed' } })
      await renamed.close()
      await answersInFull(location)
    })
  })

  it.each([
    ['not JSON', '{"id": '],
    ['JSON without a public key', JSON.stringify({ name: 'redstone', id: PROVIDER.id })],
    ['a JSON string', JSON.stringify('redstone')],
    ['deleted', undefined],
  ])('a stored provider that is %s → PRICE_UNSUPPORTED_FORMAT on open; nothing written', async (_name, value) => {
    await withSmallStore(async (levels) => {
      expect(JSON.parse((await levels.meta.get('provider')) ?? 'null')).toEqual(PROVIDER)
      if (value === undefined) await levels.meta.del('provider')
      else await levels.meta.put('provider', value)
    }, async (location) => {
      await refused(location, 'PRICE_UNSUPPORTED_FORMAT')
    })
  })
})

describe('a damaged log entry', () => {
  /** The one log entry of the small store (LOGOK's records), its key, and its records. */
  async function theLogEntry(levels: Levels): Promise<{ key: Buffer; bytes: Buffer; period: number; sequence: number }> {
    const entries = await levels.log.iterator().all()
    expect(entries.length, 'the small store has one log entry').toBe(1)
    const [key, value] = entries[0] as [Uint8Array, Uint8Array]
    const keyBytes = Buffer.from(key)
    // `period (u32 BE) · sequence (u64 BE)`
    return { key: keyBytes, bytes: Buffer.from(value), period: keyBytes.readUInt32BE(0), sequence: keyBytes.readUInt32BE(4) * 2 ** 32 + keyBytes.readUInt32BE(8) }
  }

  const namesLogEntry = (error: { message: string; details: { key?: string } }, period: number, sequence: number): void => {
    const key = error.details.key ?? ''
    expect(key).toContain('log entry')
    expect(key).toContain(String(sequence))
    expect(key).toContain(String(period * HOUR))
    expect(error.message).toContain(key)
  }

  it.each([
    ['cut in the middle of a record', (bytes: Buffer) => bytes.subarray(0, bytes.length - 7)],
    ['cut inside its first symbol', (bytes: Buffer) => bytes.subarray(0, 3)],
    ['with version byte 2', (bytes: Buffer) => patch(bytes, 0, 2)],
    ['empty', () => Buffer.alloc(0)],
    ['with a value length past its end', (bytes: Buffer) => Buffer.concat([bytes, Buffer.from([1, 0x41, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x61, 0x7f])])],
  ])('%s → opening fails with PRICE_CORRUPT_VALUE naming the entry; nothing written, nothing locked; deleting the entry opens the rest', async (_name, damage) => {
    let entry: Awaited<ReturnType<typeof theLogEntry>> | undefined
    await withSmallStore(async (levels) => {
      entry = await theLogEntry(levels)
      await levels.log.put(entry.key, damage(entry.bytes))
    }, async (location) => {
      const { period, sequence, key } = entry as NonNullable<typeof entry>
      namesLogEntry(await refused(location, 'PRICE_CORRUPT_VALUE'), period, sequence)
      const db = new ClassicLevel(location)
      await db.open()
      await sublevels(db).log.del(key)
      await db.close()
      const store = await PriceStore.open(location, { provider: PROVIDER })
      try {
        expect(await store.latest('GOOD', { limit: PER_SYMBOL })).toEqual([...(valueModel.bySymbol.get('GOOD') ?? [])].reverse().map((w) => returned(w)))
        expect(await store.latest('LOGOK')).toEqual([])
      } finally {
        await store.close()
      }
    })
  })

  it('a log key of the wrong length → opening fails with PRICE_CORRUPT_VALUE naming the key, not a storage error', async () => {
    await withSmallStore(async (levels) => {
      const entry = await theLogEntry(levels)
      await levels.log.put(entry.key.subarray(0, 5), entry.bytes)
    }, async (location) => {
      const error = await refused(location, 'PRICE_CORRUPT_VALUE')
      expect(error.details.key ?? '').toContain('log')
    })
  })
})

// ---------------------------------------------------------------------------

describe('random damage (property)', () => {
  const FIELDS = ['id', 'symbol', 'provider', 'value', 'signature', 'permawebTx', 'version', 'source', 'timestamp']
  const good = chunkSeries('GOOD').slice(0, 12)
  const bad = chunkSeries('BAD').slice(0, 12)
  const badPeriod = periodOf(T0)

  /** A store on `db` with GOOD and BAD sealed in chunks (with `sealed`) or left in the log, closed (or crashed) again. */
  async function seed(db: MemoryLevel, sealed: boolean): Promise<void> {
    const store = await PriceStore.open(db, { provider: PROVIDER, ...(sealed ? { openBytes: 0 } : {}) })
    await store.putMany([...good, ...bad].map((w) => w.input))
    if (sealed) await store.close()
    // In the log: the database closes under the store, as in a crash.
    else await db.close()
  }

  function memoryLevels(db: MemoryLevel) {
    const bytes = (name: string) => db.sublevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' })
    return { chunks: bytes('c'), heads: bytes('h'), log: bytes('l') }
  }

  /** Reads BAD every way and GOOD after it: BAD gives records of the documented shape or a coded error naming BAD; GOOD answers in full. */
  async function probe(db: MemoryLevel, recordsPerSymbol: number): Promise<void> {
    const opened = await settle(() => PriceStore.open(db, { provider: PROVIDER, cache: { recordsPerSymbol } }))
    if (!opened.ok) {
      // Only the log is replayed on open: a damaged log entry may refuse it, with a coded error.
      expect(isPriceStoreError(opened.error, 'PRICE_CORRUPT_VALUE'), String(opened.error)).toBe(true)
      return
    }
    const store = opened.value as PriceStore
    try {
      for (const run of [
        () => store.latest('BAD', { limit: 20 }),
        () => store.range('BAD', { from: 0, to: MAX, interval: 1 }),
        () => store.range('BAD', { from: 0, to: MAX, interval: HEAD_MS }),
        () => store.several(['BAD', 'GOOD']),
      ]) {
        const outcome = await settle(run)
        if (outcome.ok) {
          const records = Array.isArray(outcome.value) ? outcome.value as PriceRecord[] : Object.values(outcome.value as Record<string, PriceRecord>)
          for (const record of records) {
            expect(Object.keys(record).slice(0, FIELDS.length)).toEqual(FIELDS)
            expect(record.symbol === 'BAD' || record.symbol === 'GOOD').toBe(true)
          }
        } else {
          const error = outcome.error as { code: string; details: { key?: string } }
          expect(isPriceStoreError(error, 'PRICE_CORRUPT_VALUE'), String(error)).toBe(true)
          expect(error.details.key ?? '').toContain('BAD@')
        }
      }
      expect(await store.latest('GOOD', { limit: 20 })).toEqual([...good].reverse().map((w) => returned(w)))
      expect(store.status).toBe('open')
    } finally {
      await store.close()
    }
  }

  const randomBytes = fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    // A valid start (format 3, then a small count) before random bytes.
    fc.tuple(fc.uint8Array({ maxLength: 4 }), fc.uint8Array({ maxLength: 64 })).map(([head, rest]) => Uint8Array.from([3, ...head, ...rest])),
  )

  it('any bytes as a chunk part, a heads entry or a record value inside a chunk: records or PRICE_CORRUPT_VALUE naming BAD; GOOD unaffected', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('part', 'heads', 'value'), randomBytes, fc.nat(bad.length - 1), fc.constantFrom(0, 8), async (where, bytes, index, recordsPerSymbol) => {
        const db = new MemoryLevel()
        await seed(db, true)
        await db.open()
        const levels = memoryLevels(db)
        if (where === 'part') await levels.chunks.put(chunkKey(badPeriod, 'BAD', 0), bytes)
        else if (where === 'heads') await levels.heads.put(headsKey('BAD', badPeriod), bytes)
        else await damageChunkValue(levels as unknown as Levels, bad[index] as Written, () => Buffer.from(bytes))
        await db.close()
        await probe(db, recordsPerSymbol)
      }),
      { numRuns: 150 },
    )
  })

  it('any bytes as a log entry, or as a record value inside it: opening refuses with PRICE_CORRUPT_VALUE, or records or PRICE_CORRUPT_VALUE naming BAD', async () => {
    await fc.assert(
      fc.asyncProperty(fc.boolean(), randomBytes, fc.nat(bad.length - 1), fc.constantFrom(0, 8), async (whole, bytes, index, recordsPerSymbol) => {
        const db = new MemoryLevel()
        await seed(db, false)
        await db.open()
        const levels = memoryLevels(db)
        if (whole) {
          // A second log entry, after the good one, that holds anything.
          const [key] = await levels.log.keys().all()
          const damagedKey = Buffer.from(key as Uint8Array)
          damagedKey[11] = (damagedKey[11] as number) + 1
          await levels.log.put(damagedKey, bytes)
        } else {
          await damageLogValue(levels as unknown as Levels, bad[index] as Written, () => Buffer.from(bytes))
        }
        await db.close()
        await probe(db, recordsPerSymbol)
      }),
      { numRuns: 150 },
    )
  })
})
