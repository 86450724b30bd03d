import { PriceClientError, isRetried, type NodeFailure } from './client-errors.js'
import type { ClientSettings } from './client-options.js'
import { FailoverPlan, pause } from './backoff.js'

/** What every read takes besides its parameters. */
export interface ReadOptions {
  /** Stops the read: it rejects with `PRICE_ABORTED`. */
  readonly signal?: AbortSignal
  /**
   * Answered only by a node that has applied this commit position (`minPosition`): a read after a write through
   * another node, or after an update's `position`. A node behind it waits (a bounded time), then another is tried.
   */
  readonly minPosition?: number
}

/** The outcome of one request on one node: its JSON, or why another node should be tried. */
type NodeAnswer = { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly failure: NodeFailure }

/** Where a node said the caller's request itself is wrong: passed to the caller at once, not tried elsewhere. */
class Refused {
  constructor(readonly error: PriceClientError) {}
}

/**
 * GETs `path` (with its query) from the nodes in turn until one answers 200 with JSON, starting at
 * `preferred()`; `answered(index)` is told which one did. A node's 4xx answer (other than 408 and 429) is the
 * caller's error, thrown with the node's code; a lost connection, a timeout or a 5xx moves on to the next node.
 * @throws PriceClientError the node's code; `PRICE_CLIENT_NO_NODE` once every round failed; `PRICE_ABORTED`
 */
export async function readJson(settings: ClientSettings, path: string, options: ReadOptions, preferred: number, answered: (index: number) => void): Promise<unknown> {
  const { signal } = options
  const plan = new FailoverPlan(settings.nodes, settings.retry, settings.random, preferred)
  for (let attempt = plan.next(); attempt !== undefined; attempt = plan.next()) {
    if (attempt.delayMs > 0) await pause(attempt.delayMs, settings.timers, signal)
    throwIfAborted(signal, path)
    const answer = await requestOnce(settings, `${attempt.node}${path}`, attempt.node, options)
    if (answer instanceof Refused) throw answer.error
    if (answer.ok) {
      answered(attempt.index)
      return answer.body
    }
    throwIfAborted(signal, path)
    plan.fail(answer.failure)
  }
  throw plan.noNode(`GET ${path}`)
}

async function requestOnce(settings: ClientSettings, url: string, node: string, options: ReadOptions): Promise<NodeAnswer | Refused> {
  const controller = new AbortController()
  let timedOut = false
  const timer = settings.timers.setTimeout(() => {
    timedOut = true
    controller.abort()
  }, settings.requestTimeoutMs)
  const onAbort = (): void => controller.abort()
  options.signal?.addEventListener('abort', onAbort, { once: true })
  const failed = (code: string, message: string, status?: number): NodeAnswer => ({ ok: false, failure: { node, code, message, ...(status === undefined ? {} : { status }) } })
  try {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (options.minPosition !== undefined) headers['x-min-position'] = String(options.minPosition)
    let res: Response
    let text: string
    try {
      res = await settings.fetch(url, { headers, signal: controller.signal })
      text = await res.text()
    } catch (err) {
      if (timedOut) return failed('PRICE_CLIENT_TIMEOUT', `no answer within ${settings.requestTimeoutMs} ms`)
      return failed('PRICE_CLIENT_NETWORK', describe(err))
    }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      if (res.status === 200) return failed('PRICE_CLIENT_BAD_ANSWER', `answered 200 with a body that is not JSON: ${text.slice(0, 80)}`, 200)
      body = undefined
    }
    if (res.status === 200) return { ok: true, body }
    const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error
    const code = typeof error?.code === 'string' ? error.code : `HTTP_${res.status}`
    const message = typeof error?.message === 'string' ? error.message : `answered ${res.status}`
    if (isRetried(code, res.status)) return failed(code, message, res.status)
    return new Refused(new PriceClientError(code, message, { details: { node, status: res.status } }))
  } finally {
    settings.timers.clearTimeout(timer)
    options.signal?.removeEventListener('abort', onAbort)
  }
}

function throwIfAborted(signal: AbortSignal | undefined, path: string): void {
  if (signal?.aborted === true) throw new PriceClientError('PRICE_ABORTED', `GET ${path} was stopped by its signal`, { cause: signal.reason })
}

/** A fetch failure's message, with the cause's code a Node fetch hides there (ECONNREFUSED, ECONNRESET). */
function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined
  return detail === undefined ? message : `${message} (${detail})`
}
