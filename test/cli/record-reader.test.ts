import { Readable } from 'node:stream'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ArraySyntaxError, JsonArraySplitter } from '../../src/cli/json-array-splitter.js'
import { InputSyntaxError, readRecords } from '../../src/cli/record-reader.js'

async function readAll(text: string | string[]): Promise<{ value: unknown; line: number }[]> {
  const out: { value: unknown; line: number }[] = []
  for await (const record of readRecords(Readable.from(Array.isArray(text) ? text : [text]), 'input')) out.push(record)
  return out
}

describe('JsonArraySplitter', () => {
  it('splits top-level elements, whatever strings and nesting hold', () => {
    const splitter = new JsonArraySplitter()
    const text = '[{"a":"x,]}\\"["}, [1,[2,3]], "s\\\\", 42, null, {"b":{"c":[]}}]'
    const elements = splitter.push(text, 1)
    splitter.end()
    expect(elements.map((element) => JSON.parse(element.text))).toEqual(JSON.parse(text))
    expect(elements.map((element) => element.index)).toEqual([0, 1, 2, 3, 4, 5])
  })

  it('any JSON array, pretty or compact, cut into any pieces, gives back its elements and their lines', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 8 }),
        fc.constantFrom(0, 1, 2),
        fc.array(fc.nat(), { maxLength: 10 }),
        (values, indent, cuts) => {
          const text = JSON.stringify(values, null, indent)
          const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b)
          const splitter = new JsonArraySplitter()
          const elements = []
          let start = 0
          for (const point of [...points, text.length]) {
            const piece = text.slice(start, point)
            const line = text.slice(0, start).split('\n').length
            elements.push(...splitter.push(piece, line))
            start = point
          }
          splitter.end()
          expect(elements.map((element) => JSON.parse(element.text))).toEqual(JSON.parse(text))
          let cursor = 0
          for (const element of elements) {
            // The element's first character is on the line the splitter reports.
            const first = element.text.trimStart()
            const offset = text.indexOf(first, cursor)
            expect(offset).toBeGreaterThanOrEqual(0)
            expect(element.line).toBe(text.slice(0, offset).split('\n').length)
            cursor = offset + first.length
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it.each([
    ['{}', 'must start with "["'],
    ['[1,,2]', 'empty element'],
    ['[,1]', 'empty element'],
    ['[1,]', 'before "]"'],
    ['[1}]', 'unexpected "}"'],
    ['[1] x', 'after the closing'],
  ])('%s is refused: %s', (text, message) => {
    const splitter = new JsonArraySplitter()
    const split = (): void => {
      splitter.push(text, 1)
      splitter.end()
    }
    expect(split).toThrow(ArraySyntaxError)
    const again = new JsonArraySplitter()
    expect(() => {
      again.push(text, 1)
      again.end()
    }).toThrow(message)
  })
})

describe('readRecords', () => {
  it('NDJSON: one value per line, blank lines skipped, line numbers kept', async () => {
    expect(await readAll('{"a":1}\n\n  \n{"a":2}\n')).toEqual([
      { value: { a: 1 }, line: 1 },
      { value: { a: 2 }, line: 4 },
    ])
  })

  it('NDJSON whose lines arrive in odd pieces', async () => {
    expect(await readAll(['{"a"', ':1}\n{"a":', '2}'])).toEqual([
      { value: { a: 1 }, line: 1 },
      { value: { a: 2 }, line: 2 },
    ])
  })

  it('a JSON array is told apart by its first non-blank character', async () => {
    expect(await readAll('\n\n  [\n  {"a": 1},\n  {"a": 2}\n]\n')).toEqual([
      { value: { a: 1 }, line: 4 },
      { value: { a: 2 }, line: 5 },
    ])
  })

  it('an empty input has no records', async () => {
    expect(await readAll('')).toEqual([])
    expect(await readAll('\n \n')).toEqual([])
  })

  it('invalid JSON is an InputSyntaxError naming file and line', async () => {
    await expect(readAll('{"a":1}\n{oops}\n')).rejects.toThrow(InputSyntaxError)
    await expect(readAll('{"a":1}\n{oops}\n')).rejects.toThrow(/^input:2: invalid JSON/)
  })
})
