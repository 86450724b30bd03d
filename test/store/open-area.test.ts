/**
 * The open area's indexes (src/store/rows/open-area.ts) against a model
 * kept as plain lists: after any sequence of batches and seals (whole hours
 * or their oldest log entries), the hours listed, each symbol's hours and
 * each (hour, symbol)'s rows are what the writes still held say. The area
 * carries its sorted hour list from one version to the next, so this
 * checks that list both when it was asked for before and when it was not.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { OpenArea, type OpenWrite } from '../../src/store/rows/open-area.js'
import { Row } from '../../src/store/rows/row.js'
import { TEST_PROVIDER } from '../../src/testing/records.js'

const HOUR = 3_600_000
const SYMBOLS = ['A', 'B', 'C']

interface ModelWrite {
  readonly period: number
  readonly rows: readonly { symbol: string; timestamp: number; id: string }[]
}

function toWrite(write: ModelWrite, sequence: number): OpenWrite {
  const rows = new Map<string, Row[]>()
  for (const { symbol, timestamp, id } of write.rows) {
    const bytes = Buffer.from(id, 'utf8')
    const list = rows.get(symbol) ?? []
    list.push(new Row(symbol, timestamp, bytes, 0, bytes.length, 0, 0, 'test', TEST_PROVIDER))
    rows.set(symbol, list)
  }
  return { period: write.period, logKey: Buffer.from(`log-${sequence}`), bytes: write.rows.length * 10, rows }
}

const writeArb: fc.Arbitrary<ModelWrite> = fc.integer({ min: 0, max: 40 }).chain((period) =>
  fc.record({
    period: fc.constant(period),
    rows: fc.array(
      fc.record({ symbol: fc.constantFrom(...SYMBOLS), timestamp: fc.integer({ min: period * HOUR, max: period * HOUR + 5 }), id: fc.constantFrom('a', 'b') }),
      { minLength: 1, maxLength: 4 },
    ),
  }),
)
type Step = { kind: 'batch'; writes: ModelWrite[] } | { kind: 'seal'; pick: number; count: number } | { kind: 'ask' }
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('batch' as const), writes: fc.uniqueArray(writeArb, { minLength: 1, maxLength: 3, selector: (write) => write.period }) }),
  fc.record({ kind: fc.constant('seal' as const), pick: fc.nat(), count: fc.integer({ min: 1, max: 4 }) }),
  fc.constant({ kind: 'ask' as const }),
)

/** The model's rows of `symbol` in `period`: the last write of each (timestamp, id), in (timestamp, id) order. */
function modelRows(writes: readonly ModelWrite[], symbol: string): { timestamp: number; id: string }[] {
  const latest = new Map<string, { timestamp: number; id: string }>()
  for (const write of writes) for (const row of write.rows) if (row.symbol === symbol) latest.set(`${row.timestamp}/${row.id}`, { timestamp: row.timestamp, id: row.id })
  return [...latest.values()].sort((a, b) => a.timestamp - b.timestamp || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

const rowsOf = (area: OpenArea, symbol: string, period: number) => area.rows(symbol, period).map((row) => ({ timestamp: row.timestamp, id: row.id }))

describe('OpenArea', () => {
  // Hundreds of batches into one hour: its runs are merged past 64, or when read between batches.
  it('keeps one hour\'s rows right over hundreds of small batches, read or not between them (property)', () => {
    const batchArb = fc.record({ rows: fc.array(fc.record({ symbol: fc.constant('A'), timestamp: fc.integer({ min: 0, max: 50 }), id: fc.constantFrom('a', 'b') }), { minLength: 1, maxLength: 3 }), read: fc.integer({ min: 0, max: 99 }).map((n) => n === 0) })
    fc.assert(fc.property(fc.array(batchArb, { minLength: 60, maxLength: 300 }), (batches) => {
      let area = OpenArea.EMPTY
      const held: ModelWrite[] = []
      batches.forEach(({ rows, read }, sequence) => {
        const write = { period: 0, rows }
        area = area.withWrites([toWrite(write, sequence)])
        held.push(write)
        if (read) expect(rowsOf(area, 'A', 0)).toEqual(modelRows(held, 'A'))
      })
      expect(rowsOf(area, 'A', 0)).toEqual(modelRows(held, 'A'))
    }), { numRuns: 100 })
  })

  it('lists hours, each symbol\'s hours and rows as the writes still held say, whatever the order of batches and seals (property)', () => {
    fc.assert(fc.property(fc.array(stepArb, { maxLength: 40 }), (steps) => {
      let area = OpenArea.EMPTY
      const held = new Map<number, ModelWrite[]>()
      let sequence = 0
      for (const step of steps) {
        if (step.kind === 'batch') {
          area = area.withWrites(step.writes.map((write) => toWrite(write, sequence++)))
          for (const write of step.writes) held.set(write.period, [...(held.get(write.period) ?? []), write])
        } else if (step.kind === 'seal') {
          const periods = [...held.keys()]
          if (periods.length === 0) continue
          const period = periods[step.pick % periods.length] as number
          area = area.withoutEntries(new Map([[period, step.count]]))
          const left = (held.get(period) ?? []).slice(step.count)
          if (left.length === 0) held.delete(period)
          else held.set(period, left)
        } else {
          area.periods()
        }
      }
      const periods = [...held.keys()].sort((a, b) => a - b)
      expect(area.periods()).toEqual(periods)
      for (const symbol of SYMBOLS) {
        expect(area.periodsOf(symbol)).toEqual(periods.filter((period) => held.get(period)?.some((write) => write.rows.some((row) => row.symbol === symbol))))
        for (const period of periods) expect(rowsOf(area, symbol, period)).toEqual(modelRows(held.get(period) ?? [], symbol))
      }
      expect(area.bytes).toBe([...held.values()].flat().reduce((sum, write) => sum + write.rows.length * 10, 0))
    }), { numRuns: 500 })
  })
})
