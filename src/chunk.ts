// The bytes of a chunk given as a string or a Uint8Array, shared by the body reader (a stream
// standing in for a request in object mode) and the logger (the chunk of a response's end()).
import { isUint8Array } from 'node:util/types'

/**
 * The bytes of `chunk`: a Uint8Array's own (a view, not a copy; isUint8Array also takes one made
 * in another realm), or a string's in `encoding` (UTF-8 when it names none); undefined for
 * anything else.
 */
export function bytesOf (chunk: unknown, encoding?: unknown): Buffer | undefined {
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : 'utf8')
  if (chunk instanceof Uint8Array || isUint8Array(chunk)) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  return undefined
}
