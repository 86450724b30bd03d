/** One top-level element of a JSON array, still as text. */
export interface ArrayElement {
  readonly text: string
  /** Line (1-based) where the element starts. */
  readonly line: number
  /** Position in the array (0-based). */
  readonly index: number
}

/** The array's own syntax is broken (a missing `]`, a stray `,`...). */
export class ArraySyntaxError extends Error {
  readonly line: number

  constructor(line: number, message: string) {
    super(message)
    this.line = line
  }
}

type State = 'before' | 'first' | 'next' | 'element' | 'done'

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/**
 * Splits a JSON array, fed as pieces of text, into the text of its top-level
 * elements, so a large array is parsed one element at a time: memory holds
 * one element (and one piece), never the whole array. Only the array's own
 * syntax is checked here; each element is left to `JSON.parse`.
 */
export class JsonArraySplitter {
  #state: State = 'before'
  #depth = 0
  #inString = false
  #escaped = false
  #parts: string[] = []
  #startLine = 0
  #index = 0
  #line = 0

  /** Feeds the next piece of text, which starts on `line`; returns the elements it completes. */
  push(text: string, line: number): ArrayElement[] {
    const elements: ArrayElement[] = []
    this.#line = line
    let segment = -1 // where the current element's text starts in this piece
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i)
      if (code === 0x0a) this.#line++
      switch (this.#state) {
        case 'element': {
          if (this.#inString) {
            if (this.#escaped) this.#escaped = false
            else if (code === BACKSLASH) this.#escaped = true
            else if (code === QUOTE) this.#inString = false
            continue
          }
          if (code === QUOTE) this.#inString = true
          else if (code === OPEN_BRACE || code === OPEN_BRACKET) this.#depth++
          else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
            if (this.#depth > 0) this.#depth--
            else if (code === CLOSE_BRACE) throw new ArraySyntaxError(this.#line, 'unexpected "}" in the JSON array')
            else {
              elements.push(this.#finish(text, segment, i))
              this.#state = 'done'
            }
          } else if (code === COMMA && this.#depth === 0) {
            elements.push(this.#finish(text, segment, i))
            this.#state = 'next'
          }
          continue
        }
        case 'before':
          if (isSpace(code)) continue
          if (code !== OPEN_BRACKET) throw new ArraySyntaxError(this.#line, 'a JSON array must start with "["')
          this.#state = 'first'
          continue
        case 'first':
        case 'next':
          if (isSpace(code)) continue
          if (code === CLOSE_BRACKET) {
            if (this.#state === 'next') throw new ArraySyntaxError(this.#line, 'a "," before "]" leaves an empty element')
            this.#state = 'done'
            continue
          }
          if (code === COMMA) throw new ArraySyntaxError(this.#line, 'an empty element (",," or "[,")')
          // The first character of an element: re-read it in the 'element' state.
          this.#state = 'element'
          this.#startLine = this.#line
          segment = i
          i--
          continue
        case 'done':
          if (isSpace(code)) continue
          throw new ArraySyntaxError(this.#line, 'unexpected text after the closing "]" of the JSON array')
      }
    }
    if (this.#state === 'element') this.#parts.push(text.slice(segment < 0 ? 0 : segment))
    return elements
  }

  /** Call at end of input: throws when the array is not closed. */
  end(): void {
    if (this.#state !== 'done') {
      throw new ArraySyntaxError(this.#line, 'unexpected end of input: the JSON array is not closed with "]"')
    }
  }

  #finish(text: string, segment: number, end: number): ArrayElement {
    this.#parts.push(text.slice(segment < 0 ? 0 : segment, end))
    const element = { text: this.#parts.join(''), line: this.#startLine, index: this.#index++ }
    this.#parts = []
    return element
  }
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09
}
