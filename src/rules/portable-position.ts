/**
 * Portable positions: a commit position and a tag of the replication log's
 * id of the commit there, written `P.tag` (`196.0a3f9c12`). Positions of a
 * cluster's nodes name the same commits, so a watcher can resume on any node
 * after `P`; the tag lets the node check that it holds that very commit at
 * `P`, not another one written there after the log was rebuilt.
 */
import { idTag } from './id-tag.js'

/** The tag of a commit id, FNV-1a over it (id-tag.ts) as 8 lower-case hex digits; none for a commit without one. */
export function tagOf(id: string | undefined): string | undefined {
  return id === undefined ? undefined : idTag(id).toString(16).padStart(8, '0')
}

/** A position and the tag of the commit it names. */
export interface PortablePosition {
  readonly position: number
  readonly tag: string
}

const PORTABLE = /^([0-9]{1,16})\.([0-9a-f]{8})$/

/** `P.tag` read, or `undefined` when the text is not one (or its position is not a safe integer). */
export function parsePortablePosition(text: string): PortablePosition | undefined {
  const match = PORTABLE.exec(text)
  if (match === null) return undefined
  const position = Number(match[1])
  return Number.isSafeInteger(position) ? { position, tag: match[2] as string } : undefined
}

/** A position as an event id: `P.tag` when the commit at `position` has an id (or its tag is given), else the position alone. */
export function portableId(position: number, commit: { readonly tag?: string | undefined; readonly id?: string | undefined }): number | string {
  const tag = commit.tag ?? tagOf(commit.id)
  return tag === undefined ? position : `${position}.${tag}`
}
