import type { Registry } from 'prom-client'
import type { ReadAccess, ReadOutcome } from '../access/read-access.js'

const OUTCOMES: readonly ReadOutcome[] = ['admitted', 'throttled', 'refused']

/**
 * Registers the read-key metrics of a server with read keys:
 *
 * - `price_store_read_requests_total{reader, outcome}`: requests per reader
 *   (each key's id, and `anonymous`) admitted, throttled (429) or refused
 *   (403, outside its scope); the label values are the ids of the keys file
 *   (at most `MAX_READ_KEYS`), so they stay bounded whatever clients send;
 * - `price_store_read_unknown_total`: requests refused 401 (an unknown key,
 *   or none where one is needed), which belong to no reader.
 */
export function registerReadKeyMetrics(registry: Registry, access: ReadAccess): void {
  const metric = (name: string, help: string, values: () => { labels: Record<string, string>; value: number }[]): void => {
    const built = { name, help, type: 'counter', aggregator: 'sum', get: () => ({ ...built, values: values() }) }
    registry.registerMetric(built as never)
  }
  metric('price_store_read_requests_total', 'Read requests per read key (by id) and outcome: admitted, throttled (429) or refused (403).', () =>
    access.readers().flatMap((reader) => OUTCOMES.map((outcome) => ({ labels: { reader: reader.id, outcome }, value: reader.counts[outcome] }))))
  metric('price_store_read_unknown_total', 'Read requests refused 401: an unknown read key, or none where one is needed.', () => [{ labels: {}, value: access.unknownRefused }])
}
