// A raw body is its bytes: no charset, no decoding.
export const RAW_TYPE = 'application/octet-stream'

/** The body as the Buffer it was read into. */
export function parseRaw (body: string | Buffer): unknown {
  return body
}
