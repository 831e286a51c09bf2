// A text body is its decoded string, in any charset iconv-lite knows.
export const TEXT_TYPE = 'text/plain'

/** The body as the string it was decoded into. */
export function parseText (body: string | Buffer): unknown {
  return body
}
