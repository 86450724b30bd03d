import { describeLog } from '../../keys/key-layout.js'
import { PLACE_FIELDS, readLogEntry } from '../../keys/log-codec.js'
import type { LogPlaces } from '../../keys/log-codec.js'
import type { Provider } from '../../types.js'
import type { OpenWrite } from '../rows/open-area.js'
import { Row } from '../rows/row.js'

/** One log entry's records as open rows (views into the entry's bytes), by symbol; parsed when `places` are not known. */
export function openWrite(
  period: number, sequence: number, key: Buffer, entry: Buffer, provider: Provider, places?: LogPlaces,
): OpenWrite {
  const rows = new Map<string, Row[]>()
  const name = (): string => describeLog(period, sequence)
  const add = (symbol: string, timestamp: number, idStart: number, idEnd: number, valueStart: number, valueEnd: number): void => {
    let list = rows.get(symbol)
    if (list === undefined) rows.set(symbol, (list = []))
    list.push(new Row(symbol, timestamp, entry, idStart, idEnd, valueStart, valueEnd, name, provider))
  }
  if (places === undefined) readLogEntry(entry, add)
  else {
    const { symbols, numbers } = places
    for (let i = 0, at = 0; i < symbols.length; i++, at += PLACE_FIELDS) {
      add(symbols[i] as string, numbers[at] as number, numbers[at + 1] as number, numbers[at + 2] as number, numbers[at + 3] as number, numbers[at + 4] as number)
    }
  }
  return { period, logKey: key, bytes: entry.length, rows }
}

/** The rows of a batch's writes by symbol, for the hot tails. */
export function rowsBySymbol(writes: readonly OpenWrite[]): Map<string, Row[]> {
  const bySymbol = new Map<string, Row[]>()
  for (const write of writes) {
    for (const [symbol, rows] of write.rows) {
      const list = bySymbol.get(symbol)
      if (list === undefined) bySymbol.set(symbol, [...rows])
      else list.push(...rows)
    }
  }
  return bySymbol
}
