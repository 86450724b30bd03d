/**
 * Checks answers of the load test off the clients' thread, so that parsing
 * a 14 MB range answer does not delay the clients' own reads (and with them
 * every latency measured meanwhile). Gets { id, body, expect } with `body`
 * transferred, answers { id, problem } (problem undefined when the answer
 * has the expected shape).
 */
import { parentPort } from 'node:worker_threads'

parentPort.on('message', ({ id, body, expect }) => {
  let problem
  try {
    problem = check(JSON.parse(Buffer.from(body).toString('utf8')), expect)
  } catch (err) {
    problem = `bad JSON: ${err.message}`
  }
  parentPort.postMessage({ id, problem })
})

/** `expect`: { kind: 'array', min, max, minutes }, { kind: 'object', min, max } or { kind: 'error' } (a JSON error body). */
function check(value, expect) {
  if (expect.kind === 'error') {
    const error = value?.error
    return typeof error?.code === 'string' && typeof error?.message === 'string' ? undefined : 'not a JSON error { error: { code, message } }'
  }
  if (expect.kind === 'array') {
    if (!Array.isArray(value)) return `not an array`
    if (value.length < expect.min || value.length > expect.max) return `${value.length} records, expected ${expect.min}..${expect.max}`
    for (const record of value) {
      const bad = checkRecord(record)
      if (bad !== undefined) return bad
      if (expect.minutes && record.minutes !== Math.floor(record.timestamp / 60_000) % 60) return `minutes ${record.minutes} for ${record.timestamp}`
    }
    return undefined
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object'
  const entries = Object.entries(value)
  if (entries.length < expect.min || entries.length > expect.max) return `${entries.length} symbols, expected ${expect.min}..${expect.max}`
  for (const [symbol, record] of entries) {
    const bad = checkRecord(record)
    if (bad !== undefined) return bad
    if (record.symbol !== symbol) return `record of ${record.symbol} under ${symbol}`
  }
  return undefined
}

function checkRecord(record) {
  if (typeof record !== 'object' || record === null) return 'a record is not an object'
  for (const field of ['id', 'symbol', 'provider', 'providerPublicKey']) {
    if (typeof record[field] !== 'string') return `record field ${field} is ${typeof record[field]}`
  }
  // A RedStone record carries an Arweave signature, an EVM one, or both (the demo's: a lite EVM signature).
  if (!['signature', 'liteEvmSignature', 'evmSignature'].some((field) => typeof record[field] === 'string')) return 'record carries no signature'
  if (typeof record.value !== 'number' || !Number.isSafeInteger(record.timestamp)) return 'record value or timestamp is not a number'
  return undefined
}
